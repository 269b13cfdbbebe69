package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// badInput is one wrong input to `slurmbench run`: an edit of the profile
// or recipe ("old=>new"), extra flags and environment. field is what the
// one-line error must name.
type badInput struct {
	name    string
	profile string
	recipe  string
	args    []string
	env     []string
	field   string
	// noProfile drops the --profile flag (SLURMBENCH_PROFILE names it).
	noProfile bool
}

func badInputs() []badInput {
	return []badInput{
		// Profile.
		{name: "profile unknown key", profile: "gpus_per_node = 4=>gpus_per_node = 4\ngpu_per_node = 4", field: "slurm.gpu_per_node"},
		{name: "profile unknown table", profile: "[container]=>[containerz]", field: "containerz"},
		{name: "profile wrong type", profile: "gpus_per_node = 4=>gpus_per_node = \"4\"", field: "slurm.gpus_per_node"},
		{name: "profile zero GPUs", profile: "gpus_per_node = 4=>gpus_per_node = 0", field: "slurm.gpus_per_node"},
		{name: "profile GPUs per node mismatch", profile: "gpus_per_node = 4=>gpus_per_node = 8", field: "gpus_per_node"},
		{name: "profile rest_url not http", profile: "rest_url = \"http=>rest_url = \"ftp", field: "slurm.rest_url"},
		{name: "profile no partition", profile: "partition = =>#partition = ", field: "slurm.partition"},
		{name: "profile bad runtime", profile: "runtime = \"enroot\"=>runtime = \"docker\"", field: "container.runtime"},
		{name: "profile bad time limit", profile: "time_limit = \"00:10:00\"=>time_limit = \"999d\"", field: "slurm.time_limit"},
		{name: "profile bad api version", profile: "gpus_per_node = 4=>gpus_per_node = 4\napi_version = \"v9\"", field: "slurm.api_version"},
		{name: "profile bad token_env", profile: "gpus_per_node = 4=>gpus_per_node = 4\ntoken_env = \"MY-JWT\"", field: "slurm.token_env"},
		{name: "profile token_env unset", profile: "gpus_per_node = 4=>gpus_per_node = 4\ntoken_env = \"E2E_NO_SUCH_JWT\"", field: "E2E_NO_SUCH_JWT"},
		{name: "profile missing token file", profile: "gpus_per_node = 4=>gpus_per_node = 4\ntoken_file = \"no-such.jwt\"", field: "slurm.token_file"},
		{name: "profile bad compute arch", profile: "gpus_per_node = 4=>gpus_per_node = 4\ncompute_arch = \"sparc\"", field: "slurm.compute_arch"},
		{name: "profile bad directive name", profile: "gpus_per_node = 4=>gpus_per_node = 4\ndirectives = { \"mem=0 --x\" = \"\" }", field: "slurm.directives"},
		{name: "profile unsupported directive", profile: "gpus_per_node = 4=>gpus_per_node = 4\ndirectives = { begin = \"now+1hour\" }", field: "begin"},
		{name: "profile bad directive value", profile: "gpus_per_node = 4=>gpus_per_node = 4\ndirectives = { mem = \"lots\" }", field: "mem"},
		{name: "profile bad owner", profile: "[paths]=>[paths]\nowner = \"nobody\"", field: "owner"},
		{name: "profile bad import_on", profile: "runtime = \"enroot\"=>runtime = \"enroot\"\nimport_on = \"moon\"", field: "container.import_on"},
		{name: "profile bad mount", profile: "runtime = \"enroot\"=>runtime = \"enroot\"\nmounts = [\"cache\"]", field: "container.mounts[0]"},
		{name: "profile bad passthrough name", profile: "passthrough = [\"HF_TOKEN\"]=>passthrough = [\"HF TOKEN\"]", field: "env.passthrough"},
		{name: "profile bad bench client", profile: "client = \"native\"=>client = \"aiperf\"", field: "benchmark.client"},
		{name: "profile TOML syntax", profile: "[slurm]=>[slurm", field: "profile"},
		{name: "no profile", args: []string{"--profile", ""}, field: "--profile"},
		{name: "--in not a job id", args: []string{"--in", "4242x"}, field: "--in \"4242x\""},
		{name: "profile file missing", args: []string{"--profile", "no-such-profile.toml"}, field: "no-such-profile.toml"},
		{name: "SLURMBENCH_PROFILE missing", noProfile: true, env: []string{"SLURMBENCH_PROFILE=/no/such/profile.toml"}, field: "/no/such/profile.toml"},
		// Recipe.
		{name: "recipe unknown key", recipe: "  prefill_nodes: 2=>  prefil_nodes: 2", field: "resources.prefil_nodes"},
		{name: "recipe wrong type", recipe: "  prefill_nodes: 2=>  prefill_nodes: two", field: "resources.prefill_nodes"},
		{name: "recipe zero GPUs per node", recipe: "  gpus_per_node: 4=>  gpus_per_node: 0", field: "resources.gpus_per_node"},
		{name: "recipe GPUs per node mismatch", recipe: "  gpus_per_node: 4=>  gpus_per_node: 8", field: "resources.gpus_per_node"},
		{name: "recipe negative GPUs per worker", recipe: "  decode_workers: 1=>  decode_workers: 1\n  gpus_per_decode: -4", field: "resources.gpus_per_decode"},
		{name: "workers do not fit", recipe: "  prefill_workers: 2=>  prefill_workers: 3\n  gpus_per_prefill: 4", field: "resources.prefill_workers"},
		{name: "missing model alias", recipe: "  path: mock=>  path: mockx", field: "model.path"},
		{name: "image ref with spaces", recipe: "  container: mock-image=>  container: \"slurmbench/mock engine\"", field: "model.container"},
		{name: "name with slash", recipe: "name: NAME=>name: e2e/bad", field: "name"},
		{name: "name with NUL", recipe: "name: NAME=>name: \"e2e\\0bad\"", field: "name"},
		{name: "name empty", recipe: "name: NAME=>name: \"\"", field: "name"},
		{name: "duplicate key", recipe: "  decode_workers: 1=>  decode_workers: 1\n  decode_workers: 2", field: "resources.decode_workers"},
		{name: "unsupported benchmark", recipe: "  type: sa-bench=>  type: custom", field: "benchmark.type"},
		{name: "unknown backend", recipe: "  type: mock=>  type: tensorrt", field: "backend.type"},
		{name: "bad recipe time limit", recipe: "health_check:=>slurm:\n  time_limit: forever\nhealth_check:", field: "slurm.time_limit"},
		{name: "empty concurrencies", recipe: "  concurrencies: \"4\"=>  concurrencies: []", field: "benchmark.concurrencies"},
		{name: "negative ISL", recipe: "  isl: 64=>  isl: -64", field: "benchmark.isl"},
		{name: "YAML syntax", recipe: "resources:=>resources: [", field: "recipe"},
		{name: "recipe file missing", args: []string{"--recipe", "no-such-recipe.yaml"}, field: "--recipe"},
		{name: "no recipe at all", args: []string{"--recipe", ""}, field: "--recipe"},
		// Flags.
		{name: "positional argument", args: []string{"extra.yaml"}, field: "--recipe"},
		{name: "unknown flag", args: []string{"--concurrency", "8"}, field: "concurrency"},
		{name: "bad --conc", args: []string{"--conc", "8xmany"}, field: "--conc"},
		{name: "zero --conc", args: []string{"--conc", "0"}, field: "--conc"},
		{name: "repeated --conc", args: []string{"--conc", "8x8"}, field: "--conc"},
		{name: "ISL mismatch", args: []string{"--isl", "8192"}, field: "benchmark.isl"},
		{name: "bad --point", args: []string{"--point", "two"}, field: "point"},
		{name: "bad --cancel-wait", args: []string{"--cancel-wait", "soon"}, field: "cancel-wait"},
		{name: "bad bench client", args: []string{"--bench-client", "aiperf"}, field: "--bench-client"},
		{name: "bad eval client", args: []string{"--eval-client", "harness"}, field: "--eval-client"},
		{name: "bad --eval-conc", args: []string{"--eval-conc", "0"}, field: "--eval-conc"},
		{name: "repeated --eval-conc", args: []string{"--eval-conc", "8 32 8"}, field: "--eval-conc"},
		{name: "run id with slash", args: []string{"--run-id", "a/b"}, field: "run id: \"a/b\""},
		{name: "run id of an existing run", args: []string{"--run-id", "@existing"}, field: "--run-id"},
		{name: "master without key", args: []string{"--master", "m.yaml"}, field: "--key"},
		{name: "stage dir is a file", args: []string{"--stage-dir", "@file"}, field: "stage"},
		// Environment (the workflow's variables).
		{name: "bad CONC_LIST", env: []string{"CONC_LIST=8;32"}, field: "CONC_LIST"},
		{name: "negative CONC_LIST", env: []string{"CONC_LIST=-8"}, field: "CONC_LIST"},
		{name: "ISL mismatch env", env: []string{"ISL=8192"}, field: "benchmark.isl"},
		{name: "OSL mismatch env", env: []string{"OSL=1024"}, field: "benchmark.osl"},
		{name: "ISL not a number", env: []string{"ISL=lots"}, field: "ISL"},
		{name: "bad RUN_EVAL", env: []string{"RUN_EVAL=maybe"}, field: "RUN_EVAL"},
		{name: "bad EVAL_ONLY", env: []string{"EVAL_ONLY=2"}, field: "EVAL_ONLY"},
		{name: "bad EVAL_CONC", env: []string{"EVAL_CONC=lots"}, field: "EVAL_CONC"},
		{name: "CONFIG_FILE missing", args: []string{"--recipe", ""}, env: []string{"CONFIG_FILE=recipes/none.yaml"}, field: "CONFIG_FILE"},
		{name: "CONFIG_FILE escapes root", args: []string{"--recipe", ""}, env: []string{"CONFIG_FILE=recipes/../../x.yaml"}, field: "CONFIG_FILE"},
		{name: "CONFIG_FILE selector", args: []string{"--recipe", ""}, env: []string{"CONFIG_FILE=recipes/a.yaml:zip_override_x[0]"}, field: "selector"},
		{name: "RESULT_FILENAME with slash", env: []string{"RESULT_FILENAME=a/b"}, field: "RESULT_FILENAME"},
		{name: "RESULT_FILENAME with newline", env: []string{"RESULT_FILENAME=a\nb"}, field: "RESULT_FILENAME"},
		// Image references and names.
		{name: "IMAGE with spaces", env: []string{"IMAGE=slurmbench/mock engine:1"}, field: "IMAGE"},
		{name: "IMAGE upper case", env: []string{"IMAGE=Slurmbench/Mock:1"}, field: "IMAGE"},
		{name: "IMAGE empty tag", env: []string{"IMAGE=slurmbench/mock:"}, field: "IMAGE"},
		{name: "IMAGE bad digest", env: []string{"IMAGE=slurmbench/mock@sha256:abc"}, field: "IMAGE"},
		{name: "IMAGE bad port", env: []string{"IMAGE=registry:port/mock:1"}, field: "IMAGE"},
		{name: "--image with shell", args: []string{"--image", "mock;rm -rf /"}, field: "IMAGE"},
		{name: "container alias with spaces", profile: "mock-image = \"slurmbench/mock-engine:e2e\"=>mock-image = \"slurmbench/mock engine\"", field: "model.container: image reference \"slurmbench/mock engine\""},
	}
}

