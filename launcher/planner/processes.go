package planner

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/results"
)

func (b *builder) add(proc plan.Process) {
	if proc.Env == nil {
		proc.Env = map[string]string{}
	}
	if proc.Srun.NTasks == 0 {
		proc.Srun.NTasks = len(proc.Nodes)
	}
	b.plan.Processes = append(b.plan.Processes, proc)
}

// workerCtx is one worker process as the builder lays it out: what its
// engine sees, and the endpoint it belongs to.
type workerCtx struct {
	engine.Worker
	ep endpoint
	// gpus is the process's own GPU when it runs one GPU of the endpoint
	// (a per-GPU DP rank); nil = the endpoint's slice.
	gpus []int
}

// gpuSlice is the process's CUDA_VISIBLE_DEVICES list (nil = whole node).
func (w *workerCtx) gpuSlice(gpn int) []int {
	if w.gpus != nil {
		return w.gpus
	}
	return w.ep.gpuSlice(gpn)
}

// addWorkers turns endpoints into processes: one per node (srtctl's
// Process), or one per endpoint for an MPI launch.
func (b *builder) addWorkers(eps []endpoint) error {
	for _, check := range []func() error{b.checkInfra, b.checkSetupScript, b.prepareDynamo, b.checkKVEvents, b.checkBackendFields, b.checkTRTLLMServe} {
		if err := check(); err != nil {
			return err
		}
	}
	eng, err := b.engine()
	if err != nil {
		return err
	}
	httpSlot := map[int]int{}      // node → next leader slot
	bootstrapSlot := map[int]int{} // node → next prefill leader slot
	for _, ep := range eps {
		leader := ep.nodes[0]
		httpPort := portWorkerHTTPBase + portWorkerHTTPStride*httpSlot[leader]
		httpSlot[leader]++
		bootstrap := 0
		if ep.role == plan.RolePrefill {
			bootstrap = portBootstrapBase + bootstrapSlot[leader]
			bootstrapSlot[leader]++
		}
		var ranks []*workerCtx
		perGPU := eng.PerGPU(ep.role)
		if perGPU {
			// One process per GPU, each its own DP rank, in node then GPU
			// order (srtctl's deprecated per_gpu vLLM layout).
			for _, node := range ep.nodes {
				for _, g := range ep.gpuList(b.gpn) {
					w := &workerCtx{Worker: newWorker(ep, len(ranks), node, leader, b.sysPort), ep: ep, gpus: []int{g}}
					b.sysPort++
					if w.Rank == 0 {
						w.HTTPPort, w.Bootstrap = httpPort, bootstrap
					}
					ranks = append(ranks, w)
				}
			}
		}
		for rank, node := range ep.nodes {
			if perGPU {
				break
			}
			w := &workerCtx{Worker: newWorker(ep, rank, node, leader, b.sysPort), ep: ep}
			w.Bootstrap = bootstrap
			b.sysPort++
			if rank == 0 {
				w.HTTPPort = httpPort
			} else if b.routerLocalDP(ep) {
				w.HTTPPort = portWorkerHTTPBase + portWorkerHTTPStride*httpSlot[node]
				httpSlot[node]++
			}
			ranks = append(ranks, w)
		}
		if eng.PerEndpoint() {
			proc, err := b.workerProcess(eng, ranks[0], fmt.Sprintf("%s_w%d", ep.role, ep.index), ep.nodes)
			if err != nil {
				return err
			}
			b.add(proc)
			continue
		}
		for _, w := range ranks {
			name := fmt.Sprintf("%s_w%d", ep.role, ep.index)
			if len(ranks) > 1 {
				name = fmt.Sprintf("%s_r%d", name, w.Rank)
			}
			proc, err := b.workerProcess(eng, w, name, []int{w.Node})
			if err != nil {
				return err
			}
			b.add(proc)
		}
	}
	return b.sequentialStart()
}

