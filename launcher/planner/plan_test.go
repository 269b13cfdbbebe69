package planner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// buildTestdata plans testdata recipe on testdata profile, with mod applied
// to the inputs.
func buildTestdata(t *testing.T, prof, rec string, mod func(*Inputs)) (*plan.Plan, error) {
	t.Helper()
	td := testdataDir(t)
	in := inputs(loadProfile(t, filepath.Join(td, "profiles", prof)), loadRecipe(t, filepath.Join(td, "recipes", rec)))
	if mod != nil {
		mod(&in)
	}
	return Build(in)
}

func mustBuild(t *testing.T, prof, rec string, mod func(*Inputs)) *plan.Plan {
	t.Helper()
	pl, err := buildTestdata(t, prof, rec, mod)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, pl)
	return pl
}

// The acceptance case of render: the corpus's 4P1D c2048 DeepSeek-R1 FP4
// recipe on the shipped B200 profile.
func TestCorpus4P1DOnB200Profile(t *testing.T) {
	path := filepath.Join(corpusRoot(t), "sglang", "dsr1", "b200-fp4", "8k1k", "disagg", "mtp", "8k1k_mtp_4p1d_c2048.yaml")
	p := loadProfile(t, filepath.Join("..", "..", "profiles", "b200-dgxc.toml"))
	pl, err := Build(inputs(p, loadRecipe(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, pl)
	if pl.Nodes != 3 {
		t.Errorf("nodes = %d, want 3", pl.Nodes)
	}
	if want := (plan.GPUCount{Prefill: 16, Decode: 8, Total: 24}); pl.GPUs != want {
		t.Errorf("gpus = %+v, want %+v", pl.GPUs, want)
	}
	if len(pl.Points) != 1 {
		t.Fatalf("points = %+v, want one", pl.Points)
	}
	want := plan.BenchPoint{Concurrency: 2048, NumPrompts: 20480, WarmupPrompts: 4096, ResultFile: "results_concurrency_2048_gpus_24_ctx_16_gen_8.json"}
	if pl.Points[0] != want {
		t.Errorf("point = %+v, want %+v", pl.Points[0], want)
	}
	if pl.Model.ServedName != "deepseek-ai/DeepSeek-R1" || pl.Model.Source != "/scratch/fsw/models/DeepSeek-R1-0528-NVFP4-v2" {
		t.Errorf("model = %+v", pl.Model)
	}
	if pl.Health.Prefill != 4 || pl.Health.Decode != 1 || pl.Health.MaxAttempts != 360 {
		t.Errorf("health = %+v", pl.Health)
	}
	if pl.Slurm.Partition != "gpu-2" || pl.Slurm.Account != "benchmark" || pl.Slurm.TimeLimitMinutes != 240 {
		t.Errorf("slurm = %+v", pl.Slurm)
	}
}

// TestPlanJSONContract checks the keys `render --json` promises
// (docs/plan-format.md).
func TestPlanJSONContract(t *testing.T) {
	pl := mustBuild(t, "b200.toml", "4p1d.yaml", nil)
	js, err := pl.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	has := func(obj map[string]any, where string, keys ...string) {
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s has no %q", where, k)
			}
		}
	}
	has(m, "plan", "name", "nodes", "gpus", "image", "processes", "points", "run_dir")
	has(m["gpus"].(map[string]any), "gpus", "prefill", "decode", "total")
	has(m["image"].(map[string]any), "image", "ref", "enroot_uri", "squash")
	for _, p := range m["processes"].([]any) {
		has(p.(map[string]any), "process", "role", "name", "nodes", "argv", "env", "log")
	}
	for _, p := range m["points"].([]any) {
		has(p.(map[string]any), "point", "concurrency", "num_prompts", "warmup_prompts", "result_file")
	}
	if !strings.HasSuffix(string(js), "}\n") {
		t.Error("JSON does not end in a newline")
	}
	// The JSON reads back into an equal plan: the driver relies on it.
	var back plan.Plan
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, pl) {
		t.Error("plan does not survive a JSON round trip")
	}
	if err := back.Validate(); err != nil {
		t.Errorf("read-back plan invalid: %v", err)
	}
}

