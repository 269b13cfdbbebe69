package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/recipe"
)

func (b *builder) add(proc Process) {
	if proc.Env == nil {
		proc.Env = map[string]string{}
	}
	if proc.Srun.NTasks == 0 {
		proc.Srun.NTasks = len(proc.Nodes)
	}
	b.plan.Processes = append(b.plan.Processes, proc)
}

// addInfra starts NATS and etcd for Dynamo's discovery on the infra node.
func (b *builder) addInfra(node int) {
	nats := firstNonEmpty(b.p.Infra.NATSServer, "nats-server")
	etcd := firstNonEmpty(b.p.Infra.Etcd, "etcd")
	mounts := b.mounts()
	b.add(Process{
		Name: "infra_nats", Role: RoleInfra, Nodes: []int{node}, Container: true, Mounts: mounts,
		Argv:  []string{nats, "-js", "-sd", "/tmp/nats", "-p", strconv.Itoa(portNATS)},
		Ports: map[string]int{"nats": portNATS}, Log: b.logPath("infra_nats"), Critical: true,
		Ready: &Probe{Node: node, Port: portNATS},
	})
	b.add(Process{
		Name: "infra_etcd", Role: RoleInfra, Nodes: []int{node}, Container: true, Mounts: mounts,
		Argv: []string{etcd, "--data-dir", "/tmp/etcd",
			"--listen-client-urls", "http://0.0.0.0:" + strconv.Itoa(portEtcd),
			"--advertise-client-urls", "http://" + placeholderIP(node) + ":" + strconv.Itoa(portEtcd),
			"--listen-peer-urls", "http://0.0.0.0:" + strconv.Itoa(portEtcdPeer)},
		Ports: map[string]int{"etcd": portEtcd}, Log: b.logPath("infra_etcd"), Critical: true,
		Ready: &Probe{Node: node, Port: portEtcd},
	})
}

// addWorkers turns endpoints into one process per node (srtctl's Process),
// with srtctl's ports: HTTP 6100+32·k and bootstrap 7200+k per node for
// leaders, DYN_SYSTEM_PORT from one global counter.
func (b *builder) addWorkers(eps []endpoint) error {
	httpSlot := map[int]int{}      // node → next leader slot
	bootstrapSlot := map[int]int{} // node → next prefill leader slot
	for _, ep := range eps {
		leader := ep.nodes[0]
		httpPort := portWorkerHTTPBase + portWorkerHTTPStride*httpSlot[leader]
		httpSlot[leader]++
		bootstrap := 0
		if ep.role == RolePrefill {
			bootstrap = portBootstrapBase + bootstrapSlot[leader]
			bootstrapSlot[leader]++
		}
		for rank, node := range ep.nodes {
			name := fmt.Sprintf("%s_w%d", ep.role, ep.index)
			if len(ep.nodes) > 1 {
				name = fmt.Sprintf("%s_r%d", name, rank)
			}
			sys := b.sysPort
			b.sysPort++
			w := workerCtx{ep: ep, rank: rank, node: node, leader: leader, httpPort: httpPort, bootstrap: bootstrap, sysPort: sys}
			if rank > 0 {
				w.httpPort = 0 // followers serve no HTTP (srtctl gives them port 0)
			}
			argv, err := b.workerArgv(w)
			if err != nil {
				return err
			}
			ports := map[string]int{"system": sys}
			if w.httpPort != 0 {
				ports["http"] = w.httpPort
			}
			if bootstrap != 0 && rank == 0 {
				ports["bootstrap"] = bootstrap
			}
			proc := Process{
				Name: name, Role: ep.role, Worker: ep.index, Rank: rank, Nodes: []int{node},
				GPUs: ep.gpuSlice(b.gpn), Ports: ports, Container: true, Mounts: b.mounts(),
				Env: b.workerEnv(w), Argv: argv, Log: b.logPath(name), Critical: true,
				Srun: SrunOptions{Extra: b.srunExtra()},
			}
			if b.plan.Dynamo.Install {
				proc.Srun.Export = []string{"ENROOT_REMAP_ROOT=yes"}
			}
			b.add(proc)
		}
	}
	return nil
}

type workerCtx struct {
	ep                           endpoint
	rank, node, leader           int
	httpPort, bootstrap, sysPort int
}

func (w workerCtx) mode() string {
	switch w.ep.role {
	case RolePrefill:
		return "prefill"
	case RoleDecode:
		return "decode"
	}
	return "aggregated"
}

