package planner

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/plan"

	"github.com/slurmbench/slurmbench/inputs/recipe"
)

// profileMode is srtctl's endpoint mode of a worker role.
func profileMode(r plan.Role) string {
	if r == plan.RoleAgg {
		return "agg"
	}
	return string(r)
}

func (b *builder) profilePhase(mode string) *recipe.ProfilingPhase {
	p := b.r.Profiling
	switch mode {
	case "prefill":
		return p.Prefill
	case "decode":
		return p.Decode
	}
	return p.Aggregated
}

// profiling applies the profiling block to the planned workers.
func (b *builder) profiling() error {
	rp := b.r.Profiling
	if rp == nil || rp.Type == "" || rp.Type == "none" {
		return nil
	}
	pl := b.plan
	prof := &plan.Profiling{Type: rp.Type, Dir: filepath.Join(pl.Layout.Logs, "profiles")}
	nsys := rp.Type == "nsys" || rp.Type == "nsys-time"
	if nsys && b.backendType() == "mock" {
		// slurmbench's mock engine runs no CUDA: nothing for nsys to trace,
		// and the test images have no nsys. Its profiling endpoints still
		// answer, so the rest of the profiling flow runs.
		nsys = false
		b.plan.Recipe.Warnings = append(slices.Clip(b.plan.Recipe.Warnings), b.r.Path+": profiling.type "+rp.Type+": the mock engine is not wrapped in nsys (it runs no CUDA)")
	}
	for i := range pl.Processes {
		proc := &pl.Processes[i]
		if proc.Role != plan.RolePrefill && proc.Role != plan.RoleDecode && proc.Role != plan.RoleAgg {
			continue
		}
		mode := profileMode(proc.Role)
		for k, v := range b.profileEnv(mode, prof.Dir) {
			proc.Env[k] = v
		}
		if nsys {
			var out string
			if b.backendType() == "trtllm" {
				// One srun per endpoint: nsys names each rank's file.
				out = "/logs/profiles/" + mode + "/" + placeholderHost(proc.Nodes[0]) + "_" + mode + "_w" + strconv.Itoa(proc.Worker) + "_profile_rank%q{SLURM_PROCID}"
			} else {
				out = "/logs/profiles/" + mode + "/" + placeholderHost(proc.Nodes[0]) + "_" + mode + "_w" + strconv.Itoa(proc.Worker) + "_profile_gpu" + b.gpuLabel(proc.GPUs)
			}
			proc.Argv = append(b.nsysPrefix(out), proc.Argv...)
			if b.backendType() == "vllm" && rp.Type == "nsys" {
				if ph := b.profilePhase(mode); ph != nil && ph.StartStep != nil && ph.StopStep != nil {
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
	if rp.Type != "nsys-time" {
		prof.Trigger = b.profileTriggers(rp.Type)
	}
	pl.Profiling = prof
	return nil
}

// pyJSONSpacing gives compact JSON Python's json.dumps spacing (", ", ": ").
func pyJSONSpacing(s string) string {
	return strings.NewReplacer(`,"`, `, "`, `":`, `": `).Replace(s)
}

// gpuLabel is a worker's CUDA_VISIBLE_DEVICES with "-" for ",": every GPU
// of the node when the process has no slice.
func (b *builder) gpuLabel(gpus []int) string {
	if len(gpus) == 0 {
		for g := 0; g < b.gpn; g++ {
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
func (b *builder) profileEnv(mode, dir string) map[string]string {
	rp := b.r.Profiling
	env := map[string]string{"PROFILING_MODE": mode, "PROFILE_TYPE": rp.Type}
	ph := b.profilePhase(mode)
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

func derefOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// nsysPrefix is srtctl's ProfilingConfig.get_nsys_prefix.
func (b *builder) nsysPrefix(out string) []string {
	rp := b.r.Profiling
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
	if b.backendType() == "trtllm" {
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
	if b.frontendType() == "dynamo" {
		cmd = append(cmd, "--trace-fork-before-exec=true")
	}
	return append(cmd, "-o", out)
}

// profileTriggers are lib/profiling.sh's start_all_profiling requests: one
// per logical worker leader whose phase has a step range, to Dynamo's
// /engine/start_profile or SGLang's /start_profile.
func (b *builder) profileTriggers(typ string) []plan.ProfileTrigger {
	start, stop := "/start_profile", "/stop_profile"
	eps := b.logicalEndpoints()
	switch {
	case b.backendType() == "mock":
		// slurmbench's mock engine serves SGLang's profiling endpoints on
		// its HTTP port, whatever the frontend.
		eps = nil
		for _, p := range b.plan.Processes {
			if p.Rank == 0 && (p.Role == plan.RolePrefill || p.Role == plan.RoleDecode || p.Role == plan.RoleAgg) && p.Ports["http"] > 0 {
				eps = append(eps, logicalEndpoint{p.Role, p.Nodes[0], p.Ports["http"]})
			}
		}
	case b.frontendType() == "dynamo":
		start, stop = "/engine/start_profile", "/engine/stop_profile"
	case b.frontendType() == "sglang":
	default:
		return nil // lib/profiling.sh refuses other frontends
	}
	activities := []string{"CUDA_PROFILER"}
	if typ == "torch" {
		activities = []string{"CPU", "GPU"}
	}
	var out []plan.ProfileTrigger
	for _, e := range eps {
		mode := profileMode(e.role)
		ph := b.profilePhase(mode)
		if ph == nil || ph.StartStep == nil || ph.StopStep == nil || *ph.StopStep-*ph.StartStep <= 0 {
			continue // lib/profiling.sh skips an empty step range
		}
		body, _ := json.Marshal(struct {
			OutputDir  string   `json:"output_dir"`
			StartStep  int      `json:"start_step"`
			NumSteps   int      `json:"num_steps"`
			Activities []string `json:"activities"`
		}{"/logs/profiles/" + mode, *ph.StartStep, *ph.StopStep - *ph.StartStep, activities})
		out = append(out, plan.ProfileTrigger{Role: e.role, URL: "http://" + placeholderIP(e.node) + ":" + strconv.Itoa(e.port),
			StartPath: start, StopPath: stop, Body: string(body)})
	}
	return out
}

// profilingBenchmarkEnv adds srtctl's benchmark profiling variables
// (_get_benchmark_profiling_env) to a benchmark script's environment.
// srtctl starts from them and lays everything else over them, so a
// variable already set wins.
func (b *builder) profilingBenchmarkEnv(out map[string]string, benchType string) {
	rp := b.r.Profiling
	if rp == nil || rp.Type == "" || rp.Type == "none" {
		return
	}
	env := map[string]string{}
	defer func() {
		for k, v := range env {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}()
	env["PROFILE_TYPE"] = rp.Type
	for _, ph := range []struct {
		key string
		c   *recipe.ProfilingPhase
	}{{"PREFILL", rp.Prefill}, {"DECODE", rp.Decode}, {"AGG", rp.Aggregated}} {
		if ph.c == nil {
			continue
		}
		if ph.c.StartStep != nil {
			env["PROFILE_"+ph.key+"_START_STEP"] = strconv.Itoa(*ph.c.StartStep)
		}
		if ph.c.StopStep != nil {
			env["PROFILE_"+ph.key+"_STOP_STEP"] = strconv.Itoa(*ph.c.StopStep)
		}
	}
	if rp.Type == "torch" {
		env["SGLANG_TORCH_PROFILER_DIR"] = "/logs/profiles"
	}
	ips := map[plan.Role][]string{}
	eps := map[plan.Role][]string{}
	for _, e := range b.logicalEndpoints() {
		ips[e.role] = append(ips[e.role], placeholderIP(e.node))
		eps[e.role] = append(eps[e.role], placeholderIP(e.node)+":"+strconv.Itoa(e.port))
	}
	for _, r := range []struct {
		role plan.Role
		key  string
	}{{plan.RolePrefill, "PREFILL"}, {plan.RoleDecode, "DECODE"}, {plan.RoleAgg, "AGG"}} {
		if len(ips[r.role]) > 0 {
			env["PROFILE_"+r.key+"_IPS"] = strings.Join(ips[r.role], ",")
			env["PROFILE_"+r.key+"_ENDPOINTS"] = strings.Join(eps[r.role], ",")
		}
	}
	switch benchType {
	case "sa-bench", "sglang-bench", "trace-replay":
		node, port := b.frontendEndpoint()
		env["PROFILE_OUTPUT_DIR"] = "/logs/profiles"
		env["BENCH_MODEL_NAME"] = b.plan.Model.ServedName
		env["HEAD_NODE"] = placeholderHost(node)
		env["HEAD_PORT"] = strconv.Itoa(port)
		env["PROFILE_WORKER_PORT"] = strconv.Itoa(portWorkerHTTPBase)
	}
	if b.backendType() == "trtllm" {
		env["PROFILING_BACKEND"] = "trtllm"
	}
}
