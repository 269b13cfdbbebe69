package planner

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shellwords"
	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// The benchmark process is compared with srtctl's for the recipes whose
// benchmark slurmbench runs the way srtctl does: a custom command
// (benchmark.type custom), and SA-Bench with a custom tokenizer, which only
// the sa-bench client (benchmark_serving.py) can load. Plain SA-Bench points
// run slurmbench's own client and are not compared here.

func init() {
	deliberate = append(deliberate, benchmarkDeliberate...)
}

var benchmarkDeliberate = []deliberateDiff{
	{"program", "", func(d parityDiff) bool { return d.proc == "benchmark" && splitsTo(d.srtctl, d.ours) },
		"srtctl hands benchmark.command to `bash -lc`; slurmbench splits it once with a bash parser (mvdan.cc/sh) and runs the words as argv, refusing a command that needs a shell (pipes, lists, expansions), so no login profile is sourced and nothing is re-parsed"},
	{"program", "", func(d parityDiff) bool {
		return d.proc == saBenchProc && d.srtctl == "bash /srtctl-benchmarks/sa-bench/bench.sh" && strings.HasSuffix(d.ours, " bench")
	}, "srtctl runs its sa-bench/bench.sh with positional arguments; slurmbench runs `slurmbench bench --plan`, which reads the same values from the plan (compared argument by argument as bench-arg) and runs benchmark_serving.py per point"},
	{"env", "", func(d parityDiff) bool { return d.proc == saBenchProc && d.ours == "" },
		"srtctl exports the frontend's address and the recipe's environment to bench.sh; slurmbench's bench step is handed the frontend URL and every parameter in the plan, and bench.sh reads none of these variables"},
	{"bench-arg", "endpoint", func(d parityDiff) bool { return samePort(d.srtctl, d.ours) },
		"same port; srtctl's client targets localhost (it assumes the client shares the frontend's node), slurmbench targets the frontend node's address, which also holds when client_placement puts the client elsewhere"},
}

// splitsTo reports whether srtctl's `bash -lc <cmd>` is ours split once.
func splitsTo(srtctl, ours string) bool {
	cmd, ok := strings.CutPrefix(srtctl, "bash -lc ")
	if !ok {
		return false
	}
	argv, err := shellwords.Split(cmd)
	return err == nil && strings.Join(argv, " ") == ours
}

// saBenchProc names the benchmark process in differences when it is the
// sa-bench client rather than a custom command.
const saBenchProc = "benchmark(sa-bench)"

func samePort(a, b string) bool {
	i, j := strings.LastIndex(a, ":"), strings.LastIndex(b, ":")
	return i > 0 && j > 0 && a[i:] == b[j:]
}

// benchmarkCompared reports whether the plan's benchmark is one slurmbench
// runs as srtctl does.
func benchmarkCompared(pl *plan.Plan) bool {
	return pl.Benchmark.Custom != nil || pl.Benchmark.CustomTokenizer != ""
}