// workerEnv applies srtctl's precedence (srt-slurm.md §2.8), later wins.
func (b *builder) workerEnv(w workerCtx) map[string]string {
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
		env["DYN_LOG"] = "info,dynamo_runtime::pipeline::network::ingress::push_handler=warn"
	}
	var roleEnv recipe.EnvMap
	switch w.ep.role {
	case RolePrefill:
		roleEnv = b.r.Backend.PrefillEnv
	case RoleDecode:
		roleEnv = b.r.Backend.DecodeEnv
	default:
		roleEnv = b.r.Backend.AggregatedEnv
	}
	for k, v := range templated(roleEnv, w.node) {
		env[k] = v
	}
	for k, v := range templated(b.r.Env, w.node) {
		env[k] = v
	}
	if s := w.ep.gpuSlice(b.gpn); s != nil {
		env["CUDA_VISIBLE_DEVICES"] = joinInts(s)
	}
	for k, v := range b.p.Env.Set {
		env[k] = v
	}
	return env
}

// templated substitutes srtctl's {node} and {node_id} in env values.
func templated(m recipe.EnvMap, node int) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m.Strings() {
		v = strings.ReplaceAll(v, "{node}", placeholderHost(node))
		v = strings.ReplaceAll(v, "{node_id}", strconv.Itoa(node))
		out[k] = v
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func (b *builder) engineConfig(w workerCtx) recipe.EngineConfig {
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
	}
	if cfgs == nil {
		return nil
	}
	switch w.ep.role {
	case RolePrefill:
		return cfgs.Prefill
	case RoleDecode:
		return cfgs.Decode
	}
	return cfgs.Aggregated
}

// without returns cfg minus the keys srtctl owns and pops.
func without(cfg recipe.EngineConfig, keys ...string) map[string]recipe.Value {
	out := make(map[string]recipe.Value, len(cfg))
	for k, v := range cfg {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
		delete(out, strings.ReplaceAll(k, "-", "_"))
	}
	return out
}

func (b *builder) workerArgv(w workerCtx) ([]string, error) {
	cfg := b.engineConfig(w)
	m := b.plan.Model
	port := strconv.Itoa(w.httpPort)
	switch b.backendType() {
	case "mock":
		mode := w.mode()
		if mode == "aggregated" {
			mode = "decode" // an aggregated mock worker registers as a full (decode-capable) engine
		}
		argv := []string{b.plan.Binary, "mock-engine", "--mode", mode,
			"--listen", "0.0.0.0:" + port,
			"--frontend", "http://" + placeholderIP(b.headNode) + ":" + strconv.Itoa(portPublicFrontend),
			"--advertise", "http://" + placeholderIP(w.node) + ":" + port,
			"--model", m.ServedName}
		return append(argv, recipe.Flags(without(cfg, "served-model-name"))...), nil
	case "sglang":
		module := "dynamo.sglang"
		if b.frontendType() == "sglang" {
			module = "sglang.launch_server"
		}
		argv := []string{"python3", "-m", module, "--model-path", m.Path, "--served-model-name", m.ServedName,
			"--host", "0.0.0.0", "--port", port, "--nccl-port", strconv.Itoa(portNCCLBase + w.sysPort - portSystemBase),
			"--disaggregation-mode", w.mode()}
		if w.ep.role == RoleAgg {
			argv = argv[:len(argv)-2]
		}
		if w.bootstrap != 0 {
			argv = append(argv, "--disaggregation-bootstrap-port", strconv.Itoa(w.bootstrap))
		}
		if len(w.ep.nodes) > 1 {
			argv = append(argv, "--dist-init-addr", placeholderIP(w.leader)+":"+strconv.Itoa(portDistInit),
				"--nnodes", strconv.Itoa(len(w.ep.nodes)), "--node-rank", strconv.Itoa(w.rank))
		}
		// srtctl hands a host path here; /logs is the same directory inside the container.
		argv = append(argv, "--dump-config-to", "/logs/"+fmt.Sprintf("%s_w%d_r%d", w.ep.role, w.ep.index, w.rank)+"_config.json")
		if module == "dynamo.sglang" {
			argv = append(argv, "--request-plane", b.plan.Dynamo.RequestPlane)
		}
		return append(argv, recipe.Flags(without(cfg, "served-model-name"))...), nil
	case "vllm":
		var argv []string
		if b.frontendType() == "vllm" {
			argv = []string{"vllm", "serve", m.Path, "--served-model-name", m.ServedName, "--port", port}
		} else {
			argv = []string{"python3", "-m", "dynamo.vllm", "--model", m.Path, "--served-model-name", m.ServedName}
			if w.ep.role == RolePrefill {
				argv = append(argv, "--is-prefill-worker")
			}
			argv = append(argv, "--request-plane", b.plan.Dynamo.RequestPlane)
		}
		if len(w.ep.nodes) > 1 {
			argv = append(argv, "--nnodes", strconv.Itoa(len(w.ep.nodes)), "--node-rank", strconv.Itoa(w.rank),
				"--master-addr", placeholderIP(w.leader))
			if w.rank > 0 {
				argv = append(argv, "--headless")
			}
		}
		return append(argv, recipe.Flags(without(cfg, "served-model-name"))...), nil
	case "trtllm":
		cfgFile := filepath.Join(b.plan.Layout.Logs, "trtllm_config_"+w.mode()+".yaml")
		argv := []string{"trtllm-llmapi-launch", "python3", "-m", "dynamo.trtllm", "--model-path", m.Path,
			"--served-model-name", m.ServedName, "--disaggregation-mode", w.mode(),
			"--extra-engine-args", cfgFile, "--request-plane", b.plan.Dynamo.RequestPlane}
		return argv, nil
	}
	return nil, b.fail("backend.type", "%q has no worker command", b.backendType())
}