func (b *builder) workerProcess(eng engine.Engine, w *workerCtx, name string, nodes []int) (plan.Process, error) {
	ports := map[string]int{"system": w.SysPort}
	if w.HTTPPort != 0 {
		ports["http"] = w.HTTPPort
	}
	if w.Bootstrap != 0 {
		ports["bootstrap"] = w.Bootstrap
	}
	proc := plan.Process{
		Name: name, Role: w.ep.role, Worker: w.ep.index, Rank: w.Rank, Nodes: nodes,
		GPUs: w.gpuSlice(b.gpn), Ports: ports, Container: true, Mounts: b.engineMounts(),
		Env: b.workerEnv(w, !eng.PerEndpoint()), Log: b.logPath(name), Critical: true,
		Srun: plan.SrunOptions{Extra: b.srunExtra()},
	}
	if s := w.gpuSlice(b.gpn); s != nil && eng.VisibleDevices() {
		// srtslurm.yaml's visible_devices_env: ROCm clusters mask by
		// ROCR_VISIBLE_DEVICES alone (the profile's [defaults]).
		proc.Env[b.p.Defaults.VisibleDevices()] = plan.JoinInts(s)
	}
	if err := eng.Complete(&w.Worker, &proc); err != nil {
		return plan.Process{}, err
	}
	b.kvbmEnv(w, &proc)
	if b.backendType() != "mock" {
		proc.Setup = b.setupSteps(b.frontendType() == "dynamo")
		if b.plan.Dynamo.Install {
			// Root in the container for the install (srtctl's choice over
			// --container-remap-root: clusters without it ignore the variable).
			proc.Srun.Export = []string{"ENROOT_REMAP_ROOT=yes"}
		}
	}
	// The profile's fixed variables are the cluster's and win.
	for k, v := range b.p.Env.Set {
		proc.Env[k] = v
	}
	return proc, nil
}

// workerEnv is srtctl's worker environment before the engine's own, in
// this order, later wins: Dynamo's discovery and runtime settings,
// the role's environment, then the recipe's. A launch per node fills in
// {node} and {node_id} in both (srtctl's start_worker); an MPI launch
// over the endpoint's nodes passes them as written (start_endpoint_worker
// formats nothing).
func (b *builder) workerEnv(w *workerCtx, perNode bool) map[string]string {
	env := map[string]string{}
	if b.backendType() != "mock" {
		env["HEAD_NODE_IP"] = placeholderIP(b.headNode)
		if b.needsInfra() {
			env["ETCD_ENDPOINTS"] = "http://" + placeholderHost(b.infraNode) + ":" + strconv.Itoa(portEtcd)
			env["NATS_SERVER"] = "nats://" + placeholderHost(b.infraNode) + ":" + strconv.Itoa(portNATS)
		}
	}
	if b.backendType() != "mock" && b.dynamoWorkerEnv() {
		env["DYN_SYSTEM_PORT"] = strconv.Itoa(w.SysPort)
		env["DYN_REQUEST_PLANE"] = b.plan.Dynamo.RequestPlane
		env["DYN_SKIP_SGLANG_LOG_FORMATTING"] = "1"
		if ep := b.plan.Dynamo.EventPlane; ep != "" {
			env["DYN_EVENT_PLANE"] = ep
		}
		env["DYN_LOG"] = "info,dynamo_runtime::pipeline::network::ingress::push_handler=warn"
	}
	fill := func(v string) string { return v }
	if perNode {
		fill = func(v string) string { return b.templated(v, w.Node) }
	}
	for k, v := range b.roleEnv(w.ep.role).Strings() {
		env[k] = fill(v)
	}
	for k, v := range b.recipeEnv() {
		env[k] = fill(v)
	}
	return env
}

func (b *builder) roleEnv(role plan.Role) recipe.EnvMap {
	switch role {
	case plan.RolePrefill:
		return b.r.Backend.PrefillEnv
	case plan.RoleDecode:
		return b.r.Backend.DecodeEnv
	}
	return b.r.Backend.AggregatedEnv
}

