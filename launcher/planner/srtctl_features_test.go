package planner

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// featureRecipe is testdata/recipes/agg.yaml (or another) with its
// benchmark block replaced by bench and extra appended; it returns the
// plan or the error.
func featureRecipe(t *testing.T, base, bench, extra string) (*plan.Plan, error) {
	t.Helper()
	text := string(readTestdata(t, "recipes", base))
	if bench != "" {
		i := strings.Index(text, "\nbenchmark:\n")
		if i < 0 {
			t.Fatalf("%s has no benchmark block", base)
		}
		j := i + len("\nbenchmark:\n")
		for j < len(text) {
			k := strings.IndexByte(text[j:], '\n')
			if k < 0 {
				k = len(text) - j - 1
			}
			if line := text[j : j+k+1]; !strings.HasPrefix(line, " ") {
				break
			}
			j += k + 1
		}
		text = text[:i] + "\nbenchmark:\n" + bench + "\n" + text[j:]
	}
	text += "\n" + extra + "\n"
	path := filepath.Join(t.TempDir(), base)
	writeFile(t, path, text)
	r, err := recipe.Load(path)
	if err != nil {
		return nil, err
	}
	gpn := "b200.toml"
	switch base {
	case "mock-2p1d.yaml":
		gpn = "mock4.toml"
	case "gb300.yaml":
		gpn = "gb300.toml"
	}
	p := loadProfile(t, filepath.Join(testdataDir(t), "profiles", gpn))
	p.Paths.Workspace = t.TempDir()
	pl, err := Build(inputs(p, r))
	if err == nil {
		checkInvariants(t, pl)
	}
	return pl, err
}

func processNamed(pl *plan.Plan, name string) *plan.Process {
	for i := range pl.Processes {
		if pl.Processes[i].Name == name {
			return &pl.Processes[i]
		}
	}
	return nil
}