// addFrontends places the frontend(s): one on the head at the public port,
// or (Dynamo with enable_multiple_frontends, the default) nginx there and
// routers on the following nodes at the internal port.
func (b *builder) addFrontends(head int) error {
	plan, r := b.plan, b.r
	ft := b.frontendType()
	plan.Backend, plan.Frontend = b.backendType(), ft
	if b.backendType() == "mock" {
		b.add(Process{
			Name: "frontend_0", Role: RoleFrontend, Nodes: []int{head}, Container: true, Mounts: b.mounts(),
			Argv: []string{plan.Binary, "mock-engine", "--mode", "frontend", "--listen", "0.0.0.0:" + strconv.Itoa(portPublicFrontend),
				"--model", plan.Model.ServedName},
			Ports: map[string]int{"http": portPublicFrontend}, Log: b.logPath("frontend_0"), Critical: true,
		})
		return nil
	}
	switch ft {
	case "vllm":
		return nil // vllm serve is the server (aggregated, one worker)
	case "sglang":
		argv := []string{"python3", "-m", "sglang_router.launch_router", "--pd-disaggregation"}
		for _, proc := range plan.Processes {
			if proc.Rank != 0 || proc.Ports["http"] == 0 {
				continue
			}
			url := "http://" + placeholderIP(proc.Nodes[0]) + ":" + strconv.Itoa(proc.Ports["http"])
			switch proc.Role {
			case RolePrefill:
				argv = append(argv, "--prefill", url, strconv.Itoa(proc.Ports["bootstrap"]))
			case RoleDecode:
				argv = append(argv, "--decode", url)
			}
		}
		argv = append(argv, "--host", "0.0.0.0", "--port", strconv.Itoa(portPublicFrontend))
		argv = append(argv, recipe.Flags(r.Frontend.Args)...)
		b.add(Process{Name: "frontend_0", Role: RoleFrontend, Nodes: []int{head}, Container: true, Mounts: b.mounts(),
			Env: templated(r.Frontend.Env, head), Argv: argv, Ports: map[string]int{"http": portPublicFrontend},
			Log: b.logPath("frontend_0"), Critical: true})
		return nil
	}
	// Dynamo.
	multiple := r.Frontend.EnableMultipleFrontends == nil || *r.Frontend.EnableMultipleFrontends
	others := plan.Nodes - 1 - head
	if multiple && others > 0 {
		routers := deref(r.Frontend.NumAdditionalFrontends, 9) + 1
		if routers > others {
			routers = others
		}
		nginxImage := firstNonEmpty(r.Frontend.NginxContainer, "nginx:1.27.4")
		if v, ok := b.p.Containers[nginxImage]; ok {
			nginxImage = v
		}
		b.add(Process{Name: "nginx", Role: RoleNginx, Nodes: []int{head}, Container: true, Image: nginxImage,
			Mounts: b.mounts(), Argv: []string{"nginx", "-c", "/logs/nginx.conf", "-g", "daemon off;"},
			Ports: map[string]int{"http": portPublicFrontend}, Log: b.logPath("nginx"), Critical: true,
			Srun: SrunOptions{Extra: []string{"--container-remap-root"}}})
		for i := 0; i < routers; i++ {
			b.addDynamoFrontend(i, head+1+i, portInternalFrontend)
		}
		return nil
	}
	b.addDynamoFrontend(0, head, portPublicFrontend)
	return nil
}

