package planner

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/benchargs"
)

// srtctlBenchmark plans one of srtctl's other benchmark types: the
// client on its node, run as `slurmbench srtctl-bench TYPE` with the
// arguments package benchargs renders from the recipe.
func (b *builder) srtctlBenchmark(bm plan.Benchmark) error {
	r, pl := b.r, b.plan
	rb := r.Benchmark
	node, err := b.benchmarkNode()
	if err != nil {
		return err
	}
	host, port := b.benchFrontend(node)
	tokenizer := "/model"
	if strings.HasPrefix(pl.Model.Source, "hf:") {
		tokenizer = pl.Model.Path
	}
	if bm.Type == "lm-eval" && b.workspace() == "" {
		// srtctl's script runs from the InferenceX checkout's container path.
		return fmt.Errorf("profile %s: paths.workspace (or --workspace / GITHUB_WORKSPACE): required for benchmark.type lm-eval (srtctl's script runs InferenceX's benchmarks/benchmark_lib.sh)", b.p.Path)
	}
	typ, args, err := benchargs.Srtctl(bm.Type, rb, benchargs.Target{Host: host, Port: port, ServedName: pl.Model.ServedName,
		Model: cmp.Or(pl.Model.ServedName, r.Model.Path), Tokenizer: tokenizer, Backend: b.backendType()})
	var fe *benchargs.FieldError
	if errors.As(err, &fe) {
		return b.fail(fe.Field, "%s", fe.Msg)
	}
	if err != nil {
		return err
	}
	dir, results := benchargs.SrtctlOutput(bm.Type)
	s := &plan.SrtctlBenchmark{Type: typ, Args: args, Argv: append([]string{pl.Binary, "srtctl-bench", typ}, args...), Results: results}
	if dir != "" {
		s.ResultDir = filepath.Join(pl.Layout.Logs, dir)
	}
	env := b.benchmarkEnv(false)
	for k, v := range b.p.Env.Set {
		env[k] = v // it runs in the engine container: the cluster's variables win, as for the workers
	}
	if bm.Type == "trace-replay" || bm.Type == "mooncake-router" {
		// srtctl's AIPerf runners: every engine process's metrics, and the
		// aiperf package to install.
		if urls := b.workers().AIPerfMetricsURLs(); len(urls) > 0 {
			env["AIPERF_SERVER_METRICS_URLS"] = strings.Join(urls, ",")
		}
		if rb.AIPerfPackage != "" {
			env["AIPERF_PACKAGE"] = rb.AIPerfPackage
		}
	}
	b.profilingBenchmarkEnv(env, bm.Type)
	bm.Srtctl = s
	bm.ResultDir = s.ResultDir
	pl.Benchmark = bm
	// The tools are the engine image's (sglang, aiperf, python3), so the
	// step runs there; slurmbench's binary reaches it through the run
	// directory's mount.
	b.add(plan.Process{Name: "benchmark", Role: plan.RoleBenchmark, Nodes: []int{node}, Container: true, Mounts: b.mounts(),
		Env: env, Argv: s.Argv, Log: b.logPath("benchmark"), Critical: true, Srun: plan.SrunOptions{Extra: b.srunExtra()}})
	return nil
}

// benchFrontend is the frontend's host and port as the client on node
// reaches it: localhost when they share the node (srtctl always runs the
// client beside the frontend and says localhost), else its address.
func (b *builder) benchFrontend(node int) (string, string) {
	fn, port := b.frontendEndpoint()
	if fn == node {
		return "localhost", strconv.Itoa(port)
	}
	return placeholderIP(fn), strconv.Itoa(port)
}

// dedupeRecipeConcurrencies drops a concurrency the recipe lists again.
// srtctl's sa-bench loop runs it twice and the second run's result file
// (named by the concurrency) replaces the first, so one run leaves the same
// results; the plan says so in a warning. (--conc / CONC_LIST listing one
// twice stays an error: that is a typo of the caller's.)
func (b *builder) dedupeRecipeConcurrencies(concs []int) []int {
	seen := map[int]bool{}
	out := make([]int, 0, len(concs))
	for _, c := range concs {
		if seen[c] {
			b.plan.Recipe.Warnings = append(slices.Clip(b.plan.Recipe.Warnings), fmt.Sprintf(
				"%s: benchmark.concurrencies lists %d twice; srtctl runs it twice and keeps the second result file, slurmbench runs it once",
				b.r.Path, c))
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	return out
}