// Building twice gives the same bytes: map order must not leak.
func TestPlanDeterministic(t *testing.T) {
	for _, tc := range goldenCases {
		var first []byte
		for i := 0; i < 5; i++ {
			js, err := mustBuild(t, tc.profile, tc.recipe, nil).JSON()
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = js
			} else if string(js) != string(first) {
				t.Fatalf("%s: build %d differs from build 0", tc.name, i)
			}
		}
	}
}

func TestServedModelName(t *testing.T) {
	// No served-model-name in the engine config: srtctl serves the model
	// under its directory's name (srtctl-reference: kimik2.5-fp4 → "kimik2.5-fp4").
	pl := mustBuild(t, "b200.toml", "tp16-decode.yaml", nil)
	if pl.Model.ServedName != "Kimi-K2.5-NVFP4" {
		t.Errorf("served name = %q, want the model directory's name Kimi-K2.5-NVFP4", pl.Model.ServedName)
	}
	for _, proc := range pl.Processes {
		if proc.Role == plan.RolePrefill || proc.Role == plan.RoleDecode {
			if i := indexOf(proc.Argv, "--served-model-name"); i < 0 || proc.Argv[i+1] != "Kimi-K2.5-NVFP4" {
				t.Errorf("%s argv %q", proc.Name, proc.Argv)
			}
		}
	}
	// An HF id is served under its name and passed as the model path.
	td := testdataDir(t)
	text, err := os.ReadFile(filepath.Join(td, "recipes", "tp16-decode.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hf.yaml")
	writeFile(t, path, strings.Replace(string(text), "path: kimi", "path: hf:moonshotai/Kimi-K2.5", 1))
	pl, err = Build(inputs(loadProfile(t, filepath.Join(td, "profiles", "b200.toml")), loadRecipe(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	if pl.Model.ServedName != "Kimi-K2.5" || pl.Model.Path != "moonshotai/Kimi-K2.5" || pl.Model.Source != "hf:moonshotai/Kimi-K2.5" {
		t.Errorf("hf model = %+v", pl.Model)
	}
	for _, proc := range pl.Processes {
		for _, m := range proc.Mounts {
			if strings.HasSuffix(m, ":/model:ro") {
				t.Errorf("%s mounts a model directory for an hf: model: %s", proc.Name, m)
			}
		}
	}
}

// TestServedModelNameEngineKnob: schema 2's engine.served_model_name
// (srtctl 2.x's engine-wide knob) names the model for every worker, the
// frontend and the benchmark, over the model directory's name.
func TestServedModelNameEngineKnob(t *testing.T) {
	td := testdataDir(t)
	r := loadRecipe(t, filepath.Join(td, "recipes", "tp16-decode.yaml"))
	r.Backend.ServedModelName = "moonshotai/kimi-k2.5"
	pl, err := Build(inputs(loadProfile(t, filepath.Join(td, "profiles", "b200.toml")), r))
	if err != nil {
		t.Fatal(err)
	}
	if pl.Model.ServedName != "moonshotai/kimi-k2.5" {
		t.Errorf("served name %q", pl.Model.ServedName)
	}
	for _, proc := range pl.Processes {
		if proc.Role == plan.RolePrefill || proc.Role == plan.RoleDecode {
			if i := indexOf(proc.Argv, "--served-model-name"); i < 0 || proc.Argv[i+1] != "moonshotai/kimi-k2.5" {
				t.Errorf("%s argv %q", proc.Name, proc.Argv)
			}
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// TestMultiNodeWorker: the TP16 decode worker is one endpoint on two nodes
// with one leader address, ranks 0 and 1, and HTTP only on the leader.
func TestMultiNodeWorker(t *testing.T) {
	pl := mustBuild(t, "b200.toml", "tp16-decode.yaml", nil)
	var ranks []plan.Process
	for _, proc := range pl.Processes {
		if proc.Role == plan.RoleDecode {
			ranks = append(ranks, proc)
		}
	}
	if len(ranks) != 2 {
		t.Fatalf("decode processes: %d, want 2", len(ranks))
	}
	if pl.Nodes != 4 || pl.NodeMap[0].Roles[0] != "infra" || len(pl.NodeMap[0].GPUs) != 0 {
		t.Errorf("want a dedicated infra node 0 of 4: %+v", pl.NodeMap)
	}
	for rank, proc := range ranks {
		if proc.Rank != rank || proc.Worker != 0 || len(proc.GPUs) != 0 {
			t.Errorf("%s: rank %d worker %d gpus %v", proc.Name, proc.Rank, proc.Worker, proc.GPUs)
		}
		argv := strings.Join(proc.Argv, " ")
		for _, want := range []string{"--dist-init-addr {ip:2}:8300", "--nnodes 2", "--node-rank " + string(rune('0'+rank)), "--tensor-parallel-size 16"} {
			if !strings.Contains(argv, want) {
				t.Errorf("%s argv lacks %q: %s", proc.Name, want, argv)
			}
		}
		if _, http := proc.Ports["http"]; http != (rank == 0) {
			t.Errorf("%s: http port %v on rank %d", proc.Name, proc.Ports, rank)
		}
	}
	if ranks[0].Nodes[0] != 2 || ranks[1].Nodes[0] != 3 {
		t.Errorf("decode ranks on nodes %v and %v, want 2 and 3", ranks[0].Nodes, ranks[1].Nodes)
	}
}

// TestAllocate drives the placement rule directly.
func TestAllocate(t *testing.T) {
	type ep struct {
		role   plan.Role
		nodes  []int
		offset int
		gpus   int
	}
	cases := []struct {
		name    string
		nodes   int
		gpn     int
		spread  bool
		specs   []roleSpec
		want    []ep
		wantErr string
	}{
		{"4p1d", 3, 8, false, []roleSpec{{plan.RolePrefill, 4, 4}, {plan.RoleDecode, 1, 8}},
			[]ep{{plan.RolePrefill, []int{0}, 0, 4}, {plan.RolePrefill, []int{0}, 4, 4}, {plan.RolePrefill, []int{1}, 0, 4}, {plan.RolePrefill, []int{1}, 4, 4}, {plan.RoleDecode, []int{2}, 0, 8}}, ""},
		{"3p1d leaves half a node", 3, 8, false, []roleSpec{{plan.RolePrefill, 3, 4}, {plan.RoleDecode, 1, 8}},
			[]ep{{plan.RolePrefill, []int{0}, 0, 4}, {plan.RolePrefill, []int{0}, 4, 4}, {plan.RolePrefill, []int{1}, 0, 4}, {plan.RoleDecode, []int{2}, 0, 8}}, ""},
		{"tp16 decode", 3, 8, false, []roleSpec{{plan.RolePrefill, 1, 8}, {plan.RoleDecode, 1, 16}},
			[]ep{{plan.RolePrefill, []int{0}, 0, 8}, {plan.RoleDecode, []int{1, 2}, 0, 16}}, ""},
		{"decode shares the prefill node", 1, 8, false, []roleSpec{{plan.RolePrefill, 1, 4}, {plan.RoleDecode, 1, 4}},
			[]ep{{plan.RolePrefill, []int{0}, 0, 4}, {plan.RoleDecode, []int{0}, 4, 4}}, ""},
		{"spread", 2, 8, true, []roleSpec{{plan.RoleAgg, 2, 2}},
			[]ep{{plan.RoleAgg, []int{0}, 0, 2}, {plan.RoleAgg, []int{1}, 0, 2}}, ""},
		{"tp2 on 4-gpu nodes", 2, 4, false, []roleSpec{{plan.RolePrefill, 2, 2}, {plan.RoleDecode, 1, 4}},
			[]ep{{plan.RolePrefill, []int{0}, 0, 2}, {plan.RolePrefill, []int{0}, 2, 2}, {plan.RoleDecode, []int{1}, 0, 4}}, ""},
		{"too few nodes for a wide worker", 2, 8, false, []roleSpec{{plan.RolePrefill, 1, 8}, {plan.RoleDecode, 1, 16}}, nil, "needs 2 whole nodes"},
		{"partial workers overflow", 1, 8, false, []roleSpec{{plan.RolePrefill, 3, 4}}, nil, "does not fit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := make([]int, tc.nodes)
			for i := range nodes {
				nodes[i] = i
			}
			eps, err := allocate(nodes, tc.gpn, tc.spread, false, tc.specs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []ep
			for _, e := range eps {
				got = append(got, ep{e.role, e.nodes, e.offset, e.gpus})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("allocate =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// TestDensePorts: eight 1-GPU prefill workers on one node get distinct
// HTTP, bootstrap and system ports, and distinct NCCL ports.
func TestDensePorts(t *testing.T) {
	td := testdataDir(t)
	text, err := os.ReadFile(filepath.Join(td, "recipes", "1p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(text), "  prefill_workers: 1\n", "  prefill_workers: 8\n", 1)
	s = strings.Replace(s, "  decode_workers: 1\n", "  decode_workers: 4\n", 1)
	// One GPU per prefill worker, two per decode worker.
	s = strings.Replace(s, "      tensor-parallel-size: 8\n", "      tensor-parallel-size: 1\n", 1)
	s = strings.Replace(s, "      tensor-parallel-size: 8\n", "      tensor-parallel-size: 2\n", 1)
	path := filepath.Join(t.TempDir(), "dense.yaml")
	writeFile(t, path, s)
	pl, err := Build(inputs(loadProfile(t, filepath.Join(td, "profiles", "b200.toml")), loadRecipe(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, pl)
	nccl := map[string]string{}
	for _, proc := range pl.Processes {
		if i := indexOf(proc.Argv, "--nccl-port"); i >= 0 {
			key := proc.Argv[i+1] + "@" + plan.JoinInts(proc.Nodes)
			if other, dup := nccl[key]; dup {
				t.Errorf("NCCL port %s used by %s and %s", key, other, proc.Name)
			}
			nccl[key] = proc.Name
		}
	}
	if len(nccl) != 12 {
		t.Errorf("%d workers with NCCL ports, want 12", len(nccl))
	}
	if pl.GPUs.Prefill != 8 || pl.GPUs.Decode != 8 {
		t.Errorf("gpus = %+v", pl.GPUs)
	}
	// The router lists every prefill worker with its own bootstrap port.
	var front plan.Process
	for _, proc := range pl.Processes {
		if proc.Role == plan.RoleFrontend {
			front = proc
		}
	}
	if n := strings.Count(strings.Join(front.Argv, " "), "--prefill "); n != 8 {
		t.Errorf("router lists %d prefill workers, want 8: %q", n, front.Argv)
	}
}

// TestValidateCatches: hand-edited plans that break an invariant are refused.
func TestValidateCatches(t *testing.T) {
	cases := []struct {
		name string
		edit func(p *plan.Plan)
		want string
	}{
		{"shell string", func(p *plan.Plan) { p.Processes[0].Argv = []string{"bash", "-c", "nats-server && etcd"} }, "shell string"},
		{"shell by path", func(p *plan.Plan) { p.Processes[0].Argv = []string{"/bin/sh", "-c", "x"} }, "shell string"},
		{"port reused", func(p *plan.Plan) { p.Processes[1].Ports["etcd"] = p.Processes[0].Ports["nats"] }, "port 4222"},
		{"gpu reused", func(p *plan.Plan) { p.Processes[3].GPUs = p.Processes[2].GPUs }, "already given to"},
		{"gpu outside node", func(p *plan.Plan) { p.Processes[2].GPUs = []int{8} }, "GPU 8 outside"},
		{"node outside", func(p *plan.Plan) { p.Processes[2].Nodes = []int{7} }, "outside the allocation"},
		{"relative run dir", func(p *plan.Plan) { p.RunDir = "runs/x" }, "run_dir"},
		{"version", func(p *plan.Plan) { p.Version = 99 }, "plan version 99"},
		{"empty argv", func(p *plan.Plan) { p.Processes[2].Argv = nil }, "empty argv"},
		{"shared log", func(p *plan.Plan) { p.Processes[1].Log = p.Processes[0].Log }, "shared with"},
		{"duplicate name", func(p *plan.Plan) { p.Processes[1].Name = p.Processes[0].Name }, "name used twice"},
		{"bad name", func(p *plan.Plan) { p.Processes[1].Name = "a/b" }, "bad name"},
		{"no node", func(p *plan.Plan) { p.Processes[1].Nodes = nil }, "no node"},
		{"too many gpus", func(p *plan.Plan) { p.GPUs.Total = 1000 }, "gpus: 1000"},
		{"nothing to run", func(p *plan.Plan) { p.Benchmark.Type = ""; p.Eval.Enabled = false }, "nothing to run"},
		{"zero prompts", func(p *plan.Plan) { p.Points[0].NumPrompts = 0 }, "prompts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl := mustBuild(t, "b200.toml", "4p1d.yaml", nil)
			if err := pl.Validate(); err != nil {
				t.Fatalf("fresh plan invalid: %v", err)
			}
			tc.edit(pl)
			err := pl.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestIsShellString(t *testing.T) {
	cases := map[string]bool{
		"bash -c x":                  true,
		"/bin/bash -c x":             true,
		"sh -c x":                    true,
		"/usr/bin/dash -c x":         true,
		"env A=1 zsh -c x":           true,
		"bash script.sh":             false,
		"python3 -c print(1)":        false,
		"python3 -m dynamo.frontend": false,
		"nginx -c /logs/nginx.conf":  false,
		"bash":                       false,
		"-c bash":                    false,
	}
	for argv, want := range cases {
		if got := plan.IsShellString(strings.Fields(argv)); got != want {
			t.Errorf("isShellString(%q) = %v, want %v", argv, got, want)
		}
	}
}

// TestBuildRefusals: inputs that cannot make a valid plan are refused with
// the field at fault.
func TestBuildRefusals(t *testing.T) {
	cases := []struct {
		name          string
		profile       string
		recipe        string
		old, new      string // recipe edit
		mod           func(*Inputs)
		want          string
		wantUnchanged bool
	}{
		{name: "workers do not fit", recipe: "4p1d.yaml", old: "  prefill_workers: 4\n", new: "  prefill_workers: 5\n", want: "resources.prefill_workers"},
		{name: "decode does not fit", recipe: "1p1d.yaml", old: "  decode_workers: 1\n", new: "  decode_workers: 2\n  gpus_per_decode: 8\n", want: "resources.decode_workers"},
		{name: "less than a GPU each", recipe: "1p1d.yaml", old: "  prefill_workers: 1\n", new: "  prefill_workers: 9\n", want: "resources.prefill_workers"},
		{name: "width not a node multiple", recipe: "tp16-decode.yaml", old: "  decode_workers: 1\n", new: "  decode_workers: 1\n  gpus_per_decode: 12\n", want: "resources.gpus_per_decode"},
		{name: "gpus per node mismatch", profile: "gb300.toml", recipe: "1p1d.yaml", want: "resources.gpus_per_node"},
		{name: "unknown model alias", recipe: "1p1d.yaml", old: "  path: \"dsr1\"\n", new: "  path: \"dsr2\"\n", want: "model.path"},
		{name: "bad hf id", recipe: "1p1d.yaml", old: "  path: \"dsr1\"\n", new: "  path: \"hf:justname\"\n", want: "model.path"},
		{name: "relative squash", recipe: "1p1d.yaml", old: "  container: sglang\n", new: "  container: images/x.sqsh\n", want: "model.container"},
		{name: "image with space", recipe: "1p1d.yaml", mod: func(in *Inputs) { in.Image = "nvcr.io/x y:1" }, want: "IMAGE"},
		{name: "resolver refuses", recipe: "1p1d.yaml", mod: func(in *Inputs) {
			in.ResolveImage = func(string, string) (plan.Image, error) { return plan.Image{}, os.ErrInvalid }
		}, want: "model.container"},
		{name: "isl mismatch", recipe: "1p1d.yaml", mod: func(in *Inputs) { in.ISL = 8192 }, want: "benchmark.isl"},
		{name: "osl mismatch", recipe: "1p1d.yaml", mod: func(in *Inputs) { in.OSL = 8192 }, want: "benchmark.osl"},
		{name: "no isl anywhere", recipe: "1p1d.yaml", old: "  isl: 1024\n", new: "", want: "benchmark.isl"},
		{name: "no concurrency", recipe: "1p1d.yaml", old: "  concurrencies: \"4x8x16\"\n", new: "", want: "benchmark.concurrencies"},
		{name: "negative concurrency", recipe: "1p1d.yaml", mod: func(in *Inputs) { in.Concurrencies = []int{8, -1} }, want: "concurrency -1"},
		{name: "repeated concurrency", recipe: "1p1d.yaml", mod: func(in *Inputs) { in.Concurrencies = []int{8, 8} }, want: "listed twice"},
		{name: "bad run id", recipe: "1p1d.yaml", mod: func(in *Inputs) { in.RunID = "a/b" }, want: "run id"},
		{name: "relative binary", recipe: "1p1d.yaml", mod: func(in *Inputs) { in.Binary = "bin/slurmbench" }, want: "binary path"},
		{name: "bad recipe time limit", recipe: "gb300.yaml", profile: "gb300.toml", old: "  time_limit: \"03:30:00\"\n", new: "  time_limit: \"999d\"\n", want: "slurm.time_limit"},
	}
	td := testdataDir(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prof := tc.profile
			if prof == "" {
				prof = "b200.toml"
			}
			text, err := os.ReadFile(filepath.Join(td, "recipes", tc.recipe))
			if err != nil {
				t.Fatal(err)
			}
			s := string(text)
			if tc.old != "" {
				if !strings.Contains(s, tc.old) {
					t.Fatalf("test bug: %q not in %s", tc.old, tc.recipe)
				}
				s = strings.Replace(s, tc.old, tc.new, 1)
			}
			path := filepath.Join(t.TempDir(), tc.recipe)
			writeFile(t, path, s)
			r, err := recipe.Load(path)
			if err != nil {
				t.Fatalf("recipe: %v", err)
			}
			in := inputs(loadProfile(t, filepath.Join(td, "profiles", prof)), r)
			if tc.mod != nil {
				tc.mod(&in)
			}
			pl, err := Build(in)
			if err == nil {
				t.Fatalf("built a plan of %d nodes; want an error naming %s", pl.Nodes, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestInputsOverride: run inputs replace the recipe's values the way the
// InferenceX workflow's environment does.
func TestInputsOverride(t *testing.T) {
	pl := mustBuild(t, "b200.toml", "1p1d.yaml", func(in *Inputs) {
		in.Concurrencies = []int{64, 128}
		in.Image = "nvcr.io/nvidia/sglang:25.01"
		in.ISL, in.OSL = 1024, 1024 // equal to the recipe: allowed
	})
	if len(pl.Points) != 2 || pl.Points[1].ResultFile != "results_concurrency_128_gpus_16_ctx_8_gen_8.json" || pl.Points[1].NumPrompts != 1280 {
		t.Errorf("points = %+v", pl.Points)
	}
	if pl.Image.Ref != "nvcr.io/nvidia/sglang:25.01" {
		t.Errorf("image = %+v, want the IMAGE override", pl.Image)
	}
	// A [containers] alias given as IMAGE resolves like model.container.
	pl = mustBuild(t, "b200.toml", "1p1d.yaml", func(in *Inputs) { in.Image = "nginx-sqsh" })
	if pl.Image.Squash != "/shared/squash/nginx_1.27.4.sqsh" || pl.Image.Ref != "" {
		t.Errorf("image = %+v, want the alias's squash file", pl.Image)
	}
	// ISL/OSL from the inputs fill a recipe that has none.
	td := testdataDir(t)
	text, err := os.ReadFile(filepath.Join(td, "recipes", "1p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "noisl.yaml")
	writeFile(t, path, strings.Replace(strings.Replace(string(text), "  isl: 1024\n", "", 1), "  osl: 1024\n", "", 1))
	in := inputs(loadProfile(t, filepath.Join(td, "profiles", "b200.toml")), loadRecipe(t, path))
	in.ISL, in.OSL = 8192, 1024
	pl, err = Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Benchmark.ISL != 8192 || pl.Benchmark.OSL != 1024 || !strings.HasSuffix(pl.Benchmark.ResultDir, "sa-bench_isl_8192_osl_1024") {
		t.Errorf("benchmark = %+v", pl.Benchmark)
	}
}

func TestEvalSteps(t *testing.T) {
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "test.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	td := testdataDir(t)
	prof := loadProfile(t, filepath.Join(td, "profiles", "mock4.toml"))
	prof.Paths.GSM8K = dataDir
	r := loadRecipe(t, filepath.Join(td, "recipes", "mock-2p1d.yaml"))

	in := inputs(prof, r)
	in.Eval = EvalInputs{Run: true}
	pl, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, pl)
	if !pl.Eval.Enabled || pl.Eval.Concurrency != 64 || pl.Eval.Client != "native" || pl.Eval.DataDir != dataDir || len(pl.Points) != 2 {
		t.Errorf("eval with benchmark: %+v, %d points", pl.Eval, len(pl.Points))
	}
	roles := map[plan.Role]int{}
	for _, proc := range pl.Processes {
		roles[proc.Role]++
	}
	if roles[plan.RoleEval] != 1 || roles[plan.RoleBenchmark] != 1 {
		t.Errorf("roles = %v, want one benchmark and one eval", roles)
	}
	// An EVAL_CONC list: one eval step that runs each, the first its
	// concurrency; a single value is no list.
	in.Eval = EvalInputs{Run: true, Concurrency: 32, Concurrencies: []int{32, 8}}
	if pl, err := Build(in); err != nil || pl.Eval.Concurrency != 32 || !slices.Equal(pl.Eval.Concurrencies, []int{32, 8}) {
		t.Errorf("eval list: %v, eval %+v; want concurrencies [32 8], concurrency 32", err, pl.Eval)
	}
	in.Eval = EvalInputs{Run: true, Concurrency: 32, Concurrencies: []int{32}}
	if pl, err := Build(in); err != nil || pl.Eval.Concurrency != 32 || pl.Eval.Concurrencies != nil {
		t.Errorf("one-value eval list: %v, eval %+v; want concurrency 32 and no list", err, pl.Eval)
	}
	in.Eval = EvalInputs{Run: true}

	// Without paths.gsm8k the native eval uses the splits built into the
	// binary; a directory without them is refused when planning.
	prof.Paths.GSM8K = ""
	if pl, err := Build(in); err != nil || pl.Eval.DataDir != "" || !pl.Eval.Enabled {
		t.Errorf("native eval without paths.gsm8k: %v, eval %+v; want the built-in splits (data_dir \"\")", err, pl.Eval)
	}
	prof.Paths.GSM8K = t.TempDir()
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "paths.gsm8k") {
		t.Errorf("paths.gsm8k without test.jsonl: %v, want an error naming paths.gsm8k", err)
	}

	in.Eval = EvalInputs{Only: true, Concurrency: 16, Client: "lm-eval"}
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "paths.workspace") {
		t.Errorf("lm-eval without a workspace: %v, want an error naming paths.workspace", err)
	}
	in.Workspace = dataDir // stands in for the InferenceX checkout
	pl, err = Build(in)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, pl)
	if !pl.Eval.Only || pl.Eval.Concurrency != 16 || len(pl.Points) != 0 || pl.Benchmark.Type != "" {
		t.Errorf("eval only: eval %+v, %d points, benchmark %q", pl.Eval, len(pl.Points), pl.Benchmark.Type)
	}
	for _, proc := range pl.Processes {
		if proc.Role == plan.RoleBenchmark {
			t.Error("eval-only plan runs the benchmark")
		}
		if proc.Role == plan.RoleEval && !proc.Container {
			t.Error("lm-eval runs outside the container")
		}
	}
}

// TestProfileAndRecipeSettingsReachThePlan follows single settings through.
func TestProfileAndRecipeSettingsReachThePlan(t *testing.T) {
	pl := mustBuild(t, "b200.toml", "1p1d.yaml", nil)
	if !reflect.DeepEqual(pl.Slurm.Directives, map[string]string{"segment": "3", "exclusive": ""}) {
		t.Errorf("directives = %v: profile's and recipe's sbatch directives merged", pl.Slurm.Directives)
	}
	if !reflect.DeepEqual(pl.EnvPassthrough, []string{"HF_TOKEN"}) {
		t.Errorf("passthrough = %v", pl.EnvPassthrough)
	}
	for _, proc := range pl.Processes {
		if proc.Role != plan.RolePrefill && proc.Role != plan.RoleDecode {
			continue
		}
		if !reflect.DeepEqual(proc.Srun.Extra, []string{"--cpu-bind=none", "--overlap"}) {
			t.Errorf("%s srun extra = %q", proc.Name, proc.Srun.Extra)
		}
		if proc.Env["TORCH_DISTRIBUTED_DEFAULT_TIMEOUT"] != "1800" {
			t.Errorf("%s: top-level environment missing: %v", proc.Name, proc.Env)
		}
		if !reflect.DeepEqual(proc.Mounts[len(proc.Mounts)-1:], []string{"/shared/hf-cache:/root/.cache/huggingface"}) {
			t.Errorf("%s mounts = %v, want the profile's mount", proc.Name, proc.Mounts)
		}
	}
	for _, proc := range pl.Processes {
		if proc.Name == "decode_w0" && proc.Env["SGLANG_NODE"] != "{host:1}" {
			t.Errorf("{node} not templated to the decode node's host: %q", proc.Env["SGLANG_NODE"])
		}
	}
	gb := mustBuild(t, "gb300.toml", "gb300.yaml", nil)
	if gb.Slurm.TimeLimitMinutes != 210 || gb.Health.MaxAttempts != 240 {
		t.Errorf("recipe time limit / profile health override: %d min, %d attempts", gb.Slurm.TimeLimitMinutes, gb.Health.MaxAttempts)
	}
	for _, proc := range gb.Processes {
		if proc.Role == plan.RoleNginx && proc.Image != "nginx:1.27.4" {
			t.Errorf("nginx image %q, want the profile's nginx alias", proc.Image)
		}
		if proc.Role == plan.RolePrefill && proc.Env["ENROOT_ROOTFS_WRITABLE"] != "1" {
			t.Errorf("%s: profile env.set missing", proc.Name)
		}
	}
}

// TestOCIRuntimeImage: under container.runtime "oci" the plan's image is the
// registry image's OCI bundle in the squash directory; a squash file is
// refused, naming the field and what to give instead.
func TestOCIRuntimeImage(t *testing.T) {
	oci := func(in *Inputs) { in.Profile.Container.Runtime = profile.RuntimeOCI }
	pl := mustBuild(t, "b200.toml", "1p1d.yaml", func(in *Inputs) {
		oci(in)
		in.Image = "nvcr.io/nvidia/sglang:25.01"
	})
	if want := "/shared/squash/nvcr.io_nvidia_sglang_25.01.oci"; pl.Image.Squash != want || pl.Image.Ref != "nvcr.io/nvidia/sglang:25.01" || pl.Runtime != profile.RuntimeOCI {
		t.Errorf("image %+v runtime %s, want the bundle %s", pl.Image, pl.Runtime, want)
	}
	var human strings.Builder
	if err := pl.WriteHuman(&human); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(human.String(), "bundle "+pl.Image.Squash+"  (runtime oci)") || strings.Contains(human.String(), "squash "+pl.Image.Squash) {
		t.Errorf("render does not name the bundle:\n%s", human.String())
	}
	_, err := buildTestdata(t, "b200.toml", "1p1d.yaml", func(in *Inputs) {
		oci(in)
		in.Image = "nginx-sqsh"
	})
	if err == nil || !strings.Contains(err.Error(), "IMAGE") || !strings.Contains(err.Error(), "OCI bundles") {
		t.Errorf("a squash file under the oci runtime: %v", err)
	}
}
