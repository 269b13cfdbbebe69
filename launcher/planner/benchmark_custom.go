package planner

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/shellwords"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/benchargs"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// customBenchmark plans benchmark.type custom: srtctl's
// CustomBenchmarkRunner, with the command as argv instead of bash -lc.
func (b *builder) customBenchmark(bm plan.Benchmark) error {
	r, pl := b.r, b.plan
	argv, err := shellwords.Split(r.Benchmark.Command)
	var files map[string]string
	if errors.Is(err, shellwords.ErrNeedsShell) {
		// srtctl hands the command to bash -lc; the plan keeps an argv by
		// running the command, verbatim, from a file in the run's logs
		// (mounted at the same path in the container).
		script := filepath.Join(pl.Layout.Logs, "benchmark.command.sh")
		files = map[string]string{script: "# benchmark.command of " + r.Name + ", run as srtctl runs it (bash -l)\n" + strings.TrimSuffix(r.Benchmark.Command, "\n") + "\n"}
		argv, err = []string{"bash", "-l", script}, nil
	}
	if err != nil {
		return b.fail("benchmark.command", "%q %v", r.Benchmark.Command, err)
	}
	if plan.IsShellString(argv) {
		return b.fail("benchmark.command", "%q hands a string to a shell; put the commands in a script and run that", r.Benchmark.Command)
	}
	c := &plan.CustomBenchmark{Command: r.Benchmark.Command, Argv: argv}
	ws := b.workspace()
	if ws == "" && strings.Contains(r.Benchmark.Command, plan.WorkspaceMount) {
		return fmt.Errorf("profile %s: paths.workspace (or --workspace / GITHUB_WORKSPACE): required: benchmark.command runs from %s, the InferenceX checkout (%s)",
			b.p.Path, plan.WorkspaceMount, r.Benchmark.Command)
	}
	mounts := b.mounts()
	c.Script, c.ScriptNote = benchargs.Script(argv, mounts, ws)
	env := b.benchmarkEnv(true)
	b.profilingBenchmarkEnv(env, "custom")
	// It runs in the engine container like the workers (and installs its
	// own dependencies there): the profile's fixed variables are the
	// cluster's and win, as they do for the workers.
	for k, v := range b.p.Env.Set {
		env[k] = v
	}
	var fromFlag bool
	c.Concurrencies, fromFlag = benchargs.CustomConcurrencies(env, b.in.Concurrencies, b.in.EnvConc)
	if fromFlag {
		// --conc given as a flag reaches the workload as CONC_LIST.
		env["CONC_LIST"] = strings.Join(strings.Split(plan.JoinInts(c.Concurrencies), ","), " ")
	}
	c.ResultDir = filepath.Join(pl.Layout.Results, "custom")
	if d := env["RESULT_DIR"]; d != "" {
		if host, ok := benchargs.HostPath(d, mounts); ok {
			c.ResultDir = host
		}
	}
	c.OutputDir = ws
	if d := env["AGENTIC_OUTPUT_DIR"]; d != "" {
		c.OutputDir, _ = benchargs.HostPath(d, mounts)
	}
	bm.Custom = c
	bm.ResultDir = c.ResultDir
	node, err := b.benchmarkNode()
	if err != nil {
		return err
	}
	pl.Benchmark = bm
	proc := plan.Process{Name: "benchmark", Role: plan.RoleBenchmark, Nodes: []int{node}, Container: true, Mounts: mounts,
		Env: env, Argv: argv, Files: files, Log: b.logPath("benchmark"), Critical: true, Srun: plan.SrunOptions{Extra: b.srunExtra()}}
	// srtctl's CustomBenchmarkRunner.get_container_image: the recipe's
	// benchmark.container_image, else the job's image.
	if ci := b.r.Benchmark.ContainerImage; ci != "" {
		image, err := b.p.ContainerRef(ci)
		if err != nil {
			return b.fail("benchmark.container_image", "%v", err)
		}
		proc.Image = image
	}
	b.add(proc)
	return nil
}

// benchmarkNode is where the client runs: benchmark.client_placement, as
// srtctl's placed_node resolves it; "head" is the reserved node when
// benchmark.client_dedicated_node asks for one (srtctl's nodes.bench).
func (b *builder) benchmarkNode() (int, error) {
	if p := b.r.Benchmark.ClientPlacement; p == "" || p == "head" {
		return b.benchNode, nil
	}
	return b.placedNode(b.r.Benchmark.ClientPlacement, "benchmark.client_placement")
}

