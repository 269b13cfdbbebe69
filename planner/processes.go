package planner

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/plan"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/inputs/recipe"
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

// engine is one backend's worker launch, srtctl's backends/<type>.py. The
// generic code lays out endpoints, ports and the environment every worker
// shares; the engine adds its program, flags, environment, files and srun
// options.
type engine interface {
	// perEndpoint reports an MPI launch: one srun spans all nodes of an
	// endpoint with one task per GPU (TRT-LLM), instead of one per node.
	perEndpoint() bool
	// visibleDevices reports whether a worker on part of a node gets its GPU
	// slice as CUDA_VISIBLE_DEVICES (vLLM takes --device-ids instead).
	visibleDevices() bool
	// worker completes proc, the process of w.
	worker(w *workerCtx, proc *plan.Process) error
}

func (b *builder) engine() (engine, error) {
	switch b.backendType() {
	case "sglang":
		return &sglangEngine{b: b}, nil
	case "vllm":
		return newVLLMEngine(b), nil
	case "trtllm":
		return &trtllmEngine{b: b}, nil
	case "mock":
		return &mockEngine{b: b}, nil
	case "mocker":
		return &mockerEngine{b: b}, nil
	}
	return nil, b.fail("backend.type", "%q has no worker command", b.backendType())
}

// workerCtx is one node process of an endpoint (srtctl's Process), or the
// leader's for an MPI launch, with srtctl's ports: HTTP 6100+32·k per node
// for leaders, bootstrap 7200+k per leader node for prefill endpoints,
// DYN_SYSTEM_PORT from one global counter.
type workerCtx struct {
	ep                 endpoint
	rank, node, leader int
	// httpPort is 0 on followers (srtctl passes --port 0 there).
	// bootstrap is the prefill endpoint's, on every node process of it
	// (srtctl's endpoints_to_processes allocates it once per endpoint and
	// gives it to each), on the leader only for per-GPU DP ranks.
	httpPort, bootstrap, sysPort int
	// gpus is the process's own GPU when it runs one GPU of the endpoint
	// (a per-GPU DP rank); nil = the endpoint's slice.
	gpus []int
	// kvEvents is the KV-events port srtctl allocates the process (the
	// engine sets it), whether or not the engine publishes there.
	kvEvents int
}

func (w *workerCtx) mode() string {
	switch w.ep.role {
	case plan.RolePrefill:
		return "prefill"
	case plan.RoleDecode:
		return "decode"
	}
	return "aggregated"
}

// srtctlMode is the mode as srtctl names it in files and flags ("agg").
func (w *workerCtx) srtctlMode() string {
	if w.ep.role == plan.RoleAgg {
		return "agg"
	}
	return w.mode()
}

func (w *workerCtx) multiNode() bool { return len(w.ep.nodes) > 1 }

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
	for _, check := range []func() error{b.checkInfra, b.checkSetupScript, b.prepareDynamo, b.checkKVEvents, b.checkBackendFields} {
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
		perGPU := false
		if l, ok := eng.(interface{ perGPU(plan.Role) bool }); ok {
			perGPU = l.perGPU(ep.role)
		}
		if perGPU {
			// One process per GPU, each its own DP rank, in node then GPU
			// order (srtctl's deprecated per_gpu vLLM layout).
			for _, node := range ep.nodes {
				for _, g := range ep.gpuList(b.gpn) {
					w := &workerCtx{ep: ep, rank: len(ranks), node: node, leader: leader, sysPort: b.sysPort, gpus: []int{g}}
					b.sysPort++
					if w.rank == 0 {
						w.httpPort, w.bootstrap = httpPort, bootstrap
					}
					ranks = append(ranks, w)
				}
			}
		}
		for rank, node := range ep.nodes {
			if perGPU {
				break
			}
			w := &workerCtx{ep: ep, rank: rank, node: node, leader: leader, sysPort: b.sysPort, bootstrap: bootstrap}
			b.sysPort++
			if rank == 0 {
				w.httpPort = httpPort
			}
			ranks = append(ranks, w)
		}
		if eng.perEndpoint() {
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
				name = fmt.Sprintf("%s_r%d", name, w.rank)
			}
			proc, err := b.workerProcess(eng, w, name, []int{w.node})
			if err != nil {
				return err
			}
			b.add(proc)
		}
	}
	return b.sequentialStart()
}

