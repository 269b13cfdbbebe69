package planner

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// customPlan plans the agentic test recipe with its YAML edited.
func customPlan(t *testing.T, profileName string, edits ...string) (*plan.Plan, error) {
	t.Helper()
	td := testdataDir(t)
	data, err := os.ReadFile(filepath.Join(td, "recipes", "agentic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("agentic.yaml has no %q", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	r, err := recipe.Parse(filepath.Join(td, "recipes", "agentic.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return Build(inputs(loadProfile(t, filepath.Join(td, "profiles", profileName)), r))
}

func benchmarkProcess(t *testing.T, pl *plan.Plan) plan.Process {
	t.Helper()
	for _, p := range pl.Processes {
		if p.Role == plan.RoleBenchmark {
			return p
		}
	}
	t.Fatal("no benchmark process")
	return plan.Process{}
}

func TestCustomBenchmarkPlan(t *testing.T) {
	cases := []struct {
		name      string
		edits     []string
		node      int
		argv      []string
		mark      string // substring of ScriptNote, "" = unmarked
		resultDir string // relative to the run directory
	}{
		{name: "agentic on the last decode node", node: 2,
			argv: []string{"bash", "/infmax-workspace/benchmarks/multi_node/agentic_srt.sh"},
			mark: "not in the workspace", resultDir: "logs/agentic"},
		{name: "head placement", edits: []string{"client_placement: last_decode", "client_placement: head"}, node: 0,
			argv: []string{"bash", "/infmax-workspace/benchmarks/multi_node/agentic_srt.sh"}, mark: "not in the workspace", resultDir: "logs/agentic"},
		{name: "first decode", edits: []string{"client_placement: last_decode", "client_placement: first_decode"}, node: 1,
			argv: []string{"bash", "/infmax-workspace/benchmarks/multi_node/agentic_srt.sh"}, mark: "not in the workspace", resultDir: "logs/agentic"},
		{name: "script in the image", edits: []string{`command: "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh"`, `command: "/opt/bench/run.sh --fast"`},
			node: 2, argv: []string{"/opt/bench/run.sh", "--fast"}, mark: "must exist in the image", resultDir: "logs/agentic"},
		{name: "script in the logs mount", edits: []string{`command: "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh"`, `command: "python3 -u /logs/x.py"`},
			node: 2, argv: []string{"python3", "-u", "/logs/x.py"}, resultDir: "logs/agentic"},
		{name: "program on PATH, no RESULT_DIR", edits: []string{`command: "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh"`, `command: "aiperf profile"`, "    RESULT_DIR: /logs/agentic\n", ""},
			node: 2, argv: []string{"aiperf", "profile"}, resultDir: "results/custom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := customPlan(t, "b200.toml", tc.edits...)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, pl)
			p := benchmarkProcess(t, pl)
			if !reflect.DeepEqual(p.Argv, tc.argv) || p.Nodes[0] != tc.node || !p.Container {
				t.Errorf("benchmark process: argv %q on node %v (container %v); want %q on node %d in the container", p.Argv, p.Nodes, p.Container, tc.argv, tc.node)
			}
			c := pl.Benchmark.Custom
			if c == nil {
				t.Fatal("no custom benchmark in the plan")
			}
			if (tc.mark == "") != (c.ScriptNote == "") || !strings.Contains(c.ScriptNote, tc.mark) {
				t.Errorf("script note %q, want one with %q", c.ScriptNote, tc.mark)
			}
			if want := filepath.Join(pl.RunDir, tc.resultDir); c.ResultDir != want || pl.Benchmark.ResultDir != want {
				t.Errorf("result dir %q, want %q", c.ResultDir, want)
			}
			if len(pl.Points) != 0 {
				t.Errorf("a custom benchmark has no SA-Bench points, got %d", len(pl.Points))
			}
			var human bytes.Buffer
			if err := pl.WriteHuman(&human); err != nil {
				t.Fatal(err)
			}
			if tc.mark != "" && !strings.Contains(human.String(), "** MARKED: ") {
				t.Errorf("render does not mark the script:\n%s", human.String())
			}
		})
	}
}

func TestCustomBenchmarkRefused(t *testing.T) {
	cases := []struct {
		name, profile string
		edits         []string
		want          string
	}{
		{"bash -c", "b200.toml", []string{`command: "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh"`, `command: "bash -c 'a.sh && b.sh'"`}, "benchmark.command"},
		{"no decode for last_decode", "b200.toml", []string{"  prefill_nodes: 1\n  decode_nodes: 2\n  prefill_workers: 1\n  decode_workers: 2\n", "  agg_nodes: 1\n  agg_workers: 1\n",
			"    prefill:\n      served-model-name: deepseek-ai/DeepSeek-R1\n      tensor-parallel-size: 8\n    decode:\n", "    aggregated:\n"}, "benchmark.client_placement"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := customPlan(t, tc.profile, tc.edits...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// TestTokenizerPicksClient: a custom tokenizer or tokenizer mode reaches the
// sa-bench client's flags, and a native plan switches to it, saying why.
func TestTokenizerPicksClient(t *testing.T) {
	td := testdataDir(t)
	cases := []struct {
		name, extra        string
		client, wantClient profile.BenchClient
		reason             bool
		err                string
	}{
		{name: "native switched", client: "native", extra: "  custom_tokenizer: sa_bench_tokenizers.vllm_deepseek_v4.VLLMDeepseekV4Tokenizer\n", wantClient: "sa-bench", reason: true},
		{name: "mode switches too", client: "native", extra: "  tokenizer_mode: deepseek_v4\n", wantClient: "sa-bench", reason: true},
		{name: "sa-bench kept", client: "sa-bench", extra: "  custom_tokenizer: x.Y\n", wantClient: "sa-bench"},
		{name: "no tokenizer stays native", client: "native", wantClient: "native"},
		{name: "finite rate cannot switch", client: "native", extra: "  custom_tokenizer: x.Y\n  req_rate: 5\n", err: "benchmark.custom_tokenizer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(td, "recipes", "1p1d.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Replace(string(data), "  req_rate: inf\n", "", 1) + tc.extra
			r, err := recipe.Parse(filepath.Join(td, "recipes", "1p1d.yaml"), []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			in := inputs(loadProfile(t, filepath.Join(td, "profiles", "b200.toml")), r)
			in.BenchClient = tc.client
			pl, err := Build(in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			bm := pl.Benchmark
			if bm.Client != tc.wantClient || (bm.ClientReason != "") != tc.reason {
				t.Errorf("client %q (reason %q), want %q (reason: %v)", bm.Client, bm.ClientReason, tc.wantClient, tc.reason)
			}
			if tc.extra != "" && bm.Tokenizer != "/model" {
				t.Errorf("tokenizer %q, want /model", bm.Tokenizer)
			}
			var human bytes.Buffer
			if err := pl.WriteHuman(&human); err != nil {
				t.Fatal(err)
			}
			if tc.reason && !strings.Contains(human.String(), "client   sa-bench: benchmark.") {
				t.Errorf("render does not say why the client changed:\n%s", human.String())
			}
		})
	}
}

// TestCustomBenchmarkClusterEnv: the profile's fixed variables reach the
// custom command as they reach the workers, over benchmark.env.
func TestCustomBenchmarkClusterEnv(t *testing.T) {
	td := testdataDir(t)
	p := loadProfile(t, filepath.Join(td, "profiles", "b200.toml"))
	p.Env.Set = map[string]string{"HTTPS_PROXY": "http://proxy:3128", "MODEL": "cluster"}
	pl, err := Build(inputs(p, loadRecipe(t, filepath.Join(td, "recipes", "agentic.yaml"))))
	if err != nil {
		t.Fatal(err)
	}
	env := benchmarkProcess(t, pl).Env
	if env["HTTPS_PROXY"] != "http://proxy:3128" || env["MODEL"] != "cluster" || env["CONC"] != "64" {
		t.Errorf("benchmark env %v: want the profile's HTTPS_PROXY and MODEL over benchmark.env, and CONC from it", env)
	}
}

// TestCustomBenchmarkImage: benchmark.container_image is the image the
// custom client runs in (srtctl's CustomBenchmarkRunner.get_container_image),
// resolved through the profile's [containers] like every image; unset, the
// client runs in the job's image.
func TestCustomBenchmarkImage(t *testing.T) {
	pl, err := customPlan(t, "b200.toml")
	if err != nil {
		t.Fatal(err)
	}
	if p := benchmarkProcess(t, pl); p.Image != "" {
		t.Errorf("no container_image: client image %q, want the job's", p.Image)
	}
	pl, err = customPlan(t, "b200.toml", "client_placement: last_decode", "client_placement: last_decode\n  container_image: docker.io/rocm/sgl-dev:bench-1")
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, pl)
	if p := benchmarkProcess(t, pl); p.Image != "docker.io/rocm/sgl-dev:bench-1" || !p.Container {
		t.Errorf("client image %q (container %v)", p.Image, p.Container)
	}
}

// TestCustomBenchmarkShellCommand: a benchmark.command that needs a shell
// (a sequence, a pipe, exports) runs as srtctl runs it, bash -l, from a
// file holding the command verbatim, so the plan's argv stays an argv.
func TestCustomBenchmarkShellCommand(t *testing.T) {
	td := testdataDir(t)
	text := string(readTestdata(t, "recipes", "agentic.yaml"))
	cmd := "set -eo pipefail\nexport RESULT_DIR=/logs/agentic\nbash run.sh | tee x\n"
	text = strings.Replace(text, `command: "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh"`, "command: |\n    "+strings.ReplaceAll(strings.TrimSuffix(cmd, "\n"), "\n", "\n    "), 1)
	pl := buildText(t, "b200.toml", text)
	var bench *plan.Process
	for i := range pl.Processes {
		if pl.Processes[i].Role == plan.RoleBenchmark {
			bench = &pl.Processes[i]
		}
	}
	if bench == nil {
		t.Fatal("no benchmark process")
	}
	script := filepath.Join(pl.Layout.Logs, "benchmark.command.sh")
	if want := []string{"bash", "-l", script}; !reflect.DeepEqual(bench.Argv, want) {
		t.Errorf("argv %q, want %q", bench.Argv, want)
	}
	if body := bench.Files[script]; !strings.HasSuffix(body, cmd) {
		t.Errorf("script %q does not end with the command verbatim %q", body, cmd)
	}
	if err := pl.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	_ = td
}
