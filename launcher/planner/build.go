package planner

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/enroot/oci"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
	"github.com/slurmbench/slurmbench/launcher/planner/hostsetup"
	"github.com/slurmbench/slurmbench/launcher/planner/infra"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// Inputs are everything a plan is computed from. Flag and environment
// fallbacks are applied by the caller; here every value is final.
type Inputs struct {
	Profile *profile.Profile
	Recipe  *recipe.Recipe
	// RunID names the run directory; it must be unique per run.
	RunID string
	// Binary is the absolute path of the running slurmbench binary; the plan
	// names its copy inside the run directory.
	Binary string
	// Overrides from flags or the InferenceX workflow's environment.
	Concurrencies []int // CONC_LIST
	// EnvConc is the submitting environment's CONC, which a custom
	// workload reads when nothing sets CONC_LIST (the job inherits it).
	EnvConc     string
	ISL, OSL    int                 // must agree with the recipe when both are set
	Image       string              // IMAGE: replaces model.container
	BenchClient profile.BenchClient // "" = profile default
	// Workspace is the InferenceX checkout (GITHUB_WORKSPACE); it replaces
	// the profile's paths.workspace. Absolute.
	Workspace string
	Eval      EvalInputs
	// ResolveImage turns an image reference into its enroot URI and squash
	// path under squashDir (the enroot package provides it).
	ResolveImage func(ref, squashDir string) (plan.Image, error)
}

// EvalInputs select the gsm8k step (RUN_EVAL, EVAL_ONLY, EVAL_CONC).
type EvalInputs struct {
	Run         bool
	Only        bool
	Concurrency int
	// Concurrencies is EVAL_CONC's whole list when it has more than one
	// value; Concurrency is then its first.
	Concurrencies []int
	Client        profile.EvalClient // "" = native
}

// Fixed ports, srtctl's, so results and logs line up with its runs
// (docs/plan-format.md).
const (
	portPublicFrontend   = plan.PortPublicFrontend
	portInternalFrontend = infra.PortInternalFrontend
	portNATS             = infra.PortNATS
	portEtcd             = infra.PortEtcd
	portEtcdPeer         = infra.PortEtcdPeer
	portWorkerHTTPBase   = 6100 // + 32·k per node
	portWorkerHTTPStride = 32
	portBootstrapBase    = 7200                    // + k per node, prefill only
	portSystemBase       = engine.PortSystemBase   // + global process counter
	portKVEventsBase     = engine.PortKVEventsBase // + a global counter (KV-event publishers)
)

// Build computes and validates the plan. Errors name the field at fault.
func Build(in Inputs) (*plan.Plan, error) {
	p, r := in.Profile, in.Recipe
	if p == nil || r == nil {
		return nil, errors.New("plan: profile and recipe are required")
	}
	if err := rundir.CheckID(in.RunID); err != nil {
		return nil, err
	}
	if in.Workspace != "" && !filepath.IsAbs(in.Workspace) {
		return nil, fmt.Errorf("workspace %q is not absolute", in.Workspace)
	}
	if !filepath.IsAbs(in.Binary) {
		return nil, fmt.Errorf("binary path %q is not absolute", in.Binary)
	}
	b := &builder{in: in, p: p, r: r}
	return b.build()
}

type builder struct {
	in   Inputs
	p    *profile.Profile
	r    *recipe.Recipe
	plan *plan.Plan
	gpn  int
	// sysPort is srtctl's global DYN_SYSTEM_PORT counter.
	sysPort int
	// firstWorkerNode is the first of the worker nodes, which follow a
	// dedicated infra node.
	firstWorkerNode int
	// leaderKVEvents is each endpoint's leader's KV-events port, by
	// "role/index" (kvbmEnv).
	leaderKVEvents      map[string]int
	infraNode, headNode int
	// apiNode serves the public endpoint (nginx, or the single frontend
	// where frontend.orchestrator_placement puts it).
	apiNode int
	// benchNode is the node a client placed at "head" runs on: the head
	// node, or the node benchmark.client_dedicated_node reserves.
	benchNode int
	// seqStart are the TRT-LLM endpoint workers, in plan order, that
	// backend.sequential_node_start batches.
	seqStart []string
}

