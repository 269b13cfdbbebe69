package infra

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
)

// The vLLM Router (frontend.type vllm-router) as srtctl runs it. Rules
// read in NVIDIA/srt-slurm, the newest stored versions (InferenceX pins
// v2.43.4, 848f72d4, which the index does not hold; these are the latest
// of the 13 stored versions of vllm_router.py, later than the ones still
// reading frontend.orchestrator_placement):
//   - src/srtctl/frontends/vllm_router.py@020fbc6c: executable
//     "vllm-router", P/D flag --vllm-pd-disaggregation, a static P/D
//     prefill advertised with its NIXL side-channel port, the managed
//     --intra-node-data-parallel-size and --worker-startup-timeout-secs,
//     the health expectations, and every worker's /health as a second gate;
//   - src/srtctl/frontends/static_router.py (id 68667360688, the version
//     taking the backend in build_router_command): the argv shape (workers,
//     then --host 0.0.0.0 --port, the managed args, frontend.args with '_'
//     spelled '-' and a list repeating its flag), every process with an
//     HTTP port is a worker, the router's environment is the recipe's
//     environment then frontend.env, its setup is the recipe's setup_script;
//   - src/srtctl/core/health.py@030a673b check_static_router_health: GET
//     /workers, stats.prefill_count against prefill, decode_count +
//     regular_count against decode.
// No code is carried over.

// vllmRouterWorker is one routable worker process: a `vllm serve` with an
// HTTP port.
type vllmRouterWorker struct {
	proc *plan.Process
	url  string
}

func (b *builder) vllmRouterWorkers() []vllmRouterWorker {
	var ws []vllmRouterWorker
	pl := b.Plan()
	for i := range pl.Processes {
		p := &pl.Processes[i]
		if !isWorkerRole(p.Role) || p.Ports["http"] <= 0 {
			continue
		}
		ws = append(ws, vllmRouterWorker{p, "http://" + plan.IPPlaceholder(p.Nodes[0]) + ":" + strconv.Itoa(p.Ports["http"])})
	}
	return ws
}

func isWorkerRole(r plan.Role) bool {
	return r == plan.RolePrefill || r == plan.RoleDecode || r == plan.RoleAgg
}

// vllmRouterExpansion is the Router's one node-local DP expansion factor
// for every URL it is given (node_local_data_parallel_size): 1 when an
// endpoint exposes more than one URL (hybrid-LB pools on later nodes carry
// DP-rank offsets the Router would restart at zero), else each URL's
// local DP ranks — its GPUs over TP × PP when data-parallel-size is above
// 1 and a replica fits the process's GPUs — which must agree.
func (b *builder) vllmRouterExpansion(ws []vllmRouterWorker) (int, error) {
	perEndpoint := map[string]int{}
	for _, w := range ws {
		perEndpoint[fmt.Sprintf("%s/%d", w.proc.Role, w.proc.Worker)]++
	}
	for _, n := range perEndpoint {
		if n > 1 {
			return 1, nil
		}
	}
	sizes := map[int]bool{}
	for _, w := range ws {
		n, err := b.routedDPSize(w.proc)
		if err != nil {
			return 0, err
		}
		sizes[n] = true
	}
	if len(sizes) > 1 {
		var s []string
		for n := range sizes {
			s = append(s, strconv.Itoa(n))
		}
		sort.Strings(s)
		return 0, b.Fail("frontend.type", "vLLM Router requires one uniform node-local DP expansion factor; the workers derive %s", strings.Join(s, ", "))
	}
	for n := range sizes {
		return n, nil
	}
	return 1, nil
}

