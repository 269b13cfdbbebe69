package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// renderEnv are the variables render reads as flag fallbacks; tests clear
// them so the caller's environment cannot change a result.
var renderEnv = []string{"SLURMBENCH_PROFILE", "CONFIG_FILE", "SLURMBENCH_RECIPES_ROOT", "CONC_LIST", "ISL", "OSL",
	"IMAGE", "RUN_EVAL", "EVAL_ONLY", "EVAL_CONC", "RUNNER_NAME"}

func clearRenderEnv(t *testing.T) {
	t.Helper()
	for _, k := range renderEnv {
		t.Setenv(k, "") // restores the old value after the test
		os.Unsetenv(k)
	}
}

// runRender runs "slurmbench render ..." in-process the way main does and
// returns stdout, stderr and the exit code.
func runRender(t *testing.T, args ...string) (string, string, exitcode.Code) {
	t.Helper()
	return runCLI(t, append([]string{"render"}, args...)...)
}

// renderData is cmd/slurmbench/testdata/render, absolute and symlink-free.
func renderData(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "render"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildRenderBinary builds slurmbench into dir/bin, for the test that
// must exec the real binary (how it was invoked must not matter).
func buildRenderBinary(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "bin", "slurmbench")
	cmd := exec.Command("go", "build", "-o", path, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building slurmbench: %v\n%s", err, out)
	}
	return path
}