// TestBadInput: every wrong input fails before anything is submitted, with
// exit code 2 and one line naming what is wrong.
func TestBadInput(t *testing.T) {
	t.Parallel()
	c := setup(t)
	cases := badInputs()
	if len(cases) <= 80 {
		t.Errorf("%d bad-input cases; docs/testing.md says more than 80", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := c.proxy(t)
			name := uniqueName("e2e-bad")
			r := c.prepare(t, runOpts{name: name, restURL: p.URL, recipe: mockRecipe{Name: name}.String(), env: tc.env})
			edit := func(path, edit string) {
				if edit == "" {
					return
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				old, new, _ := strings.Cut(strings.ReplaceAll(edit, "NAME", name), "=>")
				if !strings.Contains(string(b), old) {
					t.Fatalf("test bug: edit %q does not apply to %s:\n%s", edit, path, b)
				}
				if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			edit(r.profile, tc.profile)
			edit(r.recipe, tc.recipe)
			for _, a := range tc.args {
				switch a {
				case "@file":
					a = r.recipe
				case "@existing":
					// A run directory that is already there.
					a = name + "-existing"
					if err := os.MkdirAll(filepath.Join(c.Root, "runs", a), 0o755); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { os.RemoveAll(filepath.Join(c.Root, "runs", a)) })
				}
				r.opts.args = append(r.opts.args, a)
			}
			if tc.noProfile {
				r.profile = ""
			}
			before := runDirsNamed(t, c, name)
			r.start()
			code := r.wait(2 * time.Minute)
			stderr := r.stderr.String()
			if code != 2 {
				t.Errorf("exit %d, want 2\n%s", code, r.output())
			}
			// One error: its line, then one indented line per further problem.
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if !strings.HasPrefix(stderr, "slurmbench: ") {
				t.Errorf("stderr is not one error:\n%s", stderr)
			}
			for _, l := range lines[1:] {
				if !strings.HasPrefix(l, "  ") {
					t.Errorf("stderr line %q is neither the error nor one of its problems:\n%s", l, stderr)
				}
			}
			if !strings.Contains(stderr, tc.field) {
				t.Errorf("the error does not name %q:\n%s", tc.field, stderr)
			}
			if out := r.stdout.String(); out != "" {
				t.Errorf("stdout: %q", out)
			}
			if n := submits(p); n != 0 {
				t.Errorf("%d submits reached the proxy, want 0", n)
			}
			if after := runDirsNamed(t, c, name); after != before {
				t.Errorf("a run directory was created (%d before, %d after)", before, after)
			}
		})
	}
}

// runDirsNamed counts run directories of recipe name.
func runDirsNamed(t *testing.T, c *cluster, name string) int {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(c.Root, "runs", name+"-*"))
	return len(m)
}