func (b *builder) fail(field, format string, args ...any) error {
	return b.r.Errorf(field, format, args...)
}

func (b *builder) build() (*plan.Plan, error) {
	p, r := b.p, b.r
	runDir, err := rundir.Path(p.Paths.RunsDir, b.in.RunID)
	if err != nil {
		return nil, err
	}
	pl := &plan.Plan{
		Version:  plan.PlanVersion,
		Name:     r.Name,
		RunID:    b.in.RunID,
		RunDir:   runDir,
		PlanFile: rundir.PlanPath(runDir),
		Binary:   rundir.BinaryPath(runDir),
		Recipe:   recipeSource(r),
		Profile:  plan.Source{Path: p.Path},
		Runtime:  p.Container.Runtime,
		Owner:    p.Paths.Owner,
		Layout:   rundir.New(runDir),
	}
	if pl.Runtime == profile.RuntimeEnroot {
		pl.Enroot = cmp.Or(p.Container.Enroot, "enroot")
	}
	b.plan = pl
	b.sysPort = portSystemBase

	// GPUs per node: the recipe says what the topology was tuned for; the
	// profile says what the cluster has. They must agree.
	b.gpn = p.Slurm.GPUsPerNode
	if g := r.Resources.GPUsPerNode; g != nil && *g != b.gpn {
		return nil, b.fail("resources.gpus_per_node", "recipe wants %d GPUs per node but profile %s has slurm.gpus_per_node = %d", *g, p.Path, b.gpn)
	}
	pl.GPUsPerNode = b.gpn

	if err := b.model(); err != nil {
		return nil, err
	}
	if err := b.image(); err != nil {
		return nil, err
	}
	b.dynamo()
	if err := b.slurm(); err != nil {
		return nil, err
	}
	if err := b.topology(); err != nil {
		return nil, err
	}
	if err := b.services(); err != nil {
		return nil, err
	}
	if err := b.profiling(); err != nil {
		return nil, err
	}
	if err := b.benchmark(); err != nil {
		return nil, err
	}
	if err := b.eval(); err != nil {
		return nil, err
	}
	if err := b.telemetry(); err != nil {
		return nil, err
	}
	if err := hostsetup.Add(pl, r.HostSetup, p, b.workspace(), b.headNode, b.infraNode); err != nil {
		return nil, err
	}
	b.bashPreamble()
	b.health()
	pl.EnvPassthrough = append([]string(nil), p.Env.Passthrough...)
	sort.Strings(pl.EnvPassthrough)
	pl.EnvPassthroughPrefixes = append([]string(nil), p.Env.PassthroughPrefixes...)
	b.nodeMap()
	return pl, pl.Validate()
}

// bashPreamble runs the cluster's default_bash_preamble (the profile's
// [defaults] bash_preamble: ulimits, cache directories) in bash before the
// command of every containerized step, as srtctl's bash wrapper runs it
// after the environment and before the command (schema.py ClusterConfig
// default_bash_preamble, stored id 71538013475). srtctl drops it for
// sruns that bypass that wrapper, the distroless DCGM exporter's: so does
// this. It runs from a script file in the logs, never a shell string in
// argv, which then execs the command with its arguments as they were.
func (b *builder) bashPreamble() {
	pre := b.p.Defaults.BashPreamble
	if strings.TrimSpace(pre) == "" {
		return
	}
	script := filepath.Join(b.plan.Layout.Logs, "bash_preamble.sh")
	body := "# the cluster's default_bash_preamble, then the step's command (slurmbench)\n" + pre + "\nexec \"$@\"\n"
	for i := range b.plan.Processes {
		proc := &b.plan.Processes[i]
		if !proc.Container || proc.Role == plan.RoleTelemetry || len(proc.Argv) == 0 {
			continue
		}
		proc.Argv = append([]string{"bash", script}, proc.Argv...)
		if proc.Files == nil {
			proc.Files = map[string]string{}
		}
		proc.Files[script] = body
	}
}