// TestRenderJSONIndependentOfInvocation is render's path rule: the same
// plan, byte for byte, whatever the working directory and however the
// binary and the input files are named.
func TestRenderJSONIndependentOfInvocation(t *testing.T) {
	data := renderData(t)
	profile := filepath.Join(data, "profile.toml")
	recipe := filepath.Join(data, "recipes", "mock-2p1d.yaml")

	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := buildRenderBinary(t, filepath.Join(tmp, "build"))
	link := filepath.Join(tmp, "links", "sb")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	// A symlinked view of the test data, so the inputs too are reached
	// through a link.
	dataLink := filepath.Join(tmp, "data-link")
	if err := os.Symlink(data, dataLink); err != nil {
		t.Fatal(err)
	}
	rel := func(from, to string) string {
		r, err := filepath.Rel(from, to)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	type place struct {
		name, dir, bin, profile, recipe string
	}
	places := []place{
		{"root, absolute binary", "/", bin, rel("/", profile), rel("/", recipe)},
		{"repo, absolute binary", repoRoot(t), bin, rel(repoRoot(t), profile), rel(repoRoot(t), recipe)},
		{"test data dir, relative binary", data, rel(data, bin), "profile.toml", "recipes/mock-2p1d.yaml"},
		{"temp dir, relative binary", tmp, rel(tmp, bin), rel(tmp, profile), rel(tmp, recipe)},
		{"temp dir, symlinked binary", tmp, "links/sb", rel(tmp, profile), rel(tmp, recipe)},
		{"temp dir, symlinked binary and data", tmp, "./links/sb", "data-link/profile.toml", "./data-link/recipes/../recipes/mock-2p1d.yaml"},
		{"binary dir, bare relative", filepath.Dir(bin), "./slurmbench", rel(filepath.Dir(bin), profile), rel(filepath.Dir(bin), recipe)},
	}
	env := cleanEnv()
	var first []byte
	var firstHuman []byte
	for _, pl := range places {
		for _, asJSON := range []bool{true, false} {
			args := []string{"render", "--profile", pl.profile, "--recipe", pl.recipe}
			if asJSON {
				args = append(args, "--json")
			}
			cmd := exec.Command(pl.bin, args...)
			cmd.Dir, cmd.Env = pl.dir, env
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", pl.name, err, stderr.String())
			}
			switch {
			case !asJSON && firstHuman == nil:
				firstHuman = out
			case !asJSON && !bytes.Equal(out, firstHuman):
				t.Errorf("%s: human view differs from the first place's", pl.name)
			case asJSON && first == nil:
				first = out
			case asJSON && !bytes.Equal(out, first):
				t.Errorf("%s: JSON differs from the first place's:\n%s", pl.name, firstDiffLine(first, out))
			}
		}
	}
	var pln struct {
		RunDir string `json:"run_dir"`
		Nodes  int    `json:"nodes"`
		Image  struct {
			Squash string `json:"squash"`
		} `json:"image"`
		Model struct {
			Source string `json:"source"`
		} `json:"model"`
		Recipe struct {
			Path string `json:"path"`
		} `json:"recipe"`
		Profile struct {
			Path string `json:"path"`
		} `json:"profile"`
		Processes []struct {
			Mounts []string `json:"mounts"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(first, &pln); err != nil {
		t.Fatal(err)
	}
	// Relative settings resolved against the profile's directory.
	want := map[string]string{
		"run_dir":      filepath.Join(data, "runs", "mock-2p1d-dryrun"),
		"image.squash": filepath.Join(data, "squash", "slurmbench+mock-engine+latest.sqsh"),
		"model.source": filepath.Join(data, "models", "mock"),
		"recipe.path":  recipe,
		"profile.path": profile,
	}
	got := map[string]string{"run_dir": pln.RunDir, "image.squash": pln.Image.Squash, "model.source": pln.Model.Source,
		"recipe.path": pln.Recipe.Path, "profile.path": pln.Profile.Path}
	for k, w := range want {
		if k == "image.squash" {
			// The squash name is enroot's rule; only its directory is ours.
			if filepath.Dir(got[k]) != filepath.Dir(w) {
				t.Errorf("%s = %q, want a file in %q", k, got[k], filepath.Dir(w))
			}
			continue
		}
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	if pln.Nodes != 3 || len(pln.Processes) == 0 || !contains(pln.Processes[0].Mounts, filepath.Join(data, "cache")+":/cache:ro") {
		t.Errorf("nodes %d, mounts %v", pln.Nodes, pln.Processes)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// cleanEnv is the test's environment without render's fallbacks.
func cleanEnv() []string {
	drop := map[string]bool{}
	for _, k := range renderEnv {
		drop[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return env
}

func firstDiffLine(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "  first: " + al[i] + "\n  this:  " + bl[i]
		}
	}
	return "(one is a prefix of the other)"
}

// TestRenderCorpus4P1D is render's acceptance case through the CLI.
func TestRenderCorpus4P1D(t *testing.T) {
	clearRenderEnv(t)
	corpus := shareddata.Path(t, "data", "inferencex")
	recipes := shareddata.Path(t, "data", "inferencex", "benchmarks", "multi_node", "srt-slurm-recipes")
	profile := filepath.Join(repoRoot(t), "profiles", "b200-dgxc.toml")
	check := func(name string, args ...string) {
		t.Helper()
		out, stderr, code := runRender(t, append([]string{"--profile", profile, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var pln struct {
			Nodes int `json:"nodes"`
			GPUs  struct {
				Prefill, Decode, Total int
			} `json:"gpus"`
			Points []struct {
				Concurrency int    `json:"concurrency"`
				ResultFile  string `json:"result_file"`
			} `json:"points"`
			Image struct {
				Ref string `json:"ref"`
			} `json:"image"`
		}
		if err := json.Unmarshal([]byte(out), &pln); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if pln.Nodes != 3 || pln.GPUs.Prefill != 16 || pln.GPUs.Decode != 8 || pln.GPUs.Total != 24 {
			t.Errorf("%s: nodes %d gpus %+v, want 3 nodes, 16 + 8 = 24 GPUs", name, pln.Nodes, pln.GPUs)
		}
		if len(pln.Points) != 1 || pln.Points[0].ResultFile != "results_concurrency_2048_gpus_24_ctx_16_gen_8.json" {
			t.Errorf("%s: points %+v", name, pln.Points)
		}
		if pln.Image.Ref != "lmsysorg/sglang:v0.5.12.post1" {
			t.Errorf("%s: image %q", name, pln.Image.Ref)
		}
	}
	check("--recipe", "--recipe", filepath.Join(recipes, "sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_4p1d_c2048.yaml"))
	check("--config-file", "--config-file", "recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_4p1d_c2048.yaml", "--recipes-root", recipes)
	check("--master --key", "--master", filepath.Join(corpus, "configs", "nvidia-master.yaml"),
		"--key", "dsr1-fp4-b200-dynamo-sglang-mtp", "--point", "8", "--recipes-root", recipes)
	t.Setenv("CONFIG_FILE", "recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_4p1d_c2048.yaml")
	t.Setenv("SLURMBENCH_RECIPES_ROOT", recipes)
	check("CONFIG_FILE env")
}

// TestRenderFallbacksAndOverrides: flags and the workflow's environment
// reach the plan.
func TestRenderFallbacksAndOverrides(t *testing.T) {
	clearRenderEnv(t)
	data := renderData(t)
	profile := filepath.Join(data, "profile.toml")
	recipe := filepath.Join(data, "recipes", "mock-2p1d.yaml")
	type planView struct {
		Name   string `json:"name"`
		RunDir string `json:"run_dir"`
		Slurm  struct {
			JobName string `json:"job_name"`
		} `json:"slurm"`
		Image struct {
			Ref string `json:"ref"`
		} `json:"image"`
		Points []struct {
			Concurrency int `json:"concurrency"`
		} `json:"points"`
		Eval struct {
			Enabled     bool `json:"enabled"`
			Only        bool `json:"only"`
			Concurrency int  `json:"concurrency"`
		} `json:"eval"`
	}
	render := func(args ...string) planView {
		t.Helper()
		out, stderr, code := runRender(t, append([]string{"--json"}, args...)...)
		if code != 0 {
			t.Fatalf("render %v: exit %d: %s", args, code, stderr)
		}
		var v planView
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	concs := func(v planView) []int {
		var out []int
		for _, p := range v.Points {
			out = append(out, p.Concurrency)
		}
		return out
	}

	v := render("-p", profile, "-r", recipe)
	if got := concs(v); len(got) != 2 || got[0] != 8 || got[1] != 32 {
		t.Errorf("recipe concurrencies: %v", got)
	}
	v = render("-p", profile, "-r", recipe, "--conc", "1x2x4", "--image", "slurmbench/mock-engine:v9", "--job-name", "runner-7", "--run-id", "run-42")
	if got := concs(v); len(got) != 3 || got[2] != 4 {
		t.Errorf("--conc: %v", got)
	}
	if v.Image.Ref != "slurmbench/mock-engine:v9" || v.Slurm.JobName != "runner-7" || filepath.Base(v.RunDir) != "run-42" {
		t.Errorf("overrides: %+v", v)
	}
	t.Setenv("SLURMBENCH_PROFILE", profile)
	t.Setenv("CONC_LIST", "16 64")
	t.Setenv("IMAGE", "slurmbench/mock-engine:env")
	t.Setenv("RUNNER_NAME", "GitHub Actions 3") // GitHub's default runner names have spaces
	t.Setenv("RUN_EVAL", "true")
	t.Setenv("EVAL_CONC", "32 64")
	t.Setenv("ISL", "1024")
	// The eval needs paths.gsm8k: give it through a profile copy.
	prof2 := filepath.Join(t.TempDir(), "p.toml")
	text, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	gsm := t.TempDir()
	if err := os.WriteFile(filepath.Join(gsm, "test.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(text), `recipes_root = "recipes"`, `gsm8k = "`+gsm+`"`, 1)
	s = strings.NewReplacer(`"runs"`, `"/shared/runs"`, `"squash"`, `"/shared/squash"`, `"models/mock"`, `"/models/mock"`, `"cache:`, `"/cache:`).Replace(s)
	if err := os.WriteFile(prof2, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURMBENCH_PROFILE", prof2)
	v = render("-r", recipe)
	if got := concs(v); len(got) != 2 || got[0] != 16 || got[1] != 64 {
		t.Errorf("CONC_LIST: %v", got)
	}
	if v.Image.Ref != "slurmbench/mock-engine:env" || v.Slurm.JobName != "GitHub-Actions-3" || !v.Eval.Enabled || v.Eval.Concurrency != 32 {
		t.Errorf("environment fallbacks: %+v", v)
	}
	t.Setenv("EVAL_ONLY", "1")
	v = render("-r", recipe)
	if !v.Eval.Only || len(v.Points) != 0 {
		t.Errorf("EVAL_ONLY: %+v", v)
	}
}

// TestRenderHumanView: the default output names the node map, ports and
// each process's argv, env, mounts and log.
func TestRenderHumanView(t *testing.T) {
	clearRenderEnv(t)
	data := renderData(t)
	out, stderr, code := runRender(t, "-p", filepath.Join(data, "profile.toml"), "-r", filepath.Join(data, "recipes", "mock-2p1d.yaml"))
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"Node map", "Ports", "Processes", "prefill_w0 [prefill] node 0", "argv  ", "mount ", "log   ",
		"results_concurrency_8_gpus_12_ctx_8_gen_4.json", "Health gate: dynamo"} {
		if !strings.Contains(out, want) {
			t.Errorf("human view lacks %q", want)
		}
	}
}

// badCase is one wrong input: it must fail with exit code 2 and exactly
// one line on stderr that names the field.
type badCase struct {
	name    string
	profile string // profile text edit: "old=>new" on profile.toml ("" = unchanged)
	recipe  string // recipe text edit on mock-2p1d.yaml
	args    []string
	env     map[string]string
	field   string // substring naming the field
}

func TestRenderBadInputs(t *testing.T) {
	cases := []badCase{
		// Profile.
		{name: "profile unknown key", profile: "gpus_per_node = 4=>gpus_per_node = 4\ngpu_per_node = 4", field: "slurm.gpu_per_node"},
		{name: "profile unknown table", profile: "[container]=>[containerz]", field: "containerz"},
		{name: "profile wrong type", profile: "gpus_per_node = 4=>gpus_per_node = \"4\"", field: "slurm.gpus_per_node"},
		{name: "profile zero GPUs", profile: "gpus_per_node = 4=>gpus_per_node = 0", field: "slurm.gpus_per_node"},
		{name: "profile negative GPUs", profile: "gpus_per_node = 4=>gpus_per_node = -4", field: "slurm.gpus_per_node"},
		{name: "profile rest transport without rest_url", profile: "rest_url = \"http://127.0.0.1:6820\"=>transport = \"rest\"", field: "slurm.rest_url"},
		{name: "profile unknown transport", profile: "rest_url = \"http://127.0.0.1:6820\"=>transport = \"ssh\"", field: "slurm.transport"},
		{name: "profile bad runtime", profile: "runtime = \"enroot\"=>runtime = \"docker\"", field: "container.runtime"},
		{name: "profile bad time limit", profile: "time_limit = \"00:20:00\"=>time_limit = \"999d\"", field: "slurm.time_limit"},
		{name: "profile bad sbatch directive", profile: "gpus_per_node = 4=>gpus_per_node = 4\ndirectives = { \"mem=0 --x\" = \"\" }", field: "slurm.directives"},
		{name: "profile sbatch directive typo", profile: "gpus_per_node = 4=>gpus_per_node = 4\ndirectives = { segmnet = \"3\" }", field: `sbatch directive "segmnet" is not supported`},
		{name: "profile missing token file", profile: "gpus_per_node = 4=>gpus_per_node = 4\ntoken_file = \"no-such.jwt\"", field: "slurm.token_file"},
		{name: "profile bad mount", profile: "mounts = [\"cache:/cache:ro\"]=>mounts = [\"cache\"]", field: "container.mounts[0]"},
		{name: "profile several problems", profile: "rest_url = \"http://127.0.0.1:6820\"=>rest_url = \"x\"\napi_version = \"v9\"", field: "slurm.rest_url: \"x\" is not an http(s) URL\n  slurm.api_version"},
		{name: "no profile", args: []string{"--profile", ""}, field: "--profile"},
		{name: "profile file missing", args: []string{"--profile", "no-such-profile.toml"}, field: "no-such-profile.toml"},
		// Recipe.
		{name: "recipe unknown key", recipe: "  prefill_nodes: 2=>  prefil_nodes: 2", field: "resources.prefil_nodes"},
		{name: "recipe wrong type", recipe: "  prefill_nodes: 2=>  prefill_nodes: two", field: "resources.prefill_nodes"},
		{name: "recipe zero GPU count", recipe: "  gpus_per_node: 4=>  gpus_per_node: 0", field: "resources.gpus_per_node"},
		{name: "recipe negative GPUs per worker", recipe: "  decode_workers: 1=>  decode_workers: 1\n  gpus_per_decode: -4", field: "resources.gpus_per_decode"},
		{name: "recipe GPUs per node mismatch", recipe: "  gpus_per_node: 4=>  gpus_per_node: 8", field: "resources.gpus_per_node"},
		{name: "workers do not fit", recipe: "  prefill_workers: 2=>  prefill_workers: 3\n  gpus_per_prefill: 4", field: "resources.prefill_workers"},
		{name: "missing model alias", recipe: "  path: mock=>  path: mockx", field: "model.path"},
		{name: "image ref with spaces", recipe: "  container: mock-image=>  container: \"slurmbench/mock engine\"", field: "model.container"},
		{name: "IMAGE with spaces", args: []string{"--image", "slurmbench/mock engine:1"}, field: "IMAGE"},
		{name: "name with slash", recipe: "name: mock-2p1d=>name: mock/2p1d", field: ": name: \"mock/2p1d\""},
		{name: "name with NUL", recipe: "name: mock-2p1d=>name: \"mock\\0\"", field: ": name: \"mock\\x00\""},
		{name: "run id with slash", args: []string{"--run-id", "a/b"}, field: "run id: \"a/b\""},
		{name: "empty conc list", recipe: "  concurrencies: \"8x32\"=>  concurrencies: []", field: "benchmark.concurrencies"},
		{name: "bad --conc", args: []string{"--conc", "8xmany"}, field: "--conc"},
		{name: "zero --conc", args: []string{"--conc", "0"}, field: "--conc"},
		{name: "repeated --conc", args: []string{"--conc", "8x8"}, field: "--conc"},
		{name: "bad CONC_LIST", env: map[string]string{"CONC_LIST": "8;32"}, field: "CONC_LIST"},
		{name: "ISL mismatch", args: []string{"--isl", "8192"}, field: "benchmark.isl"},
		{name: "OSL mismatch env", env: map[string]string{"OSL": "1024"}, field: "benchmark.osl"},
		{name: "bad RUN_EVAL", env: map[string]string{"RUN_EVAL": "maybe"}, field: "RUN_EVAL"},
		{name: "bad EVAL_ONLY", env: map[string]string{"EVAL_ONLY": "2"}, field: "EVAL_ONLY"},
		{name: "bad EVAL_CONC", env: map[string]string{"EVAL_CONC": "lots"}, field: "EVAL_CONC"},
		{name: "bad bench client", args: []string{"--bench-client", "aiperf"}, field: "--bench-client"},
		{name: "bad eval client", args: []string{"--eval-client", "harness"}, field: "--eval-client"},
		{name: "duplicate key", recipe: "  decode_workers: 1=>  decode_workers: 1\n  decode_workers: 2", field: "resources.decode_workers"},
		{name: "unsupported feature", recipe: "  type: sa-bench=>  type: custom", field: "benchmark.type"},
		{name: "bad recipe time limit", recipe: "health_check:=>slurm:\n  time_limit: forever\nhealth_check:", field: "slurm.time_limit"},
		{name: "recipe file missing", args: []string{"--recipe", "no-such-recipe.yaml"}, field: "--recipe: "},
		{name: "req_rate with words", recipe: "  req_rate: inf=>  req_rate: \"5 per second\"", field: "benchmark.req_rate"},
		{name: "req_rate nan", recipe: "  req_rate: inf=>  req_rate: nan", field: "benchmark.req_rate"},
		{name: "req_rate +Inf", recipe: "  req_rate: inf=>  req_rate: \"+Inf\"", field: "benchmark.req_rate"},
		{name: "range ratio nan", recipe: "  req_rate: inf=>  req_rate: inf\n  random_range_ratio: .nan", field: "benchmark.random_range_ratio"},
		{name: "extra_mount comma", recipe: "health_check:=>extra_mount: [\"/a,/b:/c\"]\nhealth_check:", field: "extra_mount"},
		{name: "extra_mount space", recipe: "health_check:=>extra_mount: [\"/a b:/c\"]\nhealth_check:", field: "extra_mount"},
		{name: "extra_mount 4th field", recipe: "health_check:=>extra_mount: [\"/a:/c:ro:x\"]\nhealth_check:", field: "extra_mount"},
		{name: "extra_mount relative source", recipe: "health_check:=>extra_mount: [\"data:/c\"]\nhealth_check:", field: "extra_mount"},
		{name: "time_limit overflow", recipe: "health_check:=>slurm:\n  time_limit: \"999999999999\"\nhealth_check:", field: "slurm.time_limit"},
		{name: "second YAML document", recipe: "  req_rate: inf=>  req_rate: inf\n---\nname: other\ncolour: red", field: "a second YAML document"},
		{name: "alias bomb", recipe: "health_check:=>x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nx1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\nx2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\nx3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]\nx4: &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]\nx5: &a5 [*a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4]\nhealth_check:", field: "aliases expand to more than"},
		{name: "recipe too large", args: []string{"--recipe", "/dev/zero"}, field: "larger than the 16 MiB limit"},
		{name: "override without variant", recipe: "name: mock-2p1d=>base: {}\nname: mock-2p1d", field: "expands to 0 configs"},
		{name: "unknown variant flag", args: []string{"--variant", "override_x"}, field: "not an override file"},
		{name: "profile $VAR path", profile: "[container]=>[container]\nenroot = \"$HOME/bin/enroot\"", field: "container.enroot"},
		{name: "profile ${VAR} path", profile: "[container]=>[container]\nenroot = \"${TOOLS}/enroot\"", field: "${TOOLS} is not expanded"},
		{name: "unknown container alias", recipe: "  container: mock-image=>  container: mock-imagez", field: "model.container: \"mock-imagez\" is not a [containers] alias"},
		{name: "profile too large", args: []string{"--profile", "/dev/zero"}, field: "larger than the 16 MiB limit"},
		{name: "no recipe at all", args: []string{"--recipe", ""}, field: "--recipe"},
		{name: "positional argument", args: []string{"extra.yaml"}, field: "--recipe"},
		{name: "CONFIG_FILE escapes root", args: []string{"--recipe", "", "--config-file", "recipes/../../x.yaml"}, field: "CONFIG_FILE"},
		{name: "CONFIG_FILE selector", args: []string{"--recipe", "", "--config-file", "recipes/mock-2p1d.yaml:zip_override_x[0]"}, field: "not an override file"},
		{name: "CONFIG_FILE missing", env: map[string]string{"CONFIG_FILE": "recipes/none.yaml"}, args: []string{"--recipe", ""}, field: "CONFIG_FILE \"recipes/none.yaml\""},
		{name: "master key missing", args: []string{"--recipe", "", "--master", "@master", "--key", "mock-2p1d"}, field: "no key \"mock-2p1d\" (did you mean mock-2p1d-test?)"},
		{name: "master without key", args: []string{"--recipe", "", "--master", "@master"}, field: "--key"},
		{name: "master point out of range", args: []string{"--recipe", "", "--master", "@master", "--key", "mock-2p1d-test", "--point", "7"}, field: "--point"},
		{name: "master point needed", args: []string{"--recipe", "", "--master", "@master", "--key", "mock-2p1d-test"}, field: "--point"},
		{name: "master selector point", args: []string{"--recipe", "", "--master", "@master", "--key", "mock-2p1d-test", "--point", "1"}, field: "variant \"zip_override_x[0]\" given, but"},
		{name: "master escaping point", args: []string{"--recipe", "", "--master", "@master", "--key", "mock-2p1d-test", "--point", "2"}, field: "CONFIG_FILE"},
		{name: "bad --point", args: []string{"--point", "two"}, field: `--point: "two" is not a number`},
		{name: "unknown flag", args: []string{"--concurrency", "8"}, field: "concurrency"},
	}
	data := renderData(t)
	profileText, err := os.ReadFile(filepath.Join(data, "profile.toml"))
	if err != nil {
		t.Fatal(err)
	}
	recipeText, err := os.ReadFile(filepath.Join(data, "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bad-input cases", len(cases))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearRenderEnv(t)
			// Each case gets its own copy of the test data to edit.
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "recipes"), 0o755); err != nil {
				t.Fatal(err)
			}
			write := func(name string, text []byte, edit string) string {
				s := string(text)
				if edit != "" {
					old, new, ok := strings.Cut(edit, "=>")
					if !ok || !strings.Contains(s, old) {
						t.Fatalf("test bug: edit %q does not apply to %s", edit, name)
					}
					s = strings.Replace(s, old, new, 1)
				}
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
				return path
			}
			profile := write("profile.toml", profileText, tc.profile)
			recipe := write(filepath.Join("recipes", "mock-2p1d.yaml"), recipeText, tc.recipe)
			master, err := os.ReadFile(filepath.Join(data, "master.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			masterPath := write("master.yaml", master, "")
			args := []string{"--profile", profile, "--recipe", recipe}
			for _, a := range tc.args {
				if a == "@master" {
					a = masterPath
				}
				args = append(args, a)
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			t.Chdir(dir) // relative names in a case resolve in its own directory
			out, stderr, code := runRender(t, args...)
			if code != exitcode.Config {
				t.Errorf("exit code %d, want %d (stderr %q)", code, exitcode.Config, stderr)
			}
			if out != "" {
				t.Errorf("wrote to stdout: %q", out)
			}
			// One error: its first line, then one indented line per further
			// problem (issue #25 row 10: one problem per line).
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if !strings.HasPrefix(stderr, "slurmbench: ") || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr is not one error:\n%s", stderr)
			}
			for _, l := range lines[1:] {
				if !strings.HasPrefix(l, "  ") {
					t.Errorf("stderr line %q is neither the error nor one of its problems:\n%s", l, stderr)
				}
			}
			if !strings.Contains(stderr, tc.field) {
				t.Errorf("stderr does not name %q:\n%s", tc.field, stderr)
			}
		})
	}
	if len(cases) < 30 {
		t.Errorf("%d bad-input cases, want at least 30", len(cases))
	}
}

// TestRenderGolden pins render's human view and --brief for the mock
// topology, job section included; the testdata directory's absolute path
// is @TESTDATA@ in the files.
func TestRenderGolden(t *testing.T) {
	clearRenderEnv(t)
	data := fixedLengthCopy(t, renderData(t))
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"mock-2p1d.txt", nil},
		{"mock-2p1d-brief.txt", []string{"--brief"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-p", filepath.Join(data, "profile.toml"), "-r", filepath.Join(data, "recipes", "mock-2p1d.yaml")}, tc.args...)
			out, stderr, code := runRender(t, args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			golden.Assert(t, filepath.Join("testdata", "render", "golden", tc.name), []byte(strings.ReplaceAll(out, data, "@TESTDATA@")))
		})
	}
}

// fixedLengthCopy copies dir to a directory whose path has the same length
// in every checkout (the temp directory plus a fixed-width name): render
// wraps argv lines at a column, so the golden output must not depend on
// how deep the clone sits.
func fixedLengthCopy(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(os.TempDir(), fmt.Sprintf("sbgold%08x", rand.Uint32()))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dst) })
	real, err := filepath.EvalSymlinks(dst)
	if err != nil {
		t.Fatal(err)
	}
	return real
}
