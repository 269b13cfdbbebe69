package launch

import "strings"

// The environment contract between InferenceX's benchmark-multinode
// workflow and the job. srtctl's jobs inherit the runner's whole
// environment; slurmbench's job gets only what is named here, so every
// variable InferenceX's in-job scripts read is either passed (a name in
// workflowVars or a prefix in workflowPrefixes), provided by the job itself
// (jobProvidedVars) or withheld on purpose (withheldVars), each with its
// reason. envcontract_test.go reads the scripts in both InferenceX trees
// and fails on a name in none of the three.

// workflowVars are the workflow's non-secret variables passed to the job
// when set.
var workflowVars = []string{
	// The matrix point.
	"MODEL", "MODEL_PREFIX", "FRAMEWORK", "PRECISION", "ISL", "OSL", "SPEC_DECODING", "DISAGG", "IMAGE",
	"RUNNER_TYPE", "RUNNER_NAME", "RESULT_FILENAME", "MAX_MODEL_LEN", "SERVED_MODEL_NAME", "TOKENIZER",
	"IS_MULTINODE", "RECIPE_FINGERPRINT", "ROUTER_METADATA", "KV_P2P_TRANSFER", "TOTAL_CPU_DRAM_GB",
	"PREFILL_HARDWARE", "DECODE_HARDWARE", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT",
	// Topology, as process_result and benchmark_lib read it.
	"PREFILL_NUM_WORKERS", "PREFILL_TP", "PREFILL_EP", "PREFILL_DP_ATTN", "PREFILL_PP_SIZE", "PREFILL_DCP_SIZE", "PREFILL_PCP_SIZE",
	"PREFILL_TP_SIZE", "PREFILL_DP_ATTENTION", "PREFILL_ENABLE_DP", "PREFILL_ENABLE_EP",
	"DECODE_NUM_WORKERS", "DECODE_TP", "DECODE_EP", "DECODE_DP_ATTN", "DECODE_PP_SIZE", "DECODE_DCP_SIZE", "DECODE_PCP_SIZE",
	"DECODE_TP_SIZE", "DECODE_DP_ATTENTION", "DECODE_ENABLE_DP", "DECODE_ENABLE_EP",
	"TP", "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "MODEL_NAME",
	// Evals.
	"RUN_EVAL", "EVAL_ONLY", "EVAL_CONC", "EVAL_CONFIG_FILE", "EVAL_LIMIT", "EVAL_MAX_MODEL_LEN", "EVAL_FRAMEWORK",
	"EVAL_CONCURRENT_REQUESTS", "EVAL_TASKS_DIR", "EVAL_INCLUDE_PATH", "USE_CHAT_TEMPLATE",
	// Speculative decoding (inject_synthetic_acceptance).
	"SYNTHETIC_ACCEPTANCE", "SYNTHETIC_ACCEPTANCE_LENGTH", "NUM_SPEC_TOKENS", "THINKING_MODE",
	// What a custom benchmark (InferenceX's agentic_srt.sh,
	// srt_fixed_sequence.sh) reads from the workflow; the recipe's
	// benchmark.env wins.
	"CONC_LIST", "CONC", "DURATION", "KV_OFFLOADING", "KV_OFFLOAD_BACKEND", "KV_OFFLOAD_BACKEND_METADATA",
	"IS_AGENTIC", "SCENARIO_TYPE", "REQUIRE_POWER", "ENABLE_AGENTX_POWER", "AGENTIC_WARMUP_GRACE_PERIOD",
	"WEKA_LOADER_OVERRIDE", "RANDOM_RANGE_RATIO", "CLIENT_BACKEND",
	// Switches of the recipes' setup scripts (configs/*.sh), run in every
	// worker container.
	"DSV41_BLOCK32_TP", "SGL_DEEP_GEMM_VERSION", "SGLANG_MOONCAKE_OPT_COMPAT", "SGLANG_MOONCAKE_OPT_SRC",
	"INFX_GLM52_HICACHE_PATCH", "INFX_GLM52_NIXL_SYNC_PATCH", "TLLM_NUMA_AWARE_WORKER_AFFINITY", "MOONCAKE_CONFIG_PATH",
}

// workflowPrefixes pass whole families of tool knobs the scripts read with
// defaults (aiperf's and SWE-bench's): a workflow may set any of them.
var workflowPrefixes = []string{"AIPERF_", "SWEBENCH_"}