// recipeEnv is the recipe's top-level environment as srtctl's runtime
// holds it, as written: the variables a dynamo.wheel install derives
// (srtctl exports them to every worker and Dynamo frontend), then the
// recipe's. Only a per-node worker launch templates it (workerEnv);
// frontends and the benchmark get it as written.
func (b *builder) recipeEnv() map[string]string {
	env := dynamoWheelEnv(b.plan.Dynamo)
	if env == nil {
		env = map[string]string{}
	}
	for k, v := range b.r.Env.Strings() {
		env[k] = v
	}
	return env
}

// templated substitutes srtctl's {node} (the node's hostname) and
// {node_id} (its index among the job's worker nodes, not counting a
// dedicated infra node before them: srtctl's nodes.worker.index) in an
// environment value of a worker started on node.
func (b *builder) templated(v string, node int) string {
	v = strings.ReplaceAll(v, "{node}", placeholderHost(node))
	return strings.ReplaceAll(v, "{node_id}", strconv.Itoa(node-b.firstWorkerNode))
}

// engineConfig is the role's engine config (a copy the caller may edit).
func (b *builder) engineConfig(role plan.Role) map[string]recipe.Value {
	var cfgs *recipe.EngineConfigs
	switch b.backendType() {
	case "sglang":
		cfgs = b.r.Backend.SGLangConfig
	case "vllm":
		cfgs = b.r.Backend.VLLMConfig
	case "trtllm":
		cfgs = b.r.Backend.TRTLLMConfig
	case "mock":
		cfgs = b.r.Backend.MockConfig
	case "mocker":
		cfgs = b.r.Backend.Mocker.MockerConfig
	}
	var cfg recipe.EngineConfig
	if cfgs != nil {
		switch role {
		case plan.RolePrefill:
			cfg = cfgs.Prefill
		case plan.RoleDecode:
			cfg = cfgs.Decode
		default:
			cfg = cfgs.Aggregated
		}
	}
	out := make(map[string]recipe.Value, len(cfg))
	for k, v := range cfg {
		out[k] = v
	}
	return out
}