func (b *builder) addDynamoFrontend(i, node, port int) {
	name := fmt.Sprintf("frontend_%d", i)
	env := map[string]string{
		"ETCD_ENDPOINTS":                 "http://" + placeholderHost(b.infraNode) + ":" + strconv.Itoa(portEtcd),
		"NATS_SERVER":                    "nats://" + placeholderHost(b.infraNode) + ":" + strconv.Itoa(portNATS),
		"DYN_REQUEST_PLANE":              b.plan.Dynamo.RequestPlane,
		"DYN_SKIP_SGLANG_LOG_FORMATTING": "1",
	}
	for k, v := range templated(b.r.Env, node) {
		env[k] = v
	}
	for k, v := range templated(b.r.Frontend.Env, node) {
		env[k] = v
	}
	argv := append([]string{"python3", "-m", "dynamo.frontend", "--http-port=" + strconv.Itoa(port)}, recipe.Flags(b.r.Frontend.Args)...)
	proc := Process{Name: name, Role: RoleFrontend, Worker: i, Nodes: []int{node}, Container: true, Mounts: b.mounts(),
		Env: env, Argv: argv, Ports: map[string]int{"http": port}, Log: b.logPath(name), Critical: true,
		Srun: SrunOptions{MPI: "pmix"}}
	if b.plan.Dynamo.Install {
		proc.Srun.Export = []string{"ENROOT_REMAP_ROOT=yes"}
	}
	b.add(proc)
}

func (b *builder) benchmark() error {
	r, in, plan := b.r, b.in, b.plan
	bm := Benchmark{Type: r.Benchmark.Type, Client: firstNonEmpty(in.BenchClient, b.p.Benchmark.Client)}
	if bm.Type == "" {
		bm.Type = "sa-bench"
	}
	if bm.Client != "native" && bm.Client != "sa-bench" {
		return fmt.Errorf("benchmark client %q is not native or sa-bench", bm.Client)
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
		plan.Benchmark = bm
		return nil
	}
	if bm.ISL <= 0 {
		return b.fail("benchmark.isl", "required (or ISL)")
	}
	if bm.OSL <= 0 {
		return b.fail("benchmark.osl", "required (or OSL)")
	}
	concs := r.Benchmark.Concurrencies.Values
	if len(in.Concurrencies) > 0 {
		concs = in.Concurrencies
	}
	if len(concs) == 0 {
		return b.fail("benchmark.concurrencies", "no concurrency to run (set it in the recipe, or --conc / CONC_LIST)")
	}
	seen := map[int]bool{}
	for _, c := range concs {
		if c <= 0 {
			return fmt.Errorf("concurrency %d: must be positive", c)
		}
		if seen[c] {
			return fmt.Errorf("concurrency %d: listed twice", c)
		}
		seen[c] = true
	}
	bm.RangeRatio = 0.8
	if v := r.Benchmark.RandomRangeRatio; v != nil {
		bm.RangeRatio = *v
	}
	bm.RequestRate = firstNonEmpty(r.Benchmark.ReqRate.Text(), "inf")
	bm.UseChatTemplate = r.Benchmark.UseChatTemplate == nil || *r.Benchmark.UseChatTemplate
	bm.PromptsMult = deref(r.Benchmark.NumPromptsMult, 10)
	bm.WarmupMult = deref(r.Benchmark.NumWarmupMult, 2)
	bm.ResultDir = filepath.Join(plan.Layout.Results, fmt.Sprintf("sa-bench_isl_%d_osl_%d", bm.ISL, bm.OSL))
	for _, c := range concs {
		plan.Points = append(plan.Points, Point{
			Concurrency:   c,
			NumPrompts:    bm.PromptsMult * c,
			WarmupPrompts: bm.WarmupMult * c,
			ResultFile:    RawResultName(c, plan.Mode, plan.GPUs),
		})
	}
	plan.Benchmark = bm
	args := []string{plan.Binary, "bench", "--plan", plan.PlanFile, "--frontend", b.frontendURL()}
	proc := Process{Name: "benchmark", Role: RoleBenchmark, Nodes: []int{b.headNode}, Argv: args,
		Log: b.logPath("benchmark"), Critical: true}
	if bm.Client == "sa-bench" {
		proc.Container, proc.Mounts = true, b.mounts()
	}
	b.add(proc)
	return nil
}

