package planner

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// srtctlBenchOutput is where each type writes under /logs and what it
// leaves there (srtctl's result_dir / BASE_DIR, which srtctl-bench keeps).
var srtctlBenchOutput = map[string]struct {
	dir     string
	results []string
}{
	"mmlu":            {"accuracy", []string{"mmlu_*.json"}},
	"gpqa":            {"accuracy", []string{"gpqa_*.json"}},
	"longbenchv2":     {"accuracy", []string{"longbench_v2_*.json", "*.html"}},
	"gsm8k":           {"accuracy", []string{"gsm8k_*.json", "*.html"}},
	"lm-eval":         {"eval_results", []string{"meta_env.json", "results*.json", "sample*.jsonl"}},
	"router":          {"router-bench", []string{"*"}},
	"trace-replay":    {"artifacts", []string{"*"}},
	"mooncake-router": {"artifacts", []string{"*"}},
	"sglang-bench":    {"", nil},
}

// srtctlBenchmark plans one of srtctl's other benchmark types: the
// positional arguments its runner's build_command hands the type's script
// (srtctl's benchmarks/<type>.py @c88ef731), given to `slurmbench
// srtctl-bench TYPE` (launcher/job/srtctlbench), which runs the same tool
// with them. gsm8k has a type per engine, as srtctl has a script per
// engine.
func (b *builder) srtctlBenchmark(bm plan.Benchmark) error {
	r, pl := b.r, b.plan
	rb := r.Benchmark
	node, err := b.benchmarkNode()
	if err != nil {
		return err
	}
	host, port := b.benchFrontend(node)
	endpoint := "http://" + host + ":" + port
	orInt := func(p *int, def int) string {
		if p == nil || *p == 0 {
			return strconv.Itoa(def)
		}
		return strconv.Itoa(*p)
	}
	optFloat := func(p *float64) string {
		if p == nil {
			return ""
		}
		return pyfloat.Repr(*p)
	}
	tokenizer := "/model"
	if strings.HasPrefix(pl.Model.Source, "hf:") {
		tokenizer = pl.Model.Path
	}
	model := cmp.Or(pl.Model.ServedName, r.Model.Path)
	typ := bm.Type
	var args []string
	switch bm.Type {
	case "mmlu":
		args = []string{endpoint, orInt(rb.NumExamples, 200), orInt(rb.MaxTokens, 2048), orInt(rb.Repeat, 8), orInt(rb.NumThreads, 512)}
	case "gpqa":
		args = []string{endpoint, orInt(rb.NumExamples, 198), orInt(rb.MaxTokens, 32768), orInt(rb.Repeat, 8), orInt(rb.NumThreads, 128)}
	case "longbenchv2":
		examples := ""
		if rb.NumExamples != nil && *rb.NumExamples != 0 {
			examples = strconv.Itoa(*rb.NumExamples)
		}
		args = []string{endpoint, orInt(rb.MaxContextLength, 128000), orInt(rb.NumThreads, 16), orInt(rb.MaxTokens, 16384), examples, strings.Join(rb.Categories, ",")}
	case "gsm8k":
		shots := "5"
		if rb.NumShots != nil {
			shots = strconv.Itoa(*rb.NumShots)
		}
		if b.backendType() == "vllm" {
			temp := "0.0"
			if rb.Temperature != nil {
				temp = pyfloat.Repr(*rb.Temperature)
			}
			typ = "gsm8k-vllm"
			args = []string{"http://" + host, port, pl.Model.ServedName, orInt(rb.NumExamples, 1319), orInt(rb.MaxTokens, 256), shots, temp, orInt(rb.Repeat, 1)}
		} else {
			topK := ""
			if rb.TopK != nil {
				topK = strconv.Itoa(*rb.TopK)
			}
			typ = "gsm8k-sglang"
			args = []string{endpoint, orInt(rb.NumExamples, 1319), orInt(rb.MaxTokens, 16384), orInt(rb.NumThreads, 512), shots, optFloat(rb.Temperature), optFloat(rb.TopP), topK}
		}
	case "lm-eval":
		// The container path of the InferenceX checkout, never the host's.
		if b.workspace() == "" {
			return fmt.Errorf("profile %s: paths.workspace (or --workspace / GITHUB_WORKSPACE): required for benchmark.type lm-eval (srtctl's script runs InferenceX's benchmarks/benchmark_lib.sh)", b.p.Path)
		}
		args = []string{endpoint, plan.WorkspaceMount}
	case "router":
		ratios := "0.1 0.3 0.5 0.7 0.9"
		if rb.PrefixRatios != nil {
			ratios, err = prefixRatios(rb.PrefixRatios)
			if err != nil {
				return b.fail("benchmark.prefix_ratios", "%v", err)
			}
		}
		args = []string{endpoint, orInt(rb.ISL, 14000), orInt(rb.OSL, 200), orInt(rb.NumRequests, 200), orInt(rb.Concurrency, 20), ratios}
	case "sglang-bench":
		// str() of an absent isl/osl is "None" in srtctl; refuse instead
		// of handing the script a word it cannot use.
		if rb.ISL == nil || rb.OSL == nil || !rb.Concurrencies.Set {
			return b.fail("benchmark.isl", "benchmark.type sglang-bench needs isl, osl and concurrencies")
		}
		args = []string{endpoint, strconv.Itoa(*rb.ISL), strconv.Itoa(*rb.OSL), concList(rb.Concurrencies, "x"), cmp.Or(rb.ReqRate.Text(), "inf")}
	case "trace-replay":
		concs := ""
		if rb.Concurrencies.Set {
			concs = concList(rb.Concurrencies, ",")
		}
		args = []string{endpoint, model, rb.TraceFile, concs, orInt(rb.TTFTThresholdMS, 2000), orInt(rb.ITLThresholdMS, 25), tokenizer}
	case "mooncake-router":
		args = []string{endpoint, model, cmp.Or(rb.MooncakeWorkload, "conversation"), orInt(rb.TTFTThresholdMS, 2000), orInt(rb.ITLThresholdMS, 25), tokenizer}
	default:
		return b.fail("benchmark.type", "%q has no srtctl runner", bm.Type)
	}
	if bm.Type == "trace-replay" || bm.Type == "mooncake-router" {
		extra, err := aiperfArgs(rb.AIPerfArgs)
		if err != nil {
			return b.fail("benchmark.aiperf_args", "%v", err)
		}
		args = append(args, extra...)
	}
	out := srtctlBenchOutput[bm.Type]
	s := &plan.SrtctlBenchmark{Type: typ, Args: args, Argv: append([]string{pl.Binary, "srtctl-bench", typ}, args...), Results: out.results}
	if out.dir != "" {
		s.ResultDir = filepath.Join(pl.Layout.Logs, out.dir)
	}
	env := b.benchmarkEnv(false)
	for k, v := range b.p.Env.Set {
		env[k] = v // it runs in the engine container: the cluster's variables win, as for the workers
	}
	if bm.Type == "trace-replay" || bm.Type == "mooncake-router" {
		// srtctl's AIPerf runners: every engine process's metrics, and the
		// aiperf package to install.
		if urls := b.aiperfProcessMetricsURLs(); len(urls) > 0 {
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

// concList is benchmark.concurrencies as srtctl passes it to a script: a
// string as written, a list joined with sep.
func concList(c recipe.Concurrencies, sep string) string {
	if c.Scalar != "" {
		return c.Scalar
	}
	parts := make([]string, len(c.Values))
	for i, v := range c.Values {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, sep)
}

// prefixRatios is router's benchmark.prefix_ratios: a string as written,
// a list of numbers joined with spaces (srtctl's RouterRunner).
func prefixRatios(raw *recipe.Raw) (string, error) {
	n := raw.Node
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, nil
	case yaml.SequenceNode:
		parts := make([]string, 0, len(n.Content))
		for _, item := range n.Content {
			f, err := strconv.ParseFloat(item.Value, 64)
			if err != nil || item.Kind != yaml.ScalarNode {
				return "", fmt.Errorf("%q is not a number", item.Value)
			}
			parts = append(parts, pyfloat.Repr(f))
		}
		return strings.Join(parts, " "), nil
	}
	return "", fmt.Errorf("want a list of numbers or a space-separated string")
}

// aiperfArgs renders benchmark.aiperf_args as srtctl's append_aiperf_args
// does, in the recipe's order: true → --key, false → nothing, anything
// else → --key value.
func aiperfArgs(raw *recipe.Raw) ([]string, error) {
	if raw == nil || raw.Node == nil || raw.Node.Tag == "!!null" {
		return nil, nil
	}
	n := raw.Node
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("want a mapping of aiperf flag → value")
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s: want a scalar value", k)
		}
		switch v.Tag {
		case "!!bool":
			if b, err := strconv.ParseBool(strings.ToLower(v.Value)); err == nil && b {
				out = append(out, "--"+k)
			}
		case "!!float":
			f, err := strconv.ParseFloat(v.Value, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a number", k, v.Value)
			}
			out = append(out, "--"+k, pyfloat.Repr(f))
		case "!!null":
			out = append(out, "--"+k, "None")
		default:
			out = append(out, "--"+k, v.Value)
		}
	}
	return out, nil
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

// aiperfProcessMetricsURLs is AIPERF_SERVER_METRICS_URLS for srtctl's
// AIPerf runners (_get_aiperf_server_metrics_env without the logical-worker
// view): a direct vLLM serve's public port on each agg leader; else every
// engine process's Dynamo system port, followers included; plus the KVBM
// metrics port of prefill and agg leaders; each once, sorted.
func (b *builder) aiperfProcessMetricsURLs() []string {
	set := map[string]bool{}
	workers := func(f func(p plan.Process)) {
		for _, p := range b.plan.Processes {
			if p.Role == plan.RolePrefill || p.Role == plan.RoleDecode || p.Role == plan.RoleAgg {
				f(p)
			}
		}
	}
	if b.frontendType() == "vllm" || b.sglangDirect() {
		workers(func(p plan.Process) {
			if p.Role == plan.RoleAgg && p.Rank == 0 {
				set["http://"+placeholderIP(p.Nodes[0])+":"+strconv.Itoa(portPublicFrontend)+"/metrics"] = true
			}
		})
		if len(set) > 0 {
			return profile.SortedKeys(set)
		}
	}
	workers(func(p plan.Process) {
		if sys := p.Ports["system"]; sys > 0 {
			set["http://"+placeholderIP(p.Nodes[0])+":"+strconv.Itoa(sys)+"/metrics"] = true
		}
	})
	kvbm := b.r.Backend.PrefillEnv.Strings()["DYN_KVBM_METRICS_PORT"]
	if kvbm == "" {
		kvbm = b.r.Backend.AggregatedEnv.Strings()["DYN_KVBM_METRICS_PORT"]
	}
	if kvbm != "" {
		workers(func(p plan.Process) {
			if p.Rank == 0 && (p.Role == plan.RolePrefill || p.Role == plan.RoleAgg) {
				set["http://"+placeholderIP(p.Nodes[0])+":"+kvbm+"/metrics"] = true
			}
		})
	}
	return profile.SortedKeys(set)
}
