// Package fragment composes an InferenceX recipe fragment with its lane's
// shared block and binds one matrix point into the selected variant, on the
// YAML node tree, so every value keeps its line for errors.
//
// The rules are InferenceX's launcher's, read in
// inferencex-e2e/infx/srt_slurm/workload.py@f57e21f1 (compose_recipe,
// check_fragment, merge_blocks, bind_workload, dram_budget, resolve_dram,
// resolve_fabric), single_node.py (select_recipe, as of the version that
// composes and binds before validating: stored id 70886418919) and
// benchmarks/multi_node/srt-slurm-recipes/RECIPES.md § Recipe fragments
// (the version pinning srt-slurm v2.43.4). No code is carried over.
//
// The stages, in the order package recipe runs them:
//
//   - Compose: CheckFragment refuses a fragment that sets a key the binder
//     writes, then the lane's shared block (and, for a power row, the DCGM
//     telemetry block with the cluster's exporter port) is merged under the
//     fragment: mappings merge, anything else replaces, the fragment wins;
//     for a bundle (base: + override_*) under base only.
//   - (package variants selects the variant)
//   - Bind: the point's model, image, precision, identity, lengths,
//     concurrency, KV offloading and DRAM budget, the launcher's AgentX
//     client paths; then Resolve turns whole '@dram.<name>' and
//     '@fabric.<name>' values into the point's budget and the cluster's
//     fabric facts.
//
// Like packages schema2 and variants, it knows YAML nodes only and imports
// nothing of package recipe but yamltree.
package fragment