func (b *builder) benchmark() error {
	r, in, pl := b.r, b.in, b.plan
	bm := plan.Benchmark{Type: r.Benchmark.Type, Client: cmp.Or(in.BenchClient, b.p.Benchmark.Client, profile.BenchNative)}
	if bm.Type == "" {
		bm.Type = "sa-bench"
	}
	bm.ISL, bm.OSL = deref(r.Benchmark.ISL, 0), deref(r.Benchmark.OSL, 0)
	for _, pair := range []struct {
		name        string
		flag, value int
		field       string
	}{{"ISL", in.ISL, bm.ISL, "benchmark.isl"}, {"OSL", in.OSL, bm.OSL, "benchmark.osl"}} {
		switch {
		case pair.flag != 0 && pair.value != 0 && pair.flag != pair.value:
			return b.fail(pair.field, "recipe says %d but %s is %d", pair.value, pair.name, pair.flag)
		case pair.flag < 0:
			return fmt.Errorf("%s: must be positive, got %d", pair.name, pair.flag)
		}
	}
	if bm.ISL == 0 {
		bm.ISL = in.ISL
	}
	if bm.OSL == 0 {
		bm.OSL = in.OSL
	}
	if in.Eval.Only {
		bm.Type = ""
		pl.Benchmark = bm
		return nil
	}
	if bm.Type == "custom" {
		bm.Client = ""
		return b.customBenchmark(bm)
	}
	if recipe.SrtctlBenchmarkTypes[bm.Type] {
		bm.Client = ""
		return b.srtctlBenchmark(bm)
	}
	if err := b.tokenizerClient(&bm); err != nil {
		return err
	}
	if bm.ISL <= 0 {
		return b.fail("benchmark.isl", "required (or ISL)")
	}
	if bm.OSL <= 0 {
		return b.fail("benchmark.osl", "required (or OSL)")
	}
	concs, field := r.Benchmark.Concurrencies.Values, "benchmark.concurrencies"
	if len(in.Concurrencies) > 0 {
		concs, field = in.Concurrencies, "--conc (CONC_LIST)"
	}
	if len(concs) == 0 {
		return b.fail("benchmark.concurrencies", "no concurrency to run (set it in the recipe, or --conc / CONC_LIST)")
	}
	if field == "benchmark.concurrencies" {
		// The recipe's list was checked when it was read; srtctl runs a
		// concurrency listed twice once.
		concs = b.dedupeRecipeConcurrencies(concs)
	} else {
		if err := recipe.CheckConcurrencies(concs); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
	}
	bm.RangeRatio = 0.8
	if v := r.Benchmark.RandomRangeRatio; v != nil {
		bm.RangeRatio = *v
	}
	bm.RequestRate = cmp.Or(r.Benchmark.ReqRate.Text(), "inf")
	bm.UseChatTemplate = r.Benchmark.UseChatTemplate == nil || *r.Benchmark.UseChatTemplate
	bm.PromptsMult = deref(r.Benchmark.NumPromptsMult, 10)
	bm.WarmupMult = deref(r.Benchmark.NumWarmupMult, 2)
	bm.ResultDir = filepath.Join(pl.Layout.Results, results.ConfigName(bm.ISL, bm.OSL))
	for _, c := range concs {
		name, err := pl.ResultFile(c)
		if err != nil {
			return err
		}
		pl.Points = append(pl.Points, plan.BenchPoint{
			Concurrency:   c,
			NumPrompts:    bm.PromptsMult * c,
			WarmupPrompts: bm.WarmupMult * c,
			ResultFile:    name,
		})
	}
	pl.Benchmark = bm
	args := []string{pl.Binary, "bench", "--plan", pl.PlanFile, "--frontend", b.frontendURL()}
	node, err := b.benchmarkNode()
	if err != nil {
		return err
	}
	proc := plan.Process{Name: "benchmark", Role: plan.RoleBenchmark, Nodes: []int{node}, Argv: args,
		Log: b.logPath("benchmark"), Critical: true, Srun: plan.SrunOptions{Extra: b.srunExtra()}}
	b.slowDown(&proc)
	if bm.Client == profile.BenchSABench {
		// benchmark_serving.py runs in the engine container from the
		// InferenceX workspace.
		if b.workspace() == "" {
			return fmt.Errorf("profile %s: paths.workspace (or --workspace / GITHUB_WORKSPACE): required for the sa-bench client (the InferenceX checkout holding utils/bench_serving)", b.p.Path)
		}
		proc.Container, proc.Mounts = true, b.mounts()
		proc.Argv = append(proc.Argv, "--workspace", plan.WorkspaceMount)
	}
	b.add(proc)
	return nil
}

func (b *builder) eval() error {
	in, pl := b.in, b.plan
	if !in.Eval.Run && !in.Eval.Only {
		return nil
	}
	e := plan.Eval{Enabled: true, Only: in.Eval.Only, Client: cmp.Or(in.Eval.Client, profile.EvalNative), Concurrency: in.Eval.Concurrency,
		ResultDir: filepath.Join(pl.Layout.Results, "eval"), DataDir: b.p.Paths.GSM8K}
	if pe := b.r.PostEval; pe != nil && len(pe.Command) > 0 {
		return b.postEval(e)
	}
	if e.Concurrency <= 0 {
		e.Concurrency = 64
	}
	if len(in.Eval.Concurrencies) > 1 {
		e.Concurrencies = slices.Clone(in.Eval.Concurrencies)
		e.Concurrency = e.Concurrencies[0]
	}
	// Without paths.gsm8k the native eval reads the splits built into the
	// binary (internal/gsm8kdata); a directory given must hold them.
	if e.Client == profile.EvalNative && e.DataDir != "" {
		if _, err := os.Stat(filepath.Join(e.DataDir, "test.jsonl")); err != nil {
			return fmt.Errorf("profile %s: paths.gsm8k: %w (the GSM8K files must be on the shared filesystem the nodes see)", b.p.Path, err)
		}
	}
	pl.Eval = e
	proc := plan.Process{Name: "eval", Role: plan.RoleEval, Nodes: []int{b.headNode},
		Argv: []string{pl.Binary, "eval", "--plan", pl.PlanFile, "--frontend", b.frontendURL()}, Log: b.logPath("eval"), Critical: true}
	if e.Client == profile.EvalLMEval {
		if b.workspace() == "" {
			return fmt.Errorf("profile %s: paths.workspace (or --workspace / GITHUB_WORKSPACE): required for the lm-eval client (the InferenceX checkout holding utils/evals)", b.p.Path)
		}
		proc.Container, proc.Mounts = true, b.mounts()
		proc.Argv = append(proc.Argv, "--workspace", plan.WorkspaceMount)
	}
	b.add(proc)
	return nil
}