func (b *builder) model() error {
	r, p := b.r, b.p
	src := r.Model.Path
	if dir, ok := p.ModelDir(src); ok {
		src = dir
	} else if !strings.HasPrefix(src, "hf:") && !filepath.IsAbs(src) {
		return b.fail("model.path", "%q is not an alias in [models] of %s, an absolute path, or hf:org/name (aliases: %s)",
			src, p.Path, strings.Join(profile.SortedKeys(p.Models), ", "))
	}
	m := plan.Model{Source: src, Path: "/model", Precision: r.Model.Precision}
	if id, ok := strings.CutPrefix(src, "hf:"); ok {
		if id == "" || strings.Count(id, "/") != 1 {
			return b.fail("model.path", "%q is not hf:org/name", src)
		}
		m.Path = id
	}
	if err := b.stageDir(&m); err != nil {
		return err
	}
	m.ServedName = servedModelName(r)
	if m.ServedName == "" {
		// The host directory's name, as srtctl does (not "/model"'s).
		m.ServedName = filepath.Base(strings.TrimPrefix(src, "hf:"))
	}
	b.plan.Model = m
	return nil
}

// servedModelName is srtctl's rule: the engine's served_model_name
// (schema 2's engine-wide knob, srtctl 2.x backend.get_served_model_name),
// else served-model-name from any mode's engine config, else the model
// path's base name (filled by the caller).
func servedModelName(r *recipe.Recipe) string {
	if r.Backend.ServedModelName != "" {
		return r.Backend.ServedModelName
	}
	for _, cfgs := range []*recipe.EngineConfigs{r.Backend.SGLangConfig, r.Backend.VLLMConfig, r.Backend.TRTLLMConfig, r.Backend.MockConfig} {
		if cfgs == nil {
			continue
		}
		for _, c := range []recipe.EngineConfig{cfgs.Prefill, cfgs.Decode, cfgs.Aggregated} {
			for _, k := range []string{"served-model-name", "served_model_name"} {
				if v, ok := c[k]; ok && !v.IsNull() {
					return v.String()
				}
			}
		}
	}
	return ""
}

func (b *builder) image() error {
	r, p := b.r, b.p
	ref, field := r.Model.Container, "model.container"
	if b.in.Image != "" {
		ref, field = b.in.Image, "IMAGE"
	}
	ref, err := p.ContainerRef(ref)
	if err != nil {
		return b.fail(field, "%v", err)
	}
	if strings.ContainsAny(ref, " \t\n\x00") {
		return b.fail(field, "image reference %q contains white space or NUL", ref)
	}
	if strings.HasSuffix(ref, ".sqsh") {
		if p.Container.Runtime == profile.RuntimeOCI {
			return b.fail(field, "%q is a squash file, but container.runtime \"oci\" starts OCI bundles unpacked from a registry image: name the image (REGISTRY/REPOSITORY:TAG[@sha256:…])", ref)
		}
		if !filepath.IsAbs(ref) {
			return b.fail(field, "squash file %q must be an absolute path (or a [containers] alias)", ref)
		}
		b.plan.Image = plan.Image{Squash: ref}
		return nil
	}
	if p.Container.Runtime == profile.RuntimeNone {
		b.plan.Image = plan.Image{Ref: ref}
		return nil
	}
	if b.in.ResolveImage == nil {
		return errors.New("plan: no image resolver")
	}
	img, err := b.in.ResolveImage(ref, p.Paths.SquashDir)
	if err != nil {
		return b.fail(field, "%v", err)
	}
	if p.Container.Runtime == profile.RuntimeOCI {
		// The image's unpacked OCI bundle, in the same shared directory.
		r, err := enroot.ParseRef(img.Ref)
		if err != nil {
			return b.fail(field, "%v", err)
		}
		img.Squash = filepath.Join(p.Paths.SquashDir, oci.BundleName(r))
	}
	b.plan.Image = img
	return nil
}