// routedDPSize is routed_process_dp_size: the Router-visible DP ranks
// behind one worker URL.
func (b *builder) routedDPSize(p *plan.Process) (int, error) {
	cfg := b.EngineConfig(p.Role)
	field := "backend.vllm_config." + modeName(p.Role)
	num := func(key string) (int, error) {
		v, ok := engine.Lookup(cfg, key)
		if !ok {
			return 1, nil
		}
		n, err := strconv.Atoi(v.String())
		if err != nil {
			return 0, b.Fail(field, "%s: %q is not a whole number", key, v.String())
		}
		return n, nil
	}
	dp, err := num("data-parallel-size")
	if err != nil || dp <= 1 {
		return 1, err
	}
	tp, err := num("tensor-parallel-size")
	if err != nil {
		return 0, err
	}
	pp, err := num("pipeline-parallel-size")
	if err != nil {
		return 0, err
	}
	local := len(p.GPUs)
	if local == 0 {
		local = b.GPUsPerNode()
	}
	replica := tp * pp
	if replica > local {
		return 1, nil
	}
	if local%replica != 0 {
		return 0, b.Fail(field, "vLLM Router %s local GPU allocation %d is not divisible by TP*PP=%d", modeName(p.Role), local, replica)
	}
	return local / replica, nil
}

func modeName(r plan.Role) string {
	if r == plan.RoleAgg {
		return "aggregated"
	}
	return string(r)
}

// vllmRouterManagedArgs are get_managed_frontend_args: the derived
// --intra-node-data-parallel-size when above 1 and not in frontend.args
// (which must then agree), and --worker-startup-timeout-secs as the health
// gate's whole wait (max_attempts × interval_seconds) unless frontend.args
// sets it.
func (b *builder) vllmRouterManagedArgs(expansion int) ([]string, error) {
	args := b.Recipe().Frontend.Args
	written := map[string]bool{}
	for k := range args {
		written[strings.ReplaceAll(k, "_", "-")] = true
	}
	var out []string
	conf, ok := args["intra-node-data-parallel-size"]
	if !ok {
		conf, ok = args["intra_node_data_parallel_size"]
	}
	if ok && !conf.IsNull() {
		n, err := strconv.Atoi(conf.String())
		if err != nil {
			return nil, b.Fail("frontend.args.intra-node-data-parallel-size", "must be an integer; got %s", conf.String())
		}
		if n != expansion {
			return nil, b.Fail("frontend.args.intra-node-data-parallel-size", "conflicts with the allocated vLLM topology: configured %d, derived %d", n, expansion)
		}
	} else if expansion > 1 {
		out = append(out, "--intra-node-data-parallel-size", strconv.Itoa(expansion))
	}
	if !written["worker-startup-timeout-secs"] {
		attempts, interval := VLLMRouterHealthWait(b)
		out = append(out, "--worker-startup-timeout-secs", strconv.Itoa(attempts*interval))
	}
	return out, nil
}

// VLLMRouterHealthWait is the health gate's max_attempts and
// interval_seconds: srtctl's defaults (180 × 10 s), the recipe's
// health_check, then the profile's [health], as the gate takes them.
func VLLMRouterHealthWait(b Builder) (attempts, interval int) {
	attempts, interval = 180, 10
	if h := b.Recipe().Health; h != nil {
		if h.MaxAttempts != nil {
			attempts = *h.MaxAttempts
		}
		if h.IntervalSeconds != nil {
			interval = *h.IntervalSeconds
		}
	}
	if p := b.Profile().Health; p.MaxAttempts > 0 {
		attempts = p.MaxAttempts
	}
	if p := b.Profile().Health; p.IntervalSeconds > 0 {
		interval = p.IntervalSeconds
	}
	return attempts, interval
}

// routerArgs renders frontend.args by the static routers' rule of the
// v2.43 era (get_frontend_args_list): in the recipe's order, '_' in a key
// spelled '-', true → --key, false and null → omitted, a list → --key item
// for each item, anything else → --key str(value).
func (b *builder) routerArgs() []string {
	args := b.Recipe().Frontend.Args
	keys := argKeysInOrder(args)
	var out []string
	for _, k := range keys {
		v, flag := args[k], "--"+strings.ReplaceAll(k, "_", "-")
		if v.IsNull() {
			continue
		}
		if t, ok := v.Bool(); ok {
			if t {
				out = append(out, flag)
			}
			continue
		}
		if items, ok := v.List(); ok {
			for _, it := range items {
				out = append(out, flag, it)
			}
			continue
		}
		out = append(out, flag, v.String())
	}
	return out
}