// health sets the gate as srtctl polls it (core/health.py).
func (b *builder) health() {
	pl, r, p := b.plan, b.r, b.p
	h := plan.Health{Node: b.apiNode, Port: portPublicFrontend, MaxAttempts: 180, IntervalSeconds: 10}
	if r.Health != nil {
		h.MaxAttempts = deref(r.Health.MaxAttempts, h.MaxAttempts)
		h.IntervalSeconds = deref(r.Health.IntervalSeconds, h.IntervalSeconds)
	} else if d := p.Defaults; d.HealthMaxAttempts > 0 || d.HealthIntervalSeconds > 0 {
		// srtslurm.yaml's default_health_check: the whole block, for a
		// recipe with none (core/config.py@020fbc6c
		// resolve_config_with_defaults).
		h.MaxAttempts = cmp.Or(d.HealthMaxAttempts, h.MaxAttempts)
		h.IntervalSeconds = cmp.Or(d.HealthIntervalSeconds, h.IntervalSeconds)
	}
	if p.Health.MaxAttempts > 0 {
		h.MaxAttempts = p.Health.MaxAttempts
	}
	if p.Health.IntervalSeconds > 0 {
		h.IntervalSeconds = p.Health.IntervalSeconds
	}
	// What the frontend will list: one registration per worker, or per
	// node process for vLLM's data-parallel workers (srt-slurm #242, #327).
	h.Prefill, h.Decode = pl.Registrations()
	switch {
	case pl.Frontend == "sglang" && pl.Backend != "mock":
		h.Kind, h.Path = "sglang-router", "/workers"
	case pl.Frontend == schema2.FrontendSGLangDirect: // probe_direct_server: /health, then /v1/models
		h.Kind, h.Path = "models", "/v1/models"
	case pl.Frontend == engine.FrontendVLLMRouter && pl.Backend != "mock":
		b.vllmRouterHealth(&h)
	case pl.Frontend == "trtllm_serve":
		h.Kind, h.Path = trtllmServeHealth()
	case pl.Frontend == "vllm" && pl.Backend != "mock":
		h.Kind, h.Path = "models", "/v1/models"
		for _, proc := range pl.Processes {
			if proc.Role == plan.RoleAgg && proc.Rank == 0 {
				h.Node, h.Port = proc.Nodes[0], proc.Ports["http"]
				break
			}
		}
	default:
		h.Kind, h.Path = "dynamo", "/health"
	}
	pl.Health = h
}

func (b *builder) nodeMap() {
	pl := b.plan
	nodes := make([]plan.Node, pl.Nodes)
	for i := range nodes {
		nodes[i].Index = i
	}
	for _, proc := range pl.Processes {
		for _, n := range proc.Nodes {
			if n < 0 || n >= len(nodes) {
				continue
			}
			nodes[n].Roles = appendUnique(nodes[n].Roles, string(proc.Role))
			if len(proc.GPUs) > 0 {
				nodes[n].GPUs = append(nodes[n].GPUs, proc.Name+":"+plan.JoinInts(proc.GPUs))
			} else if proc.Role == plan.RolePrefill || proc.Role == plan.RoleDecode || proc.Role == plan.RoleAgg {
				nodes[n].GPUs = append(nodes[n].GPUs, proc.Name+":all")
			}
		}
	}
	pl.NodeMap = nodes
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// frontendURL is where clients reach the serving endpoint.
func (b *builder) frontendURL() string {
	node, port := b.frontendEndpoint()
	return "http://" + placeholderIP(node) + ":" + strconv.Itoa(port)
}