func (b *builder) dynamo() {
	d := b.r.Dynamo
	install := d.Install == nil || *d.Install
	if b.r.Backend.Type == "mock" || b.frontendType() != "dynamo" && b.r.Backend.Type != "trtllm" || b.frontendType() == "trtllm_serve" {
		install = false
	}
	out := plan.Dynamo{Install: install, Hash: d.Hash, Wheel: d.Wheel, Version: d.Version, RequestPlane: d.RequestPlane, EventPlane: d.EventPlane}
	if s := d.Source; s != nil && d.Hash != "" && s.Git != recipe.DefaultDynamoGit {
		out.Git = s.Git
	}
	if install && d.Hash == "" && d.Wheel == "" && d.Version == "" {
		out.Version = "0.8.0" // srtctl's default
	}
	if d.Hash != "" || d.Wheel != "" {
		out.Version = ""
	}
	if install && d.TopOfTree {
		// srtctl clones HEAD in every container; one build per run keeps
		// every container of the job on the same commit.
		out.TopOfTree, out.Version = b.in.RunID, ""
	}
	if out.RequestPlane == "" {
		out.RequestPlane = "tcp"
	}
	b.plan.Dynamo = out
}

func (b *builder) frontendType() string {
	if t := b.r.Frontend.Type; t != "" {
		return t
	}
	return "dynamo"
}

func (b *builder) backendType() string {
	if t := b.r.Backend.Type; t != "" {
		return t
	}
	return "sglang"
}

func (b *builder) slurm() error {
	r, p := b.r, b.p
	s := plan.Slurm{
		JobName:     r.Name,
		Partition:   cmp.Or(r.Slurm.Partition, p.Slurm.Partition),
		Account:     cmp.Or(r.Slurm.Account, p.Slurm.Account),
		GPUsPerNode: b.gpn,
		Exclusive:   p.Slurm.Exclusive,
		// Where the job reaches each node (the driver asks the nodes).
		NetworkInterface: p.Slurm.NetworkInterface,
		Comment:          "slurmbench:" + b.in.RunID,
		// srtslurm.yaml's use_gpus_per_node_directive: false.
		NoGPUsPerNode: p.Slurm.GPUsPerNodeDirective != nil && !*p.Slurm.GPUsPerNodeDirective,
	}
	tl := cmp.Or(r.Slurm.TimeLimit, p.Slurm.TimeLimit, "04:00:00")
	mins, err := profile.ParseTimeLimit(tl)
	if err != nil {
		field := "slurm.time_limit"
		if r.Slurm.TimeLimit == "" {
			return fmt.Errorf("profile %s: slurm.time_limit: %w", p.Path, err)
		}
		return b.fail(field, "%v", err)
	}
	s.TimeLimitMinutes = mins
	s.Directives = map[string]string{}
	for k, v := range p.Slurm.Directives {
		s.Directives[k] = v
	}
	for k, v := range r.SbatchDirectives {
		s.Directives[k] = v.Text()
	}
	if len(s.Directives) == 0 {
		s.Directives = nil
	}
	if err := b.checkDirectives(s.Directives); err != nil {
		return err
	}
	b.plan.Slurm = s
	return nil
}