func (b *builder) workerProcess(eng engine, w *workerCtx, name string, nodes []int) (plan.Process, error) {
	ports := map[string]int{"system": w.sysPort}
	if w.httpPort != 0 {
		ports["http"] = w.httpPort
	}
	if w.bootstrap != 0 {
		ports["bootstrap"] = w.bootstrap
	}
	proc := plan.Process{
		Name: name, Role: w.ep.role, Worker: w.ep.index, Rank: w.rank, Nodes: nodes,
		GPUs: w.gpuSlice(b.gpn), Ports: ports, Container: true, Mounts: b.engineMounts(),
		Env: b.workerEnv(w, !eng.perEndpoint()), Log: b.logPath(name), Critical: true,
		Srun: plan.SrunOptions{Extra: b.srunExtra()},
	}
	if s := w.gpuSlice(b.gpn); s != nil && eng.visibleDevices() {
		proc.Env["CUDA_VISIBLE_DEVICES"] = plan.JoinInts(s)
	}
	if err := eng.worker(w, &proc); err != nil {
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
		env["DYN_SYSTEM_PORT"] = strconv.Itoa(w.sysPort)
		env["DYN_REQUEST_PLANE"] = b.plan.Dynamo.RequestPlane
		env["DYN_SKIP_SGLANG_LOG_FORMATTING"] = "1"
		if ep := b.plan.Dynamo.EventPlane; ep != "" {
			env["DYN_EVENT_PLANE"] = ep
		}
		env["DYN_LOG"] = "info,dynamo_runtime::pipeline::network::ingress::push_handler=warn"
	}
	fill := func(v string) string { return v }
	if perNode {
		fill = func(v string) string { return b.templated(v, w.node) }
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

// pop removes keys (in either spelling, '-' or '_') from cfg and returns
// the first value found.
func pop(cfg map[string]recipe.Value, keys ...string) (recipe.Value, bool) {
	var found recipe.Value
	ok := false
	for _, k := range keys {
		for _, spelling := range []string{k, strings.ReplaceAll(k, "-", "_")} {
			if v, has := cfg[spelling]; has {
				if !ok {
					found, ok = v, true
				}
				delete(cfg, spelling)
			}
		}
	}
	return found, ok
}

// lookup returns a key's value in either spelling without removing it.
func lookup(cfg map[string]recipe.Value, key string) (recipe.Value, bool) {
	for _, spelling := range []string{key, strings.ReplaceAll(key, "-", "_")} {
		if v, ok := cfg[spelling]; ok && !v.IsNull() {
			return v, true
		}
	}
	return recipe.Value{}, false
}

// intValue is a config value as a whole number (def when absent).
func intValue(cfg map[string]recipe.Value, key string, def int) (int, error) {
	v, ok := lookup(cfg, key)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v.String())
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a whole number", key, v.String())
	}
	return n, nil
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
	bm.RequestRate = plan.FirstNonEmpty(r.Benchmark.ReqRate.Text(), "inf")
	bm.UseChatTemplate = r.Benchmark.UseChatTemplate == nil || *r.Benchmark.UseChatTemplate
	bm.PromptsMult = deref(r.Benchmark.NumPromptsMult, 10)
	bm.WarmupMult = deref(r.Benchmark.NumWarmupMult, 2)
	bm.ResultDir = filepath.Join(pl.Layout.Results, results.ConfigName(bm.ISL, bm.OSL))
	for _, c := range concs {
		name, err := pl.ResultFile(c)
		if err != nil {
			return err
		}
		pl.Points = append(pl.Points, plan.Point{
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

// kvEventsDefaults are an engine's --kv-events-config defaults (srtctl's
// get_kv_events_config_for_mode), in order.
type kvEventsDefaults []pyField

var (
	sglangKVEventsDefaults = kvEventsDefaults{{"publisher", scalar("!!str", "zmq")}, {"topic", scalar("!!str", "kv-events")}}
	vllmKVEventsDefaults   = append(append(kvEventsDefaults{}, sglangKVEventsDefaults...), pyField{"enable_kv_cache_events", scalar("!!bool", "true")})
)

// checkKVEvents refuses a backend.kv_events_config srtctl's schema would
// not take: true/false/null, or a mapping of prefill, decode and
// aggregated to true/false/null or a mapping.
func (b *builder) checkKVEvents() error {
	raw := b.r.Backend.KVEventsConfig
	if raw == nil || raw.Node == nil {
		return nil
	}
	const field = "backend.kv_events_config"
	if bt := b.backendType(); bt != "sglang" && bt != "vllm" {
		return b.fail(field, "srtctl's %s backend has no KV events config (sglang and vllm do)", bt)
	}
	n := raw.Node
	switch {
	case n.Kind == yaml.ScalarNode && (n.Tag == "!!bool" || n.Tag == "!!null"):
		return nil
	case n.Kind != yaml.MappingNode:
		return b.fail(field, "%q: want true, false or a mapping of prefill/decode/aggregated", n.Value)
	}
	fields, _ := mappingFields(n)
	for _, f := range fields {
		switch f.key {
		case "prefill", "decode", "aggregated":
		default:
			return b.fail(field, "%q: not a mode (prefill, decode, aggregated)", f.key)
		}
		v := f.value
		if !(v.Kind == yaml.MappingNode || v.Kind == yaml.ScalarNode && (v.Tag == "!!bool" || v.Tag == "!!null")) {
			return b.fail(field+"."+f.key, "%q: want true, false or a mapping", v.Value)
		}
		if v.Kind == yaml.MappingNode {
			if _, err := pyJSONObject(0, mustFields(v)); err != nil {
				return b.fail(field+"."+f.key, "%v", err)
			}
		}
	}
	return nil
}

func mustFields(n *yaml.Node) []pyField {
	f, _ := mappingFields(n)
	return f
}

// kvEventsFlag is srtctl's --kv-events-config for w's mode, publishing on
// port: true enables the defaults for prefill and decode only; a mapping
// names each mode (true, or keys merged over the defaults); the endpoint is
// set last. nil when the mode publishes nothing.
func (b *builder) kvEventsFlag(w *workerCtx, port int, defaults kvEventsDefaults) ([]string, error) {
	raw := b.r.Backend.KVEventsConfig
	if raw == nil || raw.Node == nil {
		return nil, nil
	}
	var modeCfg *yaml.Node
	n := raw.Node
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		if on, _ := strconv.ParseBool(strings.ToLower(n.Value)); !on || w.ep.role == plan.RoleAgg {
			return nil, nil
		}
		modeCfg = scalar("!!bool", "true")
	case n.Kind == yaml.MappingNode:
		key := w.mode() // prefill, decode, aggregated
		for _, f := range mustFields(n) {
			if f.key == key {
				modeCfg = f.value
			}
		}
	}
	if modeCfg == nil {
		return nil, nil
	}
	fields := append([]pyField(nil), defaults...)
	switch {
	case modeCfg.Kind == yaml.MappingNode:
		for _, f := range mustFields(modeCfg) {
			fields = setField(fields, f)
		}
	case modeCfg.Tag == "!!bool":
		if on, _ := strconv.ParseBool(strings.ToLower(modeCfg.Value)); !on {
			return nil, nil
		}
	default:
		return nil, nil
	}
	fields = setField(fields, pyField{"endpoint", scalar("!!str", "tcp://*:"+strconv.Itoa(port))})
	out, err := pyJSONObject(0, fields)
	if err != nil {
		return nil, b.fail("backend.kv_events_config", "%v", err)
	}
	return []string{"--kv-events-config", out}, nil
}

// setField replaces a key in place (Python's dict update keeps its
// position) or appends it.
func setField(fields []pyField, f pyField) []pyField {
	for i := range fields {
		if fields[i].key == f.key {
			fields[i].value = f.value
			return fields
		}
	}
	return append(fields, f)
}