// compareBenchmark diffs srtctl's benchmark srun with the plan's benchmark
// process: node, srun options, environment and command.
func compareBenchmark(t *testing.T, argv []string, index map[string]int, pl *plan.Plan, fill func(string) string) []parityDiff {
	t.Helper()
	ref, err := parseSrun(argv, index)
	if err != nil {
		t.Fatalf("parsing the benchmark srun: %v", err)
	}
	var p *plan.Process
	for i := range pl.Processes {
		if pl.Processes[i].Role == plan.RoleBenchmark {
			p = &pl.Processes[i]
		}
	}
	if p == nil {
		return []parityDiff{{proc: "benchmark", kind: "process", key: "missing", srtctl: strings.Join(argv, " ")}}
	}
	var diffs []parityDiff
	name := "benchmark"
	if pl.Benchmark.Custom == nil {
		name = saBenchProc
	}
	add := func(kind, key, srtctl, ours string) {
		diffs = append(diffs, parityDiff{proc: name, kind: kind, key: key, srtctl: srtctl, ours: ours})
	}
	if !reflect.DeepEqual(ref.nodes, p.Nodes) {
		add("srun", "--nodelist", plan.JoinInts(ref.nodes), plan.JoinInts(p.Nodes))
	}
	ours := planSrun(*p)
	for _, k := range profile.SortedKeys(unionKeys(ref.srun, ours)) {
		if ref.srun[k] != ours[k] {
			add("srun", k, ref.srun[k], ours[k])
		}
	}
	parts, err := bashParts(argv[len(argv)-1])
	if err != nil {
		t.Fatalf("parsing the benchmark's bash -c string: %v", err)
	}
	refEnv := map[string]string{}
	var refArgv []string
	for n, part := range parts {
		words := part.words()
		switch {
		case n == len(parts)-1:
			refArgv = words
		case len(words) == 2 && words[0] == "export":
			k, v, _ := strings.Cut(words[1], "=")
			refEnv[k] = v
		default:
			t.Fatalf("unclassified benchmark preamble part %q", part.text)
		}
	}
	env := map[string]string{}
	for k, v := range p.Env {
		env[k] = fill(v)
	}
	for _, k := range profile.SortedKeys(unionKeys(refEnv, env)) {
		if refEnv[k] != env[k] {
			add("env", k, refEnv[k], env[k])
		}
	}
	argvOurs := make([]string, len(p.Argv))
	for i, a := range p.Argv {
		argvOurs[i] = fill(a)
	}
	if pl.Benchmark.Custom != nil {
		if x, y := strings.Join(refArgv, " "), strings.Join(argvOurs, " "); x != y {
			add("program", "", x, y)
		}
		return diffs
	}
	// SA-Bench: bench.sh's positional arguments against the plan's values.
	if len(refArgv) < 2 || refArgv[1] != "/srtctl-benchmarks/sa-bench/bench.sh" {
		add("program", "", strings.Join(refArgv, " "), strings.Join(argvOurs, " "))
		return diffs
	}
	add("program", "", "bash /srtctl-benchmarks/sa-bench/bench.sh", strings.Join(argvOurs[:2], " "))
	for _, d := range benchArgDiffs(refArgv[2:], pl, fill) {
		add("bench-arg", d[0], d[1], d[2])
	}
	return diffs
}

// benchArgNames are bench.sh's positional arguments (srtctl's
// SABenchRunner.build_command), in order.
var benchArgNames = []string{"endpoint", "isl", "osl", "concurrencies", "req_rate", "tokenizer", "served_model_name",
	"is_disaggregated", "total_gpus", "prefill_gpus", "decode_gpus", "random_range_ratio", "num_prompts_mult",
	"num_warmup_mult", "custom_tokenizer", "use_chat_template", "dataset_name", "dataset_path", "reuse_http_connections"}

// benchArgDiffs compares bench.sh's arguments with the plan: name, srtctl,
// slurmbench for each that differs.
func benchArgDiffs(args []string, pl *plan.Plan, fill func(string) string) [][3]string {
	bm := pl.Benchmark
	concs := make([]string, len(pl.Points))
	for i, pt := range pl.Points {
		concs[i] = strconv.Itoa(pt.Concurrency)
	}
	total, prefill, decode := pl.GPUs.Total, pl.GPUs.Prefill, pl.GPUs.Decode
	frontend := ""
	for _, p := range pl.Processes {
		if p.Role == plan.RoleBenchmark {
			for i, a := range p.Argv {
				if a == "--frontend" && i+1 < len(p.Argv) {
					frontend = fill(p.Argv[i+1])
				}
			}
		}
	}
	ours := []string{frontend, strconv.Itoa(bm.ISL), strconv.Itoa(bm.OSL), strings.Join(concs, "x"), bm.RequestRate,
		bm.Tokenizer, pl.Model.ServedName, strconv.FormatBool(pl.Mode == "disaggregated"), strconv.Itoa(total),
		strconv.Itoa(prefill), strconv.Itoa(decode), strconv.FormatFloat(bm.RangeRatio, 'f', -1, 64),
		strconv.Itoa(bm.PromptsMult), strconv.Itoa(bm.WarmupMult), bm.CustomTokenizer, strconv.FormatBool(bm.UseChatTemplate),
		"random", "", "false"}
	var out [][3]string
	for i, name := range benchArgNames {
		ref := ""
		if i < len(args) {
			ref = args[i]
		}
		if ref != ours[i] {
			out = append(out, [3]string{name, ref, ours[i]})
		}
	}
	if bm.Client != "sa-bench" {
		out = append(out, [3]string{"client", "benchmark_serving.py", string(bm.Client)})
	}
	return out
}