func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// topology sizes the allocation and lays out every process.
func (b *builder) topology() error {
	r, pl, gpn := b.r, b.plan, b.gpn
	res := r.Resources
	var specs []roleSpec
	var workerNodeCount int
	colocate := false
	if res.Disaggregated() {
		pl.Mode = "disaggregated"
		pn, dn := deref(res.PrefillNodes, 0), deref(res.DecodeNodes, 0)
		pw, dw := deref(res.PrefillWorkers, 0), deref(res.DecodeWorkers, 0)
		gp := deref(res.GPUsPerPrefill, 0)
		if gp == 0 {
			gp = pn * gpn / pw
			if gp == 0 {
				return b.fail("resources.prefill_workers", "%d workers on %d node(s) of %d GPUs leaves less than one GPU each", pw, pn, gpn)
			}
		}
		gd := deref(res.GPUsPerDecode, 0)
		if gd == 0 {
			if dn == 0 {
				gd = gp // decode shares prefill's nodes and width (srtctl)
			} else {
				gd = dn * gpn / dw
			}
			if gd == 0 {
				return b.fail("resources.decode_workers", "%d workers on %d node(s) of %d GPUs leaves less than one GPU each", dw, dn, gpn)
			}
		}
		specs = []roleSpec{{plan.RolePrefill, pw, gp}, {plan.RoleDecode, dw, gd}}
		workerNodeCount = pn + dn
		colocate = b.colocate(pw*gp + dw*gd)
		if colocate {
			// srtctl sizes a colocated job by its GPUs, whatever
			// prefill_nodes and decode_nodes say.
			workerNodeCount = (pw*gp + dw*gd + gpn - 1) / gpn
		} else {
			if err := b.fits("prefill", pw, gp, pn); err != nil {
				return err
			}
			if err := b.fits("decode", dw, gd, dn); err != nil && dn > 0 {
				return err
			}
		}
		pl.GPUs = plan.GPUCount{Prefill: pw * gp, Decode: dw * gd}
		pl.GPUs.Total = pl.GPUs.Prefill + pl.GPUs.Decode
	} else {
		pl.Mode = "aggregated"
		an, aw := deref(res.AggNodes, 1), deref(res.AggWorkers, 1)
		ga := deref(res.GPUsPerAgg, 0)
		if ga == 0 {
			ga = an * gpn / aw
			if ga == 0 {
				return b.fail("resources.agg_workers", "%d workers on %d node(s) of %d GPUs leaves less than one GPU each", aw, an, gpn)
			}
		}
		if err := b.fits("agg", aw, ga, an); err != nil {
			return err
		}
		specs = []roleSpec{{plan.RoleAgg, aw, ga}}
		workerNodeCount = an
		pl.GPUs = plan.GPUCount{Agg: aw * ga, Total: aw * ga}
	}
	// Dedicated nodes (srtctl's RuntimeContext node reservation, with
	// benchmark.colocate_with_frontend's default: every dedicated role
	// shares one reserved node). A dedicated infra (NATS/etcd) node comes
	// first and workers follow; a dedicated client node is the last node,
	// never the first (where the batch script runs), and then infra, if
	// dedicated too, shares it.
	infraDedicated := r.Infra.EtcdNATSDedicatedNode && b.needsInfra()
	clientDedicated := r.Benchmark.ClientDedicatedNode
	first := 0
	if infraDedicated && !clientDedicated {
		first = 1
	}
	reserved := 0
	if infraDedicated || clientDedicated {
		reserved = 1
	}
	pl.Nodes = workerNodeCount + reserved
	pl.Slurm.Nodes = pl.Nodes
	if d := b.p.Slurm.SegmentDirective; d != nil && *d {
		// srtctl's job script asks --segment=<total nodes> when
		// srtslurm.yaml leaves use_segment_sbatch_directive true; a
		// segment the profile's directives or the recipe set wins.
		if _, set := pl.Slurm.Directives["segment"]; !set {
			if pl.Slurm.Directives == nil {
				pl.Slurm.Directives = map[string]string{}
			}
			pl.Slurm.Directives["segment"] = strconv.Itoa(pl.Nodes)
		}
	}
	workers := make([]int, workerNodeCount)
	for i := range workers {
		workers[i] = first + i
	}
	eps, err := allocate(workers, gpn, res.SpreadWorkers, colocate, specs)
	if err != nil {
		return b.fail("resources", "%v", err)
	}
	b.noteIdleNodes(workers, eps)
	b.firstWorkerNode = first
	head := workers[0]
	infra, bench := head, head
	switch {
	case clientDedicated:
		bench = pl.Nodes - 1
		if infraDedicated {
			infra = bench
		}
	case infraDedicated:
		infra = 0
	}
	b.infraNode, b.headNode, b.apiNode, b.benchNode = infra, head, head, bench
	if b.needsInfra() {
		b.addInfra(infra)
	}
	if err := b.checkMooncake(); err != nil {
		return err
	}
	b.addMooncake(infra)
	b.addModelDownload(workers[0])
	b.addStageModel(workers)
	b.addImageImports()
	if err := b.addWorkers(eps); err != nil {
		return err
	}
	return b.addFrontends(head)
}

