// Package enroot names, imports and starts container images with NVIDIA
// enroot, and renders the matching pyxis flags.
//
// Each job in its own file:
//
//   - ref.go: one image reference type for the docker, registry, pyxis and
//     pinned forms used in InferenceX configs (plus absolute .sqsh paths),
//     rendered as the enroot URI, the pyxis --container-image value and the
//     squash file name the InferenceX runners already use for their caches.
//   - import.go: a locked, validated, atomic `enroot import` into a shared
//     squash directory; a reader never sees a half-written file.
//   - node.go: the same on one node, into its own squash directory, as a
//     job step on every node where the cache is node-local.
//   - argv.go: `enroot start` argv and pyxis srun flags, always as argv slices,
//     with environment values kept out of argv.
//   - digest.go: `enroot digest`, so an import of a tag goes by the digest
//     the tag names now, and the sidecar records it.
//   - space.go: an import whose directory filled up names it and the space
//     it had (also for enroot/oci's imports: WatchSpace).
//
// Sites without pyxis run Slurm's own OCI containers instead: package
// enroot/oci imports the same references as OCI bundles (skopeo, umoci)
// and renders srun --container; it shares Ref, the sidecar Manifest and the
// Runner that decides where an import runs.
package enroot
