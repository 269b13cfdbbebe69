package planner

import (
	"cmp"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// TestPostEvalPlan: post_eval.command replaces the built-in eval as srtctl
// dispatches it: placeholders filled, EVAL_CONC from the workflow else the
// largest benchmark concurrency, MODEL_NAME the served name, the built-in
// variables plus passthrough_env taken from the submitting environment,
// results where srt_eval.sh copies them.
func TestPostEvalPlan(t *testing.T) {
	const block = `post_eval:
  passthrough_env: [EVAL_SUITE, RUN_EVAL]
  command: [bash, "{infmax_workspace}/benchmarks/multi_node/srt_eval.sh", "{endpoint}", "{infmax_workspace}"]
`
	cases := []struct {
		name     string
		eval     EvalInputs
		concs    []int
		wantConc int
		wantEnv  string // EVAL_CONC when not wantConc's
		only     bool
	}{
		{name: "an EVAL_CONC list goes to the script whole", eval: EvalInputs{Run: true, Concurrency: 4, Concurrencies: []int{4, 16, 8}}, wantConc: 4, wantEnv: "4 16 8"},
		{name: "after the benchmark, EVAL_CONC from the workflow", eval: EvalInputs{Run: true, Concurrency: 6}, wantConc: 6},
		{name: "no EVAL_CONC: the largest concurrency", eval: EvalInputs{Run: true}, wantConc: 32},
		{name: "CONC_LIST wins over the recipe", eval: EvalInputs{Run: true}, concs: []int{2, 48, 4}, wantConc: 48},
		{name: "eval only", eval: EvalInputs{Only: true, Concurrency: 9}, wantConc: 9, only: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td := testdataDir(t)
			r, err := recipe.Parse(filepath.Join(td, "recipes", "mock-2p1d-v2.yaml"), []byte(mockV2+block))
			if err != nil {
				t.Fatal(err)
			}
			in := inputs(loadProfile(t, filepath.Join(td, "profiles", "mock4.toml")), r)
			in.Eval, in.Concurrencies, in.Workspace = tc.eval, tc.concs, "/ws"
			pl, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, pl)
			var ev *plan.Process
			for i, p := range pl.Processes {
				if p.Role == plan.RoleEval {
					ev = &pl.Processes[i]
				}
			}
			if ev == nil {
				t.Fatal("no eval process")
			}
			want := []string{"bash", "/infmax-workspace/benchmarks/multi_node/srt_eval.sh", "http://{ip:0}:8000", "/infmax-workspace"}
			if !reflect.DeepEqual(ev.Argv, want) || !ev.Container || ev.Nodes[0] != 0 {
				t.Errorf("eval argv %q on %v (container %v), want %q on the head node's container", ev.Argv, ev.Nodes, ev.Container, want)
			}
			wantEnv := cmp.Or(tc.wantEnv, itoaT(tc.wantConc))
			if ev.Env["MODEL_NAME"] != "mock/DeepSeek-R1" || ev.Env["EVAL_CONC"] != wantEnv || pl.Eval.Concurrency != tc.wantConc {
				t.Errorf("env %v (eval concurrency %d), want MODEL_NAME mock/DeepSeek-R1 and EVAL_CONC %q", ev.Env, pl.Eval.Concurrency, wantEnv)
			}
			pass := strings.Join(ev.Passenv, ",")
			if !strings.HasPrefix(pass, "RUN_EVAL,EVAL_ONLY,IS_MULTINODE,") || !strings.HasSuffix(pass, ",DECODE_NUM_WORKERS,EVAL_SUITE") {
				t.Errorf("passenv %s: want the built-in list then EVAL_SUITE, each once", pass)
			}
			if pl.Eval.ResultDir != filepath.Join(pl.Layout.Logs, "eval_results") || pl.Eval.Only != tc.only || !reflect.DeepEqual(pl.Eval.Passenv, ev.Passenv) {
				t.Errorf("eval %+v", pl.Eval)
			}
			if tc.only && pl.Benchmark.Type != "" {
				t.Errorf("eval only still benchmarks (%q)", pl.Benchmark.Type)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		for _, bad := range []struct{ block, workspace, want string }{
			{block, "", "post_eval.command: bash /infmax-workspace/"},
			{"post_eval:\n  command: [bash, -c, \"a && b\"]\n", "/ws", "post_eval.command"},
			{"post_eval:\n  passthrough_env: [\"NOT-A-NAME\"]\n  command: [x]\n", "/ws", "post_eval.passthrough_env"},
			{"post_eval:\n  command: []\n", "/ws", "post_eval.command"},
		} {
			td := testdataDir(t)
			r, err := recipe.Parse(filepath.Join(td, "recipes", "mock-2p1d-v2.yaml"), []byte(mockV2+bad.block))
			if err == nil {
				in := inputs(loadProfile(t, filepath.Join(td, "profiles", "mock4.toml")), r)
				in.Eval, in.Workspace = EvalInputs{Run: true}, bad.workspace
				_, err = Build(in)
			}
			if err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%q: err = %v, want one naming %s", bad.block, err, bad.want)
			}
		}
	})
}

func itoaT(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