// fits checks that workers × gpus fit the role's nodes.
func (b *builder) fits(role string, workers, gpus, nodes int) error {
	if workers*gpus > nodes*b.gpn {
		return b.fail("resources."+role+"_workers", "%d %s workers × %d GPUs = %d GPUs do not fit %d node(s) × %d GPUs",
			workers, role, gpus, workers*gpus, nodes, b.gpn)
	}
	if gpus > b.gpn && gpus%b.gpn != 0 {
		return b.fail("resources.gpus_per_"+role, "%d GPUs span nodes but are not a multiple of %d GPUs per node", gpus, b.gpn)
	}
	return nil
}

// needsInfra: Dynamo's frontend discovers workers through NATS and etcd;
// the mock engine and the sglang router do not need them.
func (b *builder) needsInfra() bool {
	return b.frontendType() == "dynamo" && b.backendType() != "mock"
}

func (b *builder) logPath(name string) string {
	return filepath.Join(b.plan.Layout.Logs, name+".log")
}

// mounts are every containerized process's mounts: the run directory at
// the same path (so plan paths hold inside), logs at /logs and the model at
// /model as srtctl mounts them, then the profile's and the recipe's.
func (b *builder) mounts() []string {
	pl, p, r := b.plan, b.p, b.r
	m := []string{pl.RunDir + ":" + pl.RunDir, pl.Layout.Logs + ":/logs"}
	if !strings.HasPrefix(pl.Model.Source, "hf:") {
		m = append(m, pl.Model.Source+":/model:ro")
	}
	if pl.Model.Staged != "" {
		// The node-local root (stage_dir's parent, which exists on the
		// nodes) at its own path, so the staged copy is where the host has it.
		root := filepath.Dir(filepath.Dir(pl.Model.Staged))
		m = append(m, root+":"+root)
	}
	if ws := b.workspace(); ws != "" {
		// srtctl mounts $INFMAX_WORKSPACE here in every container; the
		// sa-bench and lm-eval clients run from it.
		m = append(m, ws+":"+plan.WorkspaceMount)
	}
	if p.Paths.Configs != "" {
		// Before the profile's mounts: a volume may mount inside it
		// (InferenceX's dynamo-wheels at /configs/dynamo-wheels).
		m = append(m, p.Paths.Configs+":"+plan.ConfigsMount)
	}
	m = append(m, p.Container.Mounts...)
	m = append(m, r.ExtraMount...)
	for _, h := range profile.SortedKeys(r.ContainerMounts) {
		m = append(m, h+":"+r.ContainerMounts[h])
	}
	return m
}

// workspace is the InferenceX checkout: the run's, else the profile's.
func (b *builder) workspace() string {
	return cmp.Or(b.in.Workspace, b.p.Paths.Workspace)
}

func (b *builder) srunExtra() []string {
	out := append([]string(nil), b.p.Slurm.SrunArgs...)
	for _, k := range profile.SortedKeys(b.r.SrunOptions) {
		if v := b.r.SrunOptions[k].Text(); v != "" {
			out = append(out, "--"+k+"="+v)
		} else {
			out = append(out, "--"+k)
		}
	}
	return out
}

func placeholderHost(n int) string { return plan.HostPlaceholder(n) }
func placeholderIP(n int) string   { return plan.IPPlaceholder(n) }