// TestSrtctlBenchmarkTypes: each of srtctl's other benchmark types plans
// `slurmbench srtctl-bench TYPE` with the arguments srtctl's runner's
// build_command gives the type's script (defaults where the recipe is
// silent), in the engine container with the job's mounts and no file of
// srtctl's, and names where its results land.
func TestSrtctlBenchmarkTypes(t *testing.T) {
	cases := []struct {
		name, base, bench string
		typ               string
		args              []string
		resultDir         string
	}{
		{"mmlu defaults", "agg.yaml", "  type: mmlu", "mmlu",
			[]string{"http://localhost:8000", "200", "2048", "8", "512"}, "accuracy"},
		{"mmlu set", "agg.yaml", "  type: mmlu\n  num_examples: 50\n  max_tokens: 100\n  repeat: 2\n  num_threads: 4", "mmlu",
			[]string{"http://localhost:8000", "50", "100", "2", "4"}, "accuracy"},
		{"gpqa defaults", "agg.yaml", "  type: gpqa", "gpqa",
			[]string{"http://localhost:8000", "198", "32768", "8", "128"}, "accuracy"},
		{"longbenchv2", "agg.yaml", "  type: longbenchv2\n  categories: [a, b]", "longbenchv2",
			[]string{"http://localhost:8000", "128000", "16", "16384", "", "a,b"}, "accuracy"},
		{"gsm8k sglang", "agg.yaml", "  type: gsm8k\n  num_examples: 100\n  temperature: 0\n  num_shots: 0", "gsm8k-sglang",
			[]string{"http://localhost:8000", "100", "16384", "512", "0", "0.0", "", ""}, "accuracy"},
		{"gsm8k vllm", "vllm-coloc.yaml", "  type: gsm8k", "gsm8k-vllm",
			nil, "accuracy"},
		{"lm-eval", "agg.yaml", "  type: lm-eval", "lm-eval",
			[]string{"http://localhost:8000", "/infmax-workspace"}, "eval_results"},
		{"router defaults", "agg.yaml", "  type: router", "router",
			[]string{"http://localhost:8000", "14000", "200", "200", "20", "0.1 0.3 0.5 0.7 0.9"}, "router-bench"},
		{"router list", "agg.yaml", "  type: router\n  isl: 100\n  prefix_ratios: [0.5, 1]\n  concurrency: 3", "router",
			[]string{"http://localhost:8000", "100", "200", "200", "3", "0.5 1.0"}, "router-bench"},
		{"sglang-bench", "agg.yaml", "  type: sglang-bench\n  isl: 10\n  osl: 20\n  concurrencies: [1, 4]", "sglang-bench",
			[]string{"http://localhost:8000", "10", "20", "1x4", "inf"}, ""},
		{"trace-replay", "agg.yaml", "  type: trace-replay\n  trace_file: /traces/t.jsonl\n  concurrencies: \"2x8\"\n  aiperf_args:\n    benchmark-duration: 600\n    streaming: true\n    quiet: false", "trace-replay",
			[]string{"http://localhost:8000", "deepseek-ai/DeepSeek-R1", "/traces/t.jsonl", "2x8", "2000", "25", "/model", "--benchmark-duration", "600", "--streaming"}, "artifacts"},
		{"mooncake-router", "agg.yaml", "  type: mooncake-router\n  mooncake_workload: toolagent\n  ttft_threshold_ms: 500", "mooncake-router",
			[]string{"http://localhost:8000", "deepseek-ai/DeepSeek-R1", "toolagent", "500", "25", "/model"}, "artifacts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := featureRecipe(t, tc.base, tc.bench, "")
			if err != nil {
				t.Fatal(err)
			}
			s := pl.Benchmark.Srtctl
			if s == nil {
				t.Fatalf("no srtctl benchmark planned: %+v", pl.Benchmark)
			}
			if s.Type != tc.typ || !slices.Equal(s.Argv[:3], []string{pl.Binary, "srtctl-bench", tc.typ}) || !slices.Equal(s.Argv[3:], s.Args) {
				t.Errorf("type %s args %q argv %q, want %s srtctl-bench %s ARGS", s.Type, s.Args, s.Argv, pl.Binary, tc.typ)
			}
			if tc.args != nil && !slices.Equal(s.Args, tc.args) {
				t.Errorf("args\n %q\nwant\n %q", s.Args, tc.args)
			}
			wantDir := ""
			if tc.resultDir != "" {
				wantDir = filepath.Join(pl.Layout.Logs, tc.resultDir)
			}
			if s.ResultDir != wantDir || pl.Benchmark.ResultDir != wantDir {
				t.Errorf("result dir %q, want %q", s.ResultDir, wantDir)
			}
			proc := processNamed(pl, "benchmark")
			if proc == nil || !proc.Container || !slices.Equal(proc.Argv, s.Argv) {
				t.Fatalf("benchmark process %+v", proc)
			}
			// The binary reaches the container through the run directory.
			if !slices.Contains(proc.Mounts, pl.RunDir+":"+pl.RunDir) || !slices.Contains(proc.Mounts, pl.Layout.Logs+":/logs") ||
				!strings.HasPrefix(pl.Binary, pl.RunDir+"/") {
				t.Errorf("mounts %q lack the run directory (binary %s) or /logs", proc.Mounts, pl.Binary)
			}
			if len(proc.Files) != 0 {
				t.Errorf("the benchmark writes %d files; srtctl-bench needs none", len(proc.Files))
			}
			if len(pl.Points) != 0 || pl.Benchmark.Client != "" {
				t.Errorf("points %v client %q: the native client does not run", pl.Points, pl.Benchmark.Client)
			}
		})
	}
}

// TestSrtctlBenchmarkGSM8KvLLM: srtctl's gsm8k on vLLM passes host and port
// apart and the served model name.
func TestSrtctlBenchmarkGSM8KvLLM(t *testing.T) {
	pl, err := featureRecipe(t, "vllm-coloc.yaml", "  type: gsm8k\n  repeat: 3", "")
	if err != nil {
		t.Fatal(err)
	}
	a := pl.Benchmark.Srtctl.Args
	if len(a) != 8 || a[0] != "http://localhost" || a[2] != pl.Model.ServedName || a[3] != "1319" || a[4] != "256" || a[5] != "5" || a[6] != "0.0" || a[7] != "3" {
		t.Errorf("argv %q", a)
	}
}