// jobProvidedVars are set inside the job (by Slurm, the container, the
// shell, or slurmbench's plan for the step), so the runner's value must
// not replace them.
var jobProvidedVars = map[string]string{
	"SLURM_JOB_ID":                      "Slurm sets it in every step",
	"CUDA_VISIBLE_DEVICES":              "Slurm's GPU binding sets it per task",
	"HOME":                              "the container's user's home",
	"TMPDIR":                            "the node's temporary directory, not the runner's",
	"PATH":                              "JobEnv sets the job's own PATH",
	"PPID":                              "shell built-in",
	"SECONDS":                           "shell built-in",
	"PIPESTATUS":                        "shell built-in",
	"BASH_SOURCE":                       "shell built-in",
	"NF":                                "awk's field count inside a script, not an environment read",
	"SRT_FRONTEND_HOST":                 "the benchmark step's environment (plan's benchmarkEnv)",
	"SRT_MEASUREMENT_WINDOW_DIR":        "the benchmark step's environment when telemetry is on (planner's telemetry, as srtctl sets it for every client)",
	"SRT_FRONTEND_PORT":                 "the benchmark step's environment (plan's benchmarkEnv)",
	"SRTCTL_FRONTEND_TYPE":              "the benchmark step's environment (plan's benchmarkEnv)",
	"SRT_PREFILL_ENDPOINTS":             "the custom benchmark's environment (plan's benchmarkEnv)",
	"SRT_DECODE_ENDPOINTS":              "the custom benchmark's environment (plan's benchmarkEnv)",
	"SRT_AGG_ENDPOINTS":                 "the custom benchmark's environment (plan's benchmarkEnv)",
	"RESULT_DIR":                        "the recipe's benchmark.env names it, under /logs",
	"PORT":                              "the frontend's port, from the plan",
	"MODEL_PATH":                        "the model's container path, from the plan's mounts",
	"INFMAX_CONTAINER_WORKSPACE":        "the workspace mount inside the container (plan.WorkspaceMount)",
	"SGLANG_TORCH_PROFILER_DIR":         "set by the plan's profiling block to a path under /logs",
	"VLLM_TORCH_PROFILER_DIR":           "set by the plan's profiling block to a path under /logs",
	"EVAL_RESULT_DIR":                   "benchmark_lib's eval step derives it inside the job",
	"EVAL_BATCHED_CONCS":                "benchmark_lib's own bookkeeping between its functions",
	"EVAL_BATCHED_COMPLETED_CONCS":      "benchmark_lib's own bookkeeping between its functions",
	"EVAL_BATCHED_FAILED_CONCS":         "benchmark_lib's own bookkeeping between its functions",
	"INFERENCEX_LM_EVAL_RUNTIME_READY":  "benchmark_lib's marker that it installed lm-eval in this container",
	"INFERENCEX_SWEBENCH_RUNTIME_READY": "benchmark_lib's marker that it installed SWE-bench in this container",
}

// withheldVars are read by the scripts but deliberately not passed from
// the runner.
var withheldVars = map[string]string{
	"MODAL_TOKEN_ID":          "a secret: name it in the profile's env.passthrough to pass it",
	"MODAL_TOKEN_SECRET":      "a secret: name it in the profile's env.passthrough to pass it",
	"OPENAI_API_KEY":          "a secret: name it in the profile's env.passthrough to pass it",
	"GPU_METRICS_CSV":         "a runner host path read by process_result on the runner after staging, not in the job",
	"POWER_ARTIFACT_DIR":      "a runner host path read by the power aggregator on the runner after staging",
	"POWER_RESULT_ROOT":       "a runner host path read by the power aggregator on the runner after staging",
	"POWER_PRODUCER_SHA":      "read by the power aggregator on the runner; slurmbench writes its own producer sha (docs/power.md)",
	"EFA_DEVS":                "the node's EFA devices, found by the fabric check on the node; the runner's would be wrong",
	"AGENTIC_DIR":             "a container path; benchmark_lib defaults it under the workspace mount, where a runner path does not exist",
	"AGENTIC_OUTPUT_DIR":      "a container path; benchmark_lib defaults it under the workspace mount, where a runner path does not exist",
	"PYTHONPATH":              "the runner's Python search path would shadow the container's packages",
	"PYTHONPYCACHEPREFIX":     "a runner host path",
	"CARGO_BUILD_JOBS":        "sized for the runner's cores, not the node's; the setup script picks its own",
	"RUSTFLAGS":               "the runner's compiler flags would break builds inside the container",
	"CARGO_ENCODED_RUSTFLAGS": "the runner's compiler flags would break builds inside the container",
}

func hasAnyPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
