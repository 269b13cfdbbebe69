package engine

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// ProfileMode is srtctl's endpoint mode of a worker role.
func ProfileMode(r plan.Role) string {
	if r == plan.RoleAgg {
		return "agg"
	}
	return string(r)
}

// ProfilePhase is the profiling block's phase of a mode (prefill, decode,
// else aggregated).
func ProfilePhase(p *recipe.Profiling, mode string) *recipe.ProfilingPhase {
	switch mode {
	case "prefill":
		return p.Prefill
	case "decode":
		return p.Decode
	}
	return p.Aggregated
}

// ProfileWorkers applies the profiling block to the planned workers:
// srtctl's profiler environment, the nsys wrapper, vLLM's iteration-based
// capture. It returns the plan's profiling block without its triggers (nil
// when the recipe profiles nothing).
func ProfileWorkers(b Builder, backend string) *plan.Profiling {
	r := b.Recipe()
	rp := r.Profiling
	if rp == nil || rp.Type == "" || rp.Type == "none" {
		return nil
	}
	pl := b.Plan()
	prof := &plan.Profiling{Type: rp.Type, Dir: filepath.Join(pl.Layout.Logs, "profiles")}
	nsys := rp.Type == "nsys" || rp.Type == "nsys-time"
	if nsys && backend == "mock" {
		// slurmbench's mock engine runs no CUDA: nothing for nsys to trace,
		// and the test images have no nsys. Its profiling endpoints still
		// answer, so the rest of the profiling flow runs.
		nsys = false
		pl.Recipe.Warnings = append(slices.Clip(pl.Recipe.Warnings), r.Path+": profiling.type "+rp.Type+": the mock engine is not wrapped in nsys (it runs no CUDA)")
	}
	for i := range pl.Processes {
		proc := &pl.Processes[i]
		if proc.Role != plan.RolePrefill && proc.Role != plan.RoleDecode && proc.Role != plan.RoleAgg {
			continue
		}
		mode := ProfileMode(proc.Role)
		for k, v := range profileEnv(r.Profiling, mode, prof.Dir) {
			proc.Env[k] = v
		}
		if nsys {
			var out string
			if backend == "trtllm" {
				// One srun per endpoint: nsys names each rank's file.
				out = "/logs/profiles/" + mode + "/" + plan.HostPlaceholder(proc.Nodes[0]) + "_" + mode + "_w" + strconv.Itoa(proc.Worker) + "_profile_rank%q{SLURM_PROCID}"
			} else {
				out = "/logs/profiles/" + mode + "/" + plan.HostPlaceholder(proc.Nodes[0]) + "_" + mode + "_w" + strconv.Itoa(proc.Worker) + "_profile_gpu" + gpuLabel(proc.GPUs, b.GPUsPerNode())
			}
			proc.Argv = append(nsysPrefix(rp, backend, b.FrontendType(), out), proc.Argv...)
			if backend == "vllm" && rp.Type == "nsys" {
				if ph := ProfilePhase(rp, mode); ph != nil && ph.StartStep != nil && ph.StopStep != nil {
					// vLLM's iteration-based capture (srtctl's build_worker_command).
					cfg, _ := json.Marshal(struct {
						Profiler        string `json:"profiler"`
						DelayIterations int    `json:"delay_iterations"`
						MaxIterations   int    `json:"max_iterations"`
					}{"cuda", *ph.StartStep, max(*ph.StopStep-*ph.StartStep, 0)})
					proc.Argv = append(proc.Argv, "--profiler-config", pyJSONSpacing(string(cfg)))
				}
			}
		}
	}
	return prof
}

// pyJSONSpacing gives compact JSON Python's json.dumps spacing (", ", ": ").
func pyJSONSpacing(s string) string {
	return strings.NewReplacer(`,"`, `, "`, `":`, `": `).Replace(s)
}

// gpuLabel is a worker's CUDA_VISIBLE_DEVICES with "-" for ",": every GPU
// of the node when the process has no slice.
func gpuLabel(gpus []int, gpn int) string {
	if len(gpus) == 0 {
		for g := 0; g < gpn; g++ {
			gpus = append(gpus, g)
		}
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = strconv.Itoa(g)
	}
	return strings.Join(parts, "-")
}

// profileEnv is srtctl's ProfilingConfig.get_env_vars for a worker.
func profileEnv(rp *recipe.Profiling, mode, dir string) map[string]string {
	env := map[string]string{"PROFILING_MODE": mode, "PROFILE_TYPE": rp.Type}
	ph := ProfilePhase(rp, mode)
	key := strings.ToUpper(mode)
	if ph != nil {
		if ph.StartStep != nil {
			env["PROFILE_"+key+"_START_STEP"] = strconv.Itoa(*ph.StartStep)
		}
		if ph.StopStep != nil {
			env["PROFILE_"+key+"_STOP_STEP"] = strconv.Itoa(*ph.StopStep)
		}
	}
	switch {
	case rp.Type == "torch":
		env["SGLANG_TORCH_PROFILER_DIR"] = dir + "/" + mode
	case rp.Type == "nsys-time":
		env["PROFILE_BENCHMARK_DURATION_SECS"] = strconv.Itoa(derefOr(rp.BenchmarkDurationSec, 300))
	case rp.Type == "nsys" && ph != nil && ph.StartStep != nil && ph.StopStep != nil:
		env["TLLM_PROFILE_START_STOP"] = strconv.Itoa(*ph.StartStep) + "-" + strconv.Itoa(*ph.StopStep)
		env["TLLM_LLMAPI_ENABLE_NVTX"] = "1"
	}
	return env
}

// nsysPrefix is srtctl's ProfilingConfig.get_nsys_prefix.
func nsysPrefix(rp *recipe.Profiling, backend, frontend, out string) []string {
	timed := rp.Type == "nsys-time"
	window := func(cmd []string) []string {
		if rp.DelaySecs != nil {
			cmd = append(cmd, "--delay", strconv.Itoa(*rp.DelaySecs))
		}
		if rp.DurationSecs != nil {
			cmd = append(cmd, "--duration", strconv.Itoa(*rp.DurationSecs))
		}
		return cmd
	}
	if backend == "trtllm" {
		cmd := []string{"nsys", "profile", "-t", "cuda,nvtx,ucx", "--sample=none", "--cuda-graph-trace=node"}
		if timed {
			cmd = window(cmd)
		} else {
			cmd = append(cmd, "-c", "cudaProfilerApi", "--capture-range-end", "stop")
		}
		cmd = append(cmd, rp.ExtraNsysArgs...)
		return append(cmd, "--kill", "none", "--wait", "all", "--force-overwrite", "true", "-o", out)
	}
	var cmd []string
	if timed {
		cmd = window([]string{"nsys", "profile", "-t", "cuda,nvtx", "--cuda-graph-trace=node", "--force-overwrite", "true"})
	} else {
		cmd = []string{"nsys", "profile", "-t", "cuda,nvtx", "--cuda-graph-trace=node", "-c", "cudaProfilerApi",
			"--capture-range-end", "stop", "--force-overwrite", "true"}
	}
	cmd = append(cmd, rp.ExtraNsysArgs...)
	if frontend == "dynamo" {
		cmd = append(cmd, "--trace-fork-before-exec=true")
	}
	return append(cmd, "-o", out)
}