// TestSrtctlBenchmarkRefusals: values srtctl's runners refuse, and types
// it registers no runner for, are refused naming the field.
func TestSrtctlBenchmarkRefusals(t *testing.T) {
	for _, tc := range []struct{ bench, field string }{
		{"  type: mooncake-router\n  mooncake_workload: chat", "benchmark.mooncake_workload"},
		{"  type: trace-replay", "benchmark.trace_file"},
		{"  type: mmlu\n  num_examples: 0", "benchmark.num_examples"},
		{"  type: gsm8k-bench", "benchmark.type"},
		{"  type: router\n  prefix_ratios: {a: 1}", "benchmark.prefix_ratios"},
		{"  type: trace-replay\n  trace_file: /t\n  aiperf_args: [1]", "benchmark.aiperf_args"},
		{"  type: sglang-bench\n  isl: 1", "benchmark.isl"},
	} {
		_, err := featureRecipe(t, "agg.yaml", tc.bench, "")
		var re *recipe.Error
		var ue *recipe.UnsupportedError
		switch {
		case err == nil:
			t.Errorf("%q planned", tc.bench)
		case errors.As(err, &ue):
			if ue.Err.Field != tc.field {
				t.Errorf("%q: refused for %s, want %s", tc.bench, ue.Err.Field, tc.field)
			}
		case !errors.As(err, &re) || !strings.Contains(err.Error(), tc.field):
			t.Errorf("%q: %v, want an error naming %s", tc.bench, err, tc.field)
		}
	}
}