// addVLLMRouter starts router i on node at port: in P/D mode every
// prefill worker URL with its NIXL side-channel port, then every decode
// URL; aggregated workers as --worker-urls.
func (b *builder) addVLLMRouter(i, node, port int) error {
	if bt := b.BackendType(); bt != "vllm" {
		return b.Fail("frontend.type", "vllm-router requires backend.type: vllm (got %q)", bt)
	}
	ws := b.vllmRouterWorkers()
	expansion, err := b.vllmRouterExpansion(ws)
	if err != nil {
		return err
	}
	managed, err := b.vllmRouterManagedArgs(expansion)
	if err != nil {
		return err
	}
	argv := []string{"vllm-router"}
	var prefill, decode, agg []vllmRouterWorker
	for _, w := range ws {
		switch w.proc.Role {
		case plan.RolePrefill:
			prefill = append(prefill, w)
		case plan.RoleDecode:
			decode = append(decode, w)
		default:
			agg = append(agg, w)
		}
	}
	switch {
	case len(prefill) > 0 || len(decode) > 0:
		if len(agg) > 0 {
			return b.Fail("frontend.type", "a static router topology cannot mix aggregated and disaggregated workers")
		}
		if len(prefill) == 0 || len(decode) == 0 {
			return b.Fail("frontend.type", "a disaggregated vllm-router topology needs prefill and decode workers")
		}
		argv = append(argv, "--vllm-pd-disaggregation")
		for _, w := range prefill {
			argv = append(argv, "--prefill", w.url)
			if p := w.proc.Ports["nixl"]; p > 0 {
				argv = append(argv, strconv.Itoa(p))
			}
		}
		for _, w := range decode {
			argv = append(argv, "--decode", w.url)
		}
	case len(agg) > 0:
		argv = append(argv, "--worker-urls")
		for _, w := range agg {
			argv = append(argv, w.url)
		}
	default:
		return b.Fail("frontend.type", "vllm-router has no routable workers")
	}
	argv = append(argv, "--host", "0.0.0.0", "--port", strconv.Itoa(port))
	argv = append(append(argv, managed...), b.routerArgs()...)
	// The recipe's environment, then frontend.env (the router runs the
	// setup script, which reads ROUTER_VERSION from the environment the
	// binder wrote it into), then the profile's fixed variables.
	env := b.RecipeEnv()
	for k, v := range b.Recipe().Frontend.Env.Strings() {
		env[k] = v
	}
	for k, v := range b.Profile().Env.Set {
		env[k] = v
	}
	name := fmt.Sprintf("vllm_router_%d", i)
	b.Add(plan.Process{Name: name, Role: plan.RoleFrontend, Worker: i, Nodes: []int{node}, Container: true, Mounts: b.Mounts(),
		Env: env, Argv: argv, Setup: b.setupSteps(false), Ports: map[string]int{"http": port}, Log: b.LogPath(name), Critical: true})
	return nil
}

// VLLMRouterHealth is what the health gate waits for behind a vllm-router
// (health_expectations, get_backend_health_urls): the Router's /workers
// lists each routable worker once per DP rank it expands the URL into, in
// prefill and in decode (aggregated workers count as decode); then every
// worker's own /health must answer 200, since the Router can count a
// partly started DP pool before each API has bound its port.
func VLLMRouterHealth(b Builder) (prefill, decode int, workers []plan.Probe) {
	ib := &builder{b}
	ws := ib.vllmRouterWorkers()
	expansion, err := ib.vllmRouterExpansion(ws)
	if err != nil {
		expansion = 1 // addVLLMRouter refused the plan already
	}
	for _, w := range ws {
		if w.proc.Role == plan.RolePrefill {
			prefill += expansion
		} else {
			decode += expansion
		}
		probe := plan.Probe{Node: w.proc.Nodes[0], Port: w.proc.Ports["http"], Path: "/health"}
		if !slices.Contains(workers, probe) {
			workers = append(workers, probe)
		}
	}
	return prefill, decode, workers
}