// benchmarkEnv is srtctl's benchmark environment (_get_benchmark_env):
// the frontend's address, the recipe's environment, and for a custom
// command every logical worker's endpoint and metrics URL; then
// benchmark.env, which wins.
func (b *builder) benchmarkEnv(custom bool) map[string]string {
	node, port := b.frontendEndpoint()
	env := map[string]string{
		"SRTCTL_FRONTEND_TYPE": b.srtctlFrontendType(),
		"SRT_FRONTEND_HOST":    placeholderIP(node),
		"SRT_FRONTEND_PORT":    strconv.Itoa(port),
	}
	if custom {
		eps := b.workers().LogicalEndpoints()
		for _, mode := range []struct {
			role   plan.Role
			prefix string
		}{{plan.RolePrefill, "PREFILL"}, {plan.RoleDecode, "DECODE"}, {plan.RoleAgg, "AGG"}} {
			var ips, hostports []string
			for _, e := range eps {
				if e.Role == mode.role {
					ips = append(ips, placeholderIP(e.Node))
					hostports = append(hostports, placeholderIP(e.Node)+":"+strconv.Itoa(e.Port))
				}
			}
			if len(ips) > 0 {
				env["SRT_"+mode.prefix+"_IPS"] = strings.Join(ips, ",")
				env["SRT_"+mode.prefix+"_ENDPOINTS"] = strings.Join(hostports, ",")
			}
		}
	}
	for k, v := range b.recipeEnv() {
		env[k] = v
	}
	if custom {
		if urls := b.workers().MetricsURLs(); len(urls) > 0 {
			env["AIPERF_SERVER_METRICS_URLS"] = strings.Join(urls, ",")
		}
	}
	for k, v := range b.r.Benchmark.Env.Strings() {
		env[k] = v
	}
	return env
}

// frontendEndpoint is the node and port of the public API (srtctl's
// _public_api_node): the agg leader of a direct vllm serve, else where the
// frontend (or nginx) serves.
func (b *builder) frontendEndpoint() (int, int) {
	node, port := b.apiNode, portPublicFrontend
	if b.frontendType() == "vllm" && b.backendType() != "mock" {
		for _, proc := range b.plan.Processes {
			if proc.Role == plan.RoleAgg && proc.Rank == 0 {
				return proc.Nodes[0], proc.Ports["http"]
			}
		}
	}
	return node, port
}

// workers are the plan's engine processes so far, as package benchargs
// addresses their metrics.
func (b *builder) workers() benchargs.Workers {
	kvbm := b.r.Backend.PrefillEnv.Strings()["DYN_KVBM_METRICS_PORT"]
	if kvbm == "" {
		kvbm = b.r.Backend.AggregatedEnv.Strings()["DYN_KVBM_METRICS_PORT"]
	}
	return benchargs.Workers{Processes: b.plan.Processes, Frontend: b.frontendType(), KVBMPort: kvbm}
}

// tokenizerClient carries the recipe's tokenizer to the plan and picks the
// client that can honour it. The native client sends token-id prompts and
// has no tokenizer to load, so a custom tokenizer or a tokenizer mode runs
// with the sa-bench client (benchmark_serving.py in the engine container),
// whatever client was asked for; ClientReason says so.
func (b *builder) tokenizerClient(bm *plan.Benchmark) error {
	r := b.r.Benchmark
	bm.CustomTokenizer, bm.TokenizerMode = r.CustomTokenizer, r.TokenizerMode
	if bm.CustomTokenizer == "" && bm.TokenizerMode == "" {
		return nil
	}
	bm.Tokenizer = b.plan.Model.Path
	if bm.Client == profile.BenchSABench {
		return nil
	}
	field, value := "benchmark.custom_tokenizer", bm.CustomTokenizer
	if value == "" {
		field, value = "benchmark.tokenizer_mode", bm.TokenizerMode
	}
	bm.ClientReason = fmt.Sprintf("%s %s: the native client has no tokenizer (it sends token ids), so benchmark_serving.py runs instead of the %s client", field, value, bm.Client)
	if b.workspace() == "" {
		return b.fail(field, "%s needs the sa-bench client, which runs from the InferenceX checkout: set paths.workspace in profile %s (or --workspace / GITHUB_WORKSPACE)", value, b.p.Path)
	}
	if rate := cmp.Or(r.ReqRate.Text(), "inf"); rate != "inf" {
		return b.fail(field, "%s needs the sa-bench client, which runs at request rate inf only, but benchmark.req_rate is %s", value, rate)
	}
	bm.Client = profile.BenchSABench
	return nil
}