// TestRecipeConcurrencyTwice: a concurrency the recipe lists twice runs
// once with a warning (srtctl reruns it and keeps the second file); --conc
// listing one twice stays an error.
func TestRecipeConcurrencyTwice(t *testing.T) {
	pl, err := featureRecipe(t, "agg.yaml", "  type: sa-bench\n  isl: 8\n  osl: 8\n  concurrencies: \"1x2x2x4\"", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, p := range pl.Points {
		got = append(got, p.Concurrency)
	}
	if !slices.Equal(got, []int{1, 2, 4}) || len(pl.Recipe.Warnings) != 1 || !strings.Contains(pl.Recipe.Warnings[0], "lists 2 twice") {
		t.Errorf("points %v warnings %q", got, pl.Recipe.Warnings)
	}
}

// TestSbatchDirectivesPlanned: the directives srtctl writes as #SBATCH
// lines plan when slurmrestd has their field, and are refused when
// planning (naming the recipe's field and line) when it has none.
func TestSbatchDirectivesPlanned(t *testing.T) {
	pl, err := featureRecipe(t, "agg.yaml", "", "sbatch_directives:\n  cpus-per-gpu: 16\n  mem: 0\n  gres-flags: enforce-binding")
	if err != nil {
		t.Fatal(err)
	}
	if pl.Slurm.Directives["cpus-per-gpu"] != "16" {
		t.Errorf("directives %v", pl.Slurm.Directives)
	}
	_, err = featureRecipe(t, "agg.yaml", "", "sbatch_directives:\n  hint: nomultithread")
	var re *recipe.Error
	if !errors.As(err, &re) || re.Field != "sbatch_directives.hint" || re.Line == 0 || !strings.Contains(err.Error(), "slurmrestd cannot express it") {
		t.Errorf("hint: %v", err)
	}
}

// TestProfilingPlanned: the profiling block wraps each worker as srtctl's
// worker stage does (nsys prefix with the output file per node, worker and
// GPUs; the phase's steps and the profiler's directory in the
// environment), and the driver gets lib/profiling.sh's start requests for
// every leader whose phase has a step range.
func TestProfilingPlanned(t *testing.T) {
	const nsys = "profiling:\n  type: nsys\n  extra_nsys_args: [--stats=false]\n  prefill:\n    start_step: 10\n    stop_step: 15\n  decode:\n    start_step: 200\n    stop_step: 400"
	t.Run("nsys sglang frontend", func(t *testing.T) {
		pl, err := featureRecipe(t, "1p1d.yaml", "", nsys)
		if err != nil {
			t.Fatal(err)
		}
		pr := pl.Profiling
		if pr == nil || pr.Type != "nsys" || pr.Dir != filepath.Join(pl.Layout.Logs, "profiles") {
			t.Fatalf("profiling %+v", pr)
		}
		var sawPrefill, sawDecode bool
		for _, p := range pl.Processes {
			if p.Role != plan.RolePrefill && p.Role != plan.RoleDecode {
				continue
			}
			mode := string(p.Role)
			i := slices.Index(p.Argv, "-o")
			if p.Argv[0] != "nsys" || p.Argv[1] != "profile" || i < 0 || !slices.Contains(p.Argv[:i], "--stats=false") || !slices.Contains(p.Argv[:i], "cudaProfilerApi") {
				t.Fatalf("%s argv %q", p.Name, p.Argv)
			}
			want := "/logs/profiles/" + mode + "/" + placeholderHost(p.Nodes[0]) + "_" + mode + "_w" + itoa(p.Worker) + "_profile_gpu"
			if !strings.HasPrefix(p.Argv[i+1], want) || p.Argv[i+2] != "python3" {
				t.Errorf("%s: output %q, want %s…, then the engine", p.Name, p.Argv[i+1], want)
			}
			key := strings.ToUpper(mode)
			start, stop := "10", "15"
			if mode == "decode" {
				start, stop = "200", "400"
				sawDecode = true
			} else {
				sawPrefill = true
			}
			if p.Env["PROFILING_MODE"] != mode || p.Env["PROFILE_TYPE"] != "nsys" || p.Env["PROFILE_"+key+"_START_STEP"] != start ||
				p.Env["PROFILE_"+key+"_STOP_STEP"] != stop || p.Env["TLLM_PROFILE_START_STOP"] != start+"-"+stop {
				t.Errorf("%s env %v", p.Name, p.Env)
			}
			if slices.Contains(p.Argv, "--trace-fork-before-exec=true") {
				t.Errorf("%s: --trace-fork-before-exec is for a Dynamo frontend only", p.Name)
			}
		}
		if !sawPrefill || !sawDecode {
			t.Error("no prefill or decode worker profiled")
		}
		if len(pr.Trigger) != 2 {
			t.Fatalf("triggers %+v", pr.Trigger)
		}
		for _, tr := range pr.Trigger {
			if tr.StartPath != "/start_profile" || tr.StopPath != "/stop_profile" || !strings.Contains(tr.Body, `"activities":["CUDA_PROFILER"]`) ||
				!strings.Contains(tr.Body, `"output_dir":"/logs/profiles/`+string(tr.Role)+`"`) {
				t.Errorf("trigger %+v", tr)
			}
		}
		if !strings.Contains(pr.Trigger[1].Body, `"start_step":200,"num_steps":200`) {
			t.Errorf("decode trigger %s", pr.Trigger[1].Body)
		}
	})
	t.Run("torch dynamo agg", func(t *testing.T) {
		pl, err := featureRecipe(t, "agg.yaml", "", "profiling:\n  type: torch\n  aggregated:\n    start_step: 1\n    stop_step: 3")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pl.Processes {
			if p.Role == plan.RoleAgg && (p.Env["SGLANG_TORCH_PROFILER_DIR"] != filepath.Join(pl.Layout.Logs, "profiles", "agg") || p.Argv[0] == "nsys" || p.Env["PROFILE_AGG_START_STEP"] != "1") {
				t.Errorf("%s: env %v argv %q", p.Name, p.Env, p.Argv[:2])
			}
		}
		tr := pl.Profiling.Trigger
		if len(tr) != 2 || tr[0].StartPath != "/engine/start_profile" || !strings.Contains(tr[0].Body, `["CPU","GPU"]`) || !strings.Contains(tr[0].Body, `"num_steps":2`) {
			t.Errorf("triggers %+v", tr)
		}
	})
	t.Run("nsys-time", func(t *testing.T) {
		pl, err := featureRecipe(t, "agg.yaml", "", "profiling:\n  type: nsys-time\n  delay_secs: 30\n  duration_secs: 60")
		if err != nil {
			t.Fatal(err)
		}
		if len(pl.Profiling.Trigger) != 0 {
			t.Errorf("a time-based capture has no triggers: %+v", pl.Profiling.Trigger)
		}
		for _, p := range pl.Processes {
			if p.Role != plan.RoleAgg {
				continue
			}
			i := slices.Index(p.Argv, "--delay")
			if i < 0 || p.Argv[i+1] != "30" || p.Argv[i+3] != "60" || !slices.Contains(p.Argv, "--trace-fork-before-exec=true") || slices.Contains(p.Argv, "cudaProfilerApi") ||
				p.Env["PROFILE_BENCHMARK_DURATION_SECS"] != "300" {
				t.Errorf("%s argv %q env %v", p.Name, p.Argv, p.Env)
			}
		}
	})
	t.Run("benchmark script env", func(t *testing.T) {
		pl, err := featureRecipe(t, "agg.yaml", "  type: sglang-bench\n  isl: 8\n  osl: 8\n  concurrencies: [2]", "profiling:\n  type: torch\n  aggregated:\n    start_step: 1\n    stop_step: 3")
		if err != nil {
			t.Fatal(err)
		}
		env := processNamed(pl, "benchmark").Env
		if env["PROFILE_TYPE"] != "torch" || env["PROFILE_OUTPUT_DIR"] != "/logs/profiles" || env["SGLANG_TORCH_PROFILER_DIR"] != "/logs/profiles" ||
			strings.Count(env["PROFILE_AGG_ENDPOINTS"], ",") != 1 || env["PROFILE_AGG_START_STEP"] != "1" || env["HEAD_PORT"] != "8000" {
			t.Errorf("benchmark env %v", env)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct{ block, field string }{
			{"profiling:\n  type: perf", "profiling.type"},
			{"profiling:\n  type: nsys\n  decode:\n    start_step: 5\n    stop_step: 5", "profiling.decode.stop_step"},
			{"profiling:\n  type: nsys\n  decode:\n    start_step: -1", "profiling.decode.start_step"},
		} {
			_, err := featureRecipe(t, "agg.yaml", "", tc.block)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%q: %v, want an error naming %s", tc.block, err, tc.field)
			}
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMockerBackend: backend.type mocker runs Dynamo's simulated engine
// with srtctl's arguments: the simulation parameters always, the optional
// ones only when set, then mocker_config's mode section sorted.
func TestMockerBackend(t *testing.T) {
	const agg = "name: mocker-agg\nmodel:\n  path: dsr1\n  container: sglang\nresources:\n  gpus_per_node: 8\n  agg_nodes: 1\n  agg_workers: 1\n" +
		"frontend:\n  type: dynamo\ndynamo:\n  install: false\nbackend:\n  type: mocker\n  speedup_ratio: 100\n  engine_type: sglang\n  enable_prefix_caching: false\n" +
		"  mocker_config:\n    aggregated:\n      max_num_seqs: 128\n      enforce-eager: true\n      skip: false\n" +
		"benchmark:\n  type: sa-bench\n  isl: 8\n  osl: 8\n  concurrencies: [1]\n"
	path := filepath.Join(t.TempDir(), "mocker.yaml")
	writeFile(t, path, agg)
	r, err := recipe.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Build(inputs(loadProfile(t, filepath.Join(testdataDir(t), "profiles", "b200.toml")), r))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, pl)
	var argv []string
	for _, p := range pl.Processes {
		if p.Role == plan.RoleAgg {
			argv = p.Argv
		}
	}
	want := []string{"python3", "-m", "dynamo.mocker", "--model-path", "/model", "--engine-type", "sglang", "--speedup-ratio", "100.0",
		"--data-parallel-size", "1", "--num-gpu-blocks-override", "16384", "--max-num-seqs", "256", "--max-num-batched-tokens", "8192",
		"--no-enable-prefix-caching", "--enforce-eager", "--max-num-seqs", "128"}
	if !slices.Equal(argv, want) {
		t.Errorf("argv\n %q\nwant\n %q", argv, want)
	}
	_, err = featureRecipe(t, "agg.yaml", "", "")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(agg, "  type: mocker\n", "  type: sglang\n", 1)
	if _, err := recipe.Parse("/r.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "belong to backend.type mocker") {
		t.Errorf("mocker settings on sglang: %v", err)
	}
}

// TestSlowDownPlanned: benchmark.slow_down_* reaches the sa-bench client
// as srtctl's environment (every decode leader's HTTP URL, the two times)
// with an sglang frontend; otherwise the plan warns that it is ignored.
func TestSlowDownPlanned(t *testing.T) {
	const bench = "  type: sa-bench\n  isl: 8\n  osl: 8\n  concurrencies: [4]\n  slow_down_sleep_time: 30\n  slow_down_wait_time: 120.5"
	pl, err := featureRecipe(t, "1p1d.yaml", bench, "")
	if err != nil {
		t.Fatal(err)
	}
	env := processNamed(pl, "benchmark").Env
	var decodes []string
	for _, p := range pl.Processes {
		if p.Role == plan.RoleDecode && p.Rank == 0 {
			decodes = append(decodes, "http://"+placeholderIP(p.Nodes[0])+":"+itoa(p.Ports["http"]))
		}
	}
	if sd := pl.Benchmark.SlowDown; sd == nil || sd.SleepTime != 30 || sd.WaitTime != 120.5 || env[plan.EnvSlowDownURLs] != strings.Join(decodes, ",") ||
		env[plan.EnvSlowDownSleep] != "30.0" || env[plan.EnvSlowDownWait] != "120.5" || len(decodes) == 0 {
		t.Errorf("slow_down %+v env %v (decode leaders %v)", pl.Benchmark.SlowDown, env, decodes)
	}
	pl, err = featureRecipe(t, "agg.yaml", bench, "")
	if err != nil {
		t.Fatal(err)
	}
	if pl.Benchmark.SlowDown != nil || len(pl.Recipe.Warnings) != 1 || !strings.Contains(pl.Recipe.Warnings[0], "frontend.type is not sglang") {
		t.Errorf("dynamo frontend: %+v warnings %q", pl.Benchmark.SlowDown, pl.Recipe.Warnings)
	}
}

// TestNginxRaiseUlimit: frontend.nginx_raise_ulimit renders srtctl's
// worker_rlimit_nofile into nginx.conf and starts nginx with the open-files
// limit raised (srtctl's `ulimit -n 1048576 &&`); without it, neither.
func TestNginxRaiseUlimit(t *testing.T) {
	for _, raise := range []bool{true, false} {
		text := string(readTestdata(t, "recipes", "gb300.yaml"))
		if raise {
			text = strings.Replace(text, "frontend:\n", "frontend:\n  nginx_raise_ulimit: true\n", 1)
		}
		path := filepath.Join(t.TempDir(), "gb300.yaml")
		writeFile(t, path, text)
		r, err := recipe.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := Build(inputs(loadProfile(t, filepath.Join(testdataDir(t), "profiles", "gb300.toml")), r))
		if err != nil {
			t.Fatal(err)
		}
		ng := processNamed(pl, "nginx")
		if ng == nil {
			t.Fatal("no nginx planned")
		}
		conf := ng.Files[filepath.Join(pl.Layout.Logs, "nginx.conf")]
		has := strings.Contains(conf, "worker_processes auto;\nworker_rlimit_nofile 1048576;\n")
		if has != raise || (ng.NoFile == 1048576) != raise {
			t.Errorf("raise %v: conf has worker_rlimit_nofile %v, limit %d", raise, has, ng.NoFile)
		}
	}
}

// TestDynamoTopOfTree: dynamo.top_of_tree installs the source's HEAD in
// every Dynamo container through one build for the run (the install step
// names the run), instead of a release.
func TestDynamoTopOfTree(t *testing.T) {
	text := strings.Replace(string(readTestdata(t, "recipes", "agg.yaml")), "  wheel: \"1.3.0.dev20260718\"\n", "  top_of_tree: true\n", 1)
	path := filepath.Join(t.TempDir(), "agg.yaml")
	writeFile(t, path, text)
	r, err := recipe.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Build(inputs(loadProfile(t, filepath.Join(testdataDir(t), "profiles", "b200.toml")), r))
	if err != nil {
		t.Fatal(err)
	}
	if d := pl.Dynamo; d.TopOfTree != pl.RunID || d.Version != "" || !d.Install {
		t.Errorf("dynamo %+v", d)
	}
	n := 0
	for _, p := range pl.Processes {
		for _, s := range p.Setup {
			if i := slices.Index(s, "--top-of-tree"); i > 0 && s[i+1] == pl.RunID {
				n++
			}
		}
	}
	if n == 0 {
		t.Error("no process installs the top-of-tree build")
	}
}

// TestRenderSrtctlFeatures: render says which srtctl type runs, where its
// results go, the slow_down and the profiling requests.
func TestRenderSrtctlFeatures(t *testing.T) {
	pl, err := featureRecipe(t, "1p1d.yaml", "  type: gpqa\n  num_examples: 5", "profiling:\n  type: torch\n  decode:\n    start_step: 1\n    stop_step: 2")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := pl.WriteHuman(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Benchmark: gpqa, srtctl's gpqa in the engine container", "/bin/slurmbench srtctl-bench gpqa http://",
		"(gpqa_*.json), copied to " + filepath.Join(pl.Layout.Results, "gpqa"), "Profiling: torch into " + pl.Profiling.Dir, "decode   POST http://{ip:"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("render lacks %q:\n%s", want, b.String())
		}
	}
}

// TestProfilingMockEngine: the mock engine is not wrapped in nsys (no
// CUDA, no nsys in its image), with a warning, but its leaders still get
// the start/stop requests.
func TestProfilingMockEngine(t *testing.T) {
	pl, err := featureRecipe(t, "mock-2p1d.yaml", "", "profiling:\n  type: nsys\n  decode:\n    start_step: 1\n    stop_step: 2")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pl.Processes {
		if p.Argv[0] == "nsys" {
			t.Errorf("%s wrapped in nsys", p.Name)
		}
	}
	if len(pl.Profiling.Trigger) == 0 || pl.Profiling.Trigger[0].StartPath != "/start_profile" || len(pl.Recipe.Warnings) != 1 {
		t.Errorf("profiling %+v warnings %q", pl.Profiling, pl.Recipe.Warnings)
	}
}

// TestAIPerfRunnerEnv: srtctl's AIPerf runners (trace-replay,
// mooncake-router) get every engine process's metrics URL, sorted, and the
// aiperf package; the accuracy types get neither.
func TestAIPerfRunnerEnv(t *testing.T) {
	pl, err := featureRecipe(t, "agg.yaml", "  type: mooncake-router\n  aiperf_package: aiperf>=0.7.0", "")
	if err != nil {
		t.Fatal(err)
	}
	env := processNamed(pl, "benchmark").Env
	var want []string
	for _, p := range pl.Processes {
		if p.Role == plan.RoleAgg && p.Ports["system"] > 0 {
			want = append(want, "http://"+placeholderIP(p.Nodes[0])+":"+itoa(p.Ports["system"])+"/metrics")
		}
	}
	slices.Sort(want)
	if len(want) < 2 || env["AIPERF_SERVER_METRICS_URLS"] != strings.Join(want, ",") || env["AIPERF_PACKAGE"] != "aiperf>=0.7.0" {
		t.Errorf("env %v, want metrics %v", env, want)
	}
	pl, err = featureRecipe(t, "agg.yaml", "  type: mmlu\n  aiperf_package: aiperf", "")
	if err != nil {
		t.Fatal(err)
	}
	if env := processNamed(pl, "benchmark").Env; env["AIPERF_SERVER_METRICS_URLS"] != "" || env["AIPERF_PACKAGE"] != "" {
		t.Errorf("mmlu env %v", env)
	}
}