// RawResultName is srtctl's per-point file name (srt-slurm.md §1.4):
// results_concurrency_<C>_gpus_<T>_ctx_<P>_gen_<D>.json, or without the
// split for aggregated topologies.
func RawResultName(conc int, mode string, g GPUCount) string {
	if mode == "aggregated" {
		return fmt.Sprintf("results_concurrency_%d_gpus_%d.json", conc, g.Total)
	}
	return fmt.Sprintf("results_concurrency_%d_gpus_%d_ctx_%d_gen_%d.json", conc, g.Total, g.Prefill, g.Decode)
}

func (b *builder) eval() error {
	in, plan := b.in, b.plan
	if !in.Eval.Run && !in.Eval.Only {
		return nil
	}
	e := Eval{Enabled: true, Only: in.Eval.Only, Client: firstNonEmpty(in.Eval.Client, "native"), Concurrency: in.Eval.Concurrency,
		ResultDir: filepath.Join(plan.Layout.Results, "eval"), DataDir: b.p.Paths.GSM8K}
	if e.Client != "native" && e.Client != "lm-eval" {
		return fmt.Errorf("eval client %q is not native or lm-eval", e.Client)
	}
	if e.Concurrency <= 0 {
		e.Concurrency = 64
	}
	if e.Client == "native" && e.DataDir == "" {
		return fmt.Errorf("profile %s: paths.gsm8k: required for the native gsm8k eval", b.p.Path)
	}
	if e.Client == "native" {
		if _, err := os.Stat(filepath.Join(e.DataDir, "test.jsonl")); err != nil {
			return fmt.Errorf("profile %s: paths.gsm8k: %v (the GSM8K files must be on the shared filesystem the nodes see)", b.p.Path, err)
		}
	}
	plan.Eval = e
	proc := Process{Name: "eval", Role: RoleEval, Nodes: []int{b.headNode},
		Argv: []string{plan.Binary, "eval", "--plan", plan.PlanFile, "--frontend", b.frontendURL()}, Log: b.logPath("eval"), Critical: true}
	if e.Client == "lm-eval" {
		proc.Container, proc.Mounts = true, b.mounts()
	}
	b.add(proc)
	return nil
}

// health sets the gate as srtctl polls it (srt-slurm.md §4).
func (b *builder) health() {
	plan, r, p := b.plan, b.r, b.p
	h := Health{Node: b.headNode, Port: portPublicFrontend, MaxAttempts: 180, IntervalSeconds: 10}
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
	res := r.Resources
	if plan.Mode == "aggregated" {
		h.Decode = deref(res.AggWorkers, 1)
	} else {
		h.Prefill, h.Decode = deref(res.PrefillWorkers, 0), deref(res.DecodeWorkers, 0)
	}
	switch {
	case plan.Frontend == "sglang" && plan.Backend != "mock":
		h.Kind, h.Path = "sglang-router", "/workers"
	case plan.Frontend == "vllm" && plan.Backend != "mock":
		h.Kind, h.Path = "models", "/v1/models"
		for _, proc := range plan.Processes {
			if proc.Role == RoleAgg && proc.Rank == 0 {
				h.Node, h.Port = proc.Nodes[0], proc.Ports["http"]
				break
			}
		}
	default:
		h.Kind, h.Path = "dynamo", "/health"
	}
	plan.Health = h
}

func (b *builder) nodeMap() {
	plan := b.plan
	nodes := make([]Node, plan.Nodes)
	for i := range nodes {
		nodes[i].Index = i
	}
	for _, proc := range plan.Processes {
		for _, n := range proc.Nodes {
			if n < 0 || n >= len(nodes) {
				continue
			}
			nodes[n].Roles = appendUnique(nodes[n].Roles, string(proc.Role))
			if len(proc.GPUs) > 0 {
				nodes[n].GPUs = append(nodes[n].GPUs, proc.Name+":"+joinInts(proc.GPUs))
			} else if proc.Role == RolePrefill || proc.Role == RoleDecode || proc.Role == RoleAgg {
				nodes[n].GPUs = append(nodes[n].GPUs, proc.Name+":all")
			}
		}
	}
	plan.NodeMap = nodes
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// frontendURL is where clients reach the serving endpoint: the public
// frontend on the head node (the agg leader for a direct vllm serve).
func (b *builder) frontendURL() string {
	node, port := b.headNode, portPublicFrontend
	if b.frontendType() == "vllm" && b.backendType() != "mock" {
		for _, proc := range b.plan.Processes {
			if proc.Role == RoleAgg && proc.Rank == 0 {
				node, port = proc.Nodes[0], proc.Ports["http"]
				break
			}
		}
	}
	return "http://" + placeholderIP(node) + ":" + strconv.Itoa(port)
}
