package planner

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/benchargs"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// profiling applies the profiling block: the engines wrap and configure
// the planned workers (engine.ProfileWorkers); the triggers and the
// benchmark's variables are the builder's.
func (b *builder) profiling() error {
	prof := engine.ProfileWorkers(engineBuilder{b}, b.backendType())
	if prof == nil {
		return nil
	}
	if prof.Type != "nsys-time" {
		prof.Trigger = b.profileTriggers(prof.Type)
	}
	b.plan.Profiling = prof
	return nil
}

// profileTriggers are lib/profiling.sh's start_all_profiling requests: one
// per logical worker leader whose phase has a step range, to Dynamo's
// /engine/start_profile or SGLang's /start_profile.
func (b *builder) profileTriggers(typ string) []plan.ProfileTrigger {
	start, stop := "/start_profile", "/stop_profile"
	eps := b.workers().LogicalEndpoints()
	switch {
	case b.backendType() == "mock":
		// slurmbench's mock engine serves SGLang's profiling endpoints on
		// its HTTP port, whatever the frontend.
		eps = nil
		for _, p := range b.plan.Processes {
			if p.Rank == 0 && (p.Role == plan.RolePrefill || p.Role == plan.RoleDecode || p.Role == plan.RoleAgg) && p.Ports["http"] > 0 {
				eps = append(eps, benchargs.Endpoint{Role: p.Role, Node: p.Nodes[0], Port: p.Ports["http"]})
			}
		}
	case b.frontendType() == "dynamo":
		start, stop = "/engine/start_profile", "/engine/stop_profile"
	case b.frontendType() == "sglang":
	case b.sglangDirect(): // the leader's server on the public port carries SGLang's control routes
	default:
		return nil // lib/profiling.sh refuses other frontends
	}
	activities := []string{"CUDA_PROFILER"}
	if typ == "torch" {
		activities = []string{"CPU", "GPU"}
	}
	var out []plan.ProfileTrigger
	for _, e := range eps {
		mode := engine.ProfileMode(e.Role)
		ph := engine.ProfilePhase(b.r.Profiling, mode)
		if ph == nil || ph.StartStep == nil || ph.StopStep == nil || *ph.StopStep-*ph.StartStep <= 0 {
			continue // lib/profiling.sh skips an empty step range
		}
		body, _ := json.Marshal(struct {
			OutputDir  string   `json:"output_dir"`
			StartStep  int      `json:"start_step"`
			NumSteps   int      `json:"num_steps"`
			Activities []string `json:"activities"`
		}{"/logs/profiles/" + mode, *ph.StartStep, *ph.StopStep - *ph.StartStep, activities})
		out = append(out, plan.ProfileTrigger{Role: e.Role, URL: "http://" + placeholderIP(e.Node) + ":" + strconv.Itoa(e.Port),
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
	for _, e := range b.workers().LogicalEndpoints() {
		ips[e.Role] = append(ips[e.Role], placeholderIP(e.Node))
		eps[e.Role] = append(eps[e.Role], placeholderIP(e.Node)+":"+strconv.Itoa(e.Port))
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
