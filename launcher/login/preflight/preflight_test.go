package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// env is one test's profile and directories.
type env struct {
	dir     string // the profile's directory
	profile string // its path
}

// fields fill the profile template; tests change one.
type fields struct {
	RestURL, Partition, Account, APIVersion, TokenCommand, Runs, Squash, Model string
	GPUs                                                                       int
}

const profileTemplate = `
cluster = "test"
[slurm]
rest_url = %q
partition = %q
account = %q
api_version = %q
gpus_per_node = %d
time_limit = "00:20:00"
token_env = "PREFLIGHT_TEST_JWT"
%s
[paths]
runs_dir = %q
squash_dir = %q
[models]
mock = %q
[containers]
local = "./image.sqsh"
[container]
runtime = "enroot"
enroot = "/bin/true"
`

// newEnv writes a profile whose every check passes against url, after
// edit changes its fields.
func newEnv(t testing.TB, url string, edit func(*fields)) (env, *profile.Profile) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"runs", "squash", "models/mock"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "image.sqsh"), []byte("hsqs"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := fields{RestURL: url, Partition: "debug", GPUs: 4, Runs: "runs", Squash: "squash", Model: "models/mock"}
	if edit != nil {
		edit(&f)
	}
	tc := ""
	if f.TokenCommand != "" {
		tc = "token_command = " + f.TokenCommand
	}
	text := fmt.Sprintf(profileTemplate, f.RestURL, f.Partition, f.Account, f.APIVersion, f.GPUs, tc, f.Runs, f.Squash, f.Model)
	path := filepath.Join(dir, "profile.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return env{dir: dir, profile: path}, p
}

// failedNames are the names of r's failed checks.
func failedNames(r Report) []string {
	var out []string
	for _, c := range r.Failed() {
		out = append(out, c.Name)
	}
	return out
}

func check(t *testing.T, r Report, name string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return Check{}
}

// closedURL is an http URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// unwritableDir is a directory path the test cannot create a file in, even
// as root (a test machine often runs tests as root).
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() == 0 {
		return "/proc/1/slurmbench-squash"
	}
	d := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(d, 0o555); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "squash")
}

func TestPreflightProfile(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithTokens("good-token"))
	t.Setenv("PREFLIGHT_TEST_JWT", "good-token")

	tests := []struct {
		name   string
		edit   func(*fields)
		setup  func(t *testing.T)
		failed []string // the failed checks, in order
		layer  exitcode.Code
		detail string // in the first failure's detail
		fix    string // in the first failure's fix
		// skipped is a check that must say it was skipped, not passed
		// (issue #25 row 3: slurmrestd, not contacted without a token).
		skipped string
	}{
		{name: "all pass", failed: nil},
		{name: "wrong partition", edit: func(f *fields) { f.Partition = "gpu" },
			failed: []string{"partition"}, layer: exitcode.Config, detail: `"gpu" is not a partition of this cluster (it has: debug)`, fix: "set slurm.partition in"},
		{name: "bad token", setup: func(t *testing.T) { t.Setenv("PREFLIGHT_TEST_JWT", "stale-token") },
			failed: []string{"token"}, layer: exitcode.Config, detail: "slurmrestd refused the token", fix: "export a fresh $PREFLIGHT_TEST_JWT"},
		{name: "no token at all", setup: func(t *testing.T) { t.Setenv("PREFLIGHT_TEST_JWT", "") },
			failed: []string{"slurmrestd"}, layer: exitcode.Config, detail: "no slurmrestd token", fix: "slurm.token_command"},
		{name: "failing token command", setup: func(t *testing.T) { t.Setenv("PREFLIGHT_TEST_JWT", "") },
			edit:   func(f *fields) { f.TokenCommand = `["sh", "./missing-token.sh"]` },
			failed: []string{"token"}, layer: exitcode.Config, detail: "minting a token with sh", fix: "make slurm.token_command", skipped: "slurmrestd"},
		{name: "missing model dir", edit: func(f *fields) { f.Model = "models/nowhere" },
			failed: []string{"model mock"}, layer: exitcode.Config, detail: "models/nowhere does not exist", fix: "set models.mock in"},
		{name: "unwritable squash dir", edit: func(f *fields) { f.Squash = unwritableDir(t) },
			failed: []string{"squash-dir"}, layer: exitcode.Config, detail: "cannot be created", fix: "paths.squash_dir"},
		{name: "dead slurmrestd", edit: func(f *fields) { f.RestURL = closedURL(t) },
			failed: []string{"slurmrestd"}, layer: exitcode.Slurm, detail: "cannot reach http://127.0.0.1:", fix: "check slurm.rest_url in"},
		{name: "unserved pinned API version", edit: func(f *fields) { f.APIVersion = "v0.0.44" },
			failed: []string{"api-version"}, layer: exitcode.Config, detail: "does not serve the pinned API v0.0.44", fix: "remove slurm.api_version"},
		{name: "more GPUs than the nodes have", edit: func(f *fields) { f.GPUs = 8 },
			failed: []string{"nodes"}, layer: exitcode.Config, detail: "no node of partition debug has 8 GPUs (4 nodes, at most 4 GPUs each)", fix: "slurm.gpus_per_node"},
		{name: "account allowed", edit: func(f *fields) { f.Account = "benchmarks" }, failed: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup(t)
			}
			_, p := newEnv(t, fake.URL, tt.edit)
			r := Run(context.Background(), Options{Profile: p})
			var names []string
			for _, c := range r.Checks {
				names = append(names, strings.Fields(c.Name)[0])
			}
			if got := strings.Join(names, ","); got != "transport,slurmrestd,api-version,token,partition,nodes,account,runs-dir,squash-dir,model,image" {
				t.Errorf("checks %s: every check must be reported once, in order", got)
			}
			for _, c := range r.Checks {
				want := map[bool]string{true: "passed", false: "failed"}[c.OK]
				if c.Skipped {
					want = "skipped"
				}
				if c.State != want {
					t.Errorf("check %s: state %q, want %q (ok %v, skipped %v)", c.Name, c.State, want, c.OK, c.Skipped)
				}
			}
			if tt.skipped != "" && check(t, r, tt.skipped).State != "skipped" {
				t.Errorf("check %s: %+v, want it skipped", tt.skipped, check(t, r, tt.skipped))
			}
			if got := strings.Join(failedNames(r), ","); got != strings.Join(tt.failed, ",") {
				var b bytes.Buffer
				r.WriteText(&b)
				t.Fatalf("failed checks = %q, want %q\n%s", got, strings.Join(tt.failed, ","), b.String())
			}
			if len(tt.failed) == 0 {
				if r.Err() != nil || r.ExitCode() != exitcode.OK {
					t.Fatalf("Err() = %v, ExitCode() = %d for a passing report", r.Err(), r.ExitCode())
				}
				return
			}
			f := r.Failed()[0]
			if f.Exit != tt.layer || r.ExitCode() != tt.layer || exitcode.Of(r.Err()) != tt.layer {
				t.Errorf("exit code = %d (report %d, error %d), want %d", f.Exit, r.ExitCode(), exitcode.Of(r.Err()), tt.layer)
			}
			if !strings.Contains(f.Detail, tt.detail) {
				t.Errorf("detail = %q, want it to contain %q", f.Detail, tt.detail)
			}
			if !strings.Contains(f.Fix, tt.fix) {
				t.Errorf("fix = %q, want it to contain %q", f.Fix, tt.fix)
			}
		})
	}
}

// TestPreflightTokenCommandRelativeToProfile: token_command names a script
// next to the profile and runs from another working directory.
func TestPreflightTokenCommandRelativeToProfile(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithTokens("minted-token"))
	t.Setenv("PREFLIGHT_TEST_JWT", "")
	e, _ := newEnv(t, fake.URL, func(f *fields) { f.TokenCommand = `["sh", "./token.sh"]` })
	if err := os.WriteFile(filepath.Join(e.dir, "token.sh"), []byte("echo SLURM_JWT=minted-token\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	p, err := profile.Load(e.profile)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(context.Background(), Options{Profile: p})
	if !r.OK() {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Fatalf("want every check to pass:\n%s", b.String())
	}
	if c := check(t, r, "token"); !strings.Contains(c.Detail, "token_command sh") {
		t.Errorf("token detail = %q, want the token command named", c.Detail)
	}
}

func TestPreflightNodes(t *testing.T) {
	t.Setenv("PREFLIGHT_TEST_JWT", "any")
	pln := func(nodes int) *plan.Plan {
		return &plan.Plan{Nodes: nodes, Slurm: plan.Slurm{Partition: "debug", GPUsPerNode: 4, Nodes: nodes, TimeLimitMinutes: 20}}
	}
	tests := []struct {
		name   string
		nodes  int // in the cluster
		down   []string
		need   int
		layer  exitcode.Code // OK = passes
		detail string
	}{
		{name: "enough idle", nodes: 4, need: 3, detail: "4 of 4 nodes in debug usable with 4 GPUs (4 idle); the recipe needs 3"},
		{name: "too few in the partition", nodes: 2, need: 3, layer: exitcode.Config, detail: "partition debug has 2 nodes with 4 GPUs; the recipe needs 3"},
		{name: "drained below the need", nodes: 4, down: []string{"n1", "n2"}, need: 3, layer: exitcode.Slurm, detail: "only 2 of partition debug's 4 nodes"},
		{name: "one drained and still enough", nodes: 4, down: []string{"n4"}, need: 3, detail: "3 of 4 nodes in debug usable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := slurmtest.NewFake(t, slurmtest.WithCluster(tt.nodes, 4))
			for _, n := range tt.down {
				fake.SetNodeState(n, "IDLE", "DRAIN")
			}
			_, p := newEnv(t, fake.URL, nil)
			r := &run{o: Options{Profile: p, Plan: pln(tt.need)}, p: p}
			r.slurmChecks(context.Background())
			c := check(t, Report{Checks: r.checks}, "nodes")
			if c.OK != (tt.layer == exitcode.OK) || c.Exit != tt.layer {
				t.Errorf("nodes check ok=%v exit=%d, want exit %d: %s", c.OK, c.Exit, tt.layer, c.Detail)
			}
			if !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("detail = %q, want %q", c.Detail, tt.detail)
			}
		})
	}
}

// TestPreflightPlan checks what a recipe's run uses: its model, its image
// (imported or importable), its job description and its partition's
// time limit.
func TestPreflightPlan(t *testing.T) {
	fake := slurmtest.NewFake(t)
	t.Setenv("PREFLIGHT_TEST_JWT", "any")
	e, p := newEnv(t, fake.URL, nil)
	base := func() *plan.Plan {
		return &plan.Plan{
			RunID: "r", RunDir: filepath.Join(p.Paths.RunsDir, "r"), PlanFile: filepath.Join(p.Paths.RunsDir, "r", "plan.json"),
			Binary: filepath.Join(p.Paths.RunsDir, "r", "bin", "slurmbench"), Nodes: 2,
			Slurm: plan.Slurm{JobName: "r", Partition: "debug", GPUsPerNode: 4, Nodes: 2, TimeLimitMinutes: 20},
			Model: plan.Model{Source: p.Models["mock"]},
			Image: plan.Image{Squash: filepath.Join(e.dir, "image.sqsh")},
		}
	}
	tests := []struct {
		name   string
		edit   func(*plan.Plan)
		failed string
		detail string
	}{
		{name: "passes"},
		{name: "directive typo", edit: func(pl *plan.Plan) { pl.Slurm.Directives = map[string]string{"segmnet": "2"} },
			failed: "job-spec", detail: `sbatch directive "segmnet" is not supported`},
		{name: "missing model", edit: func(pl *plan.Plan) { pl.Model.Source = filepath.Join(e.dir, "models", "gone") },
			failed: "model", detail: "does not exist"},
		{name: "missing local squash", edit: func(pl *plan.Plan) { pl.Image.Squash = filepath.Join(e.dir, "gone.sqsh") },
			failed: "image", detail: "gone.sqsh does not exist"},
		{name: "importable ref", edit: func(pl *plan.Plan) {
			pl.Image = plan.Image{Ref: "nginx:1.27.4", Squash: filepath.Join(p.Paths.SquashDir, "nginx+1.27.4.sqsh")}
		}},
		{name: "hf model is fetched in the job", edit: func(pl *plan.Plan) { pl.Model.Source = "hf:org/model" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := base()
			if tt.edit != nil {
				tt.edit(pl)
			}
			r := Run(context.Background(), Options{Profile: p, Plan: pl})
			got := strings.Join(failedNames(r), ",")
			if got != tt.failed {
				var b bytes.Buffer
				r.WriteText(&b)
				t.Fatalf("failed = %q, want %q\n%s", got, tt.failed, b.String())
			}
			if tt.failed != "" && !strings.Contains(r.Failed()[0].Detail, tt.detail) {
				t.Errorf("detail = %q, want %q", r.Failed()[0].Detail, tt.detail)
			}
		})
	}
	t.Run("oci runtime imports here with skopeo and umoci", func(t *testing.T) {
		pl := base()
		pl.Runtime = profile.RuntimeOCI
		pl.Image = plan.Image{Ref: "nginx:1.27.4", Squash: filepath.Join(p.Paths.SquashDir, "nginx_1.27.4.oci")}
		op := *p
		op.Container.Runtime, op.Container.ImportOn = profile.RuntimeOCI, "login"
		op.Container.Skopeo, op.Container.Umoci = "/bin/true", filepath.Join(e.dir, "no-umoci")
		r := Run(context.Background(), Options{Profile: &op, Plan: pl})
		if f := r.Failed(); len(f) != 1 || f[0].Name != "image" || !strings.Contains(f[0].Detail, "no-umoci") || !strings.Contains(f[0].Fix, "container.skopeo and container.umoci") {
			t.Errorf("umoci missing: %+v", f)
		}
		op.Container.Umoci = "/bin/true"
		if r := Run(context.Background(), Options{Profile: &op, Plan: pl}); !r.OK() || !strings.Contains(check(t, r, "image").Detail, "/bin/true and /bin/true") {
			t.Errorf("both there: %+v", check(t, r, "image"))
		}
	})
	t.Run("time limit over the partition's", func(t *testing.T) {
		// The recorded partition has no MaxTime; an unlimited one never fails.
		pl := base()
		pl.Slurm.TimeLimitMinutes = 100000
		r := Run(context.Background(), Options{Profile: p, Plan: pl})
		if !check(t, r, "partition").OK {
			t.Fatalf("an unlimited partition refused a long job: %+v", check(t, r, "partition"))
		}
	})
}

// TestReportText: one line per check, ✓/✗/–, the fix on the failed line;
// the JSON has ok, the layer and every check.
func TestReportText(t *testing.T) {
	r := Report{Checks: []Check{
		{Name: "slurmrestd", OK: true, Detail: "http://x answers"},
		{Name: "partition", Exit: exitcode.Config, Detail: `"gpu" is not a partition`, Fix: "set slurm.partition in /p.toml"},
		{Name: "account", OK: true, Skipped: true, Detail: "skipped: not set"},
	}}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "✓ slurmrestd  http://x answers\n" +
		"✗ partition   \"gpu\" is not a partition; fix: set slurm.partition in /p.toml\n" +
		"– account     skipped: not set\n"
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	j, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		OK       bool          `json:"ok"`
		ExitCode exitcode.Code `json:"exit_code"`
		Checks   []Check       `json:"checks"`
	}
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	if back.OK || back.ExitCode != exitcode.Config || len(back.Checks) != 3 || back.Checks[1].Fix == "" {
		t.Errorf("JSON = %s", j)
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "preflight partition: \"gpu\" is not a partition; fix: set slurm.partition") {
		t.Errorf("Err() = %v", err)
	}
}

func TestParseNodeReport(t *testing.T) {
	tests := []struct {
		out  string
		want NodeReport
		err  bool
	}{
		{out: "arch=aarch64\nhost=n1\nslurm_gpus=4\ncuda_visible_devices=0,1,2,3\nnvidia_smi=4\nenroot=3.5.0\npyxis=yes\n",
			want: NodeReport{Host: "n1", Arch: "aarch64", GPUs: 4, Enroot: "3.5.0", Pyxis: true}},
		{out: "arch=x86_64\nhost=node1\nslurm_gpus=4\nenroot=4.1.2\npyxis=yes\npyxis_version=0.24.0\n",
			want: NodeReport{Host: "node1", Arch: "x86_64", GPUs: 4, Enroot: "4.1.2", Pyxis: true, PyxisVersion: "0.24.0"}},
		{out: "arch=x86_64\nhost=node1\nslurm_gpus=4\nenroot=missing\npyxis=no\n",
			want: NodeReport{Host: "node1", Arch: "x86_64", GPUs: 4}},
		{out: "arch=x86_64\nhost=node1\nslurm_gpus=\nenroot=\npyxis=no\n",
			want: NodeReport{Host: "node1", Arch: "x86_64", GPUs: -1, Enroot: "(version unknown)"}},
		// Slurm's own containers: oci.conf's runtime and its version; none.
		{out: "arch=x86_64\nhost=node1\nslurm_gpus=4\nenroot=missing\npyxis=no\noci=crun version 1.21\n",
			want: NodeReport{Host: "node1", Arch: "x86_64", GPUs: 4, OCI: "crun version 1.21"}},
		{out: "arch=x86_64\nhost=node1\nslurm_gpus=4\nenroot=missing\npyxis=yes\noci=missing\n",
			want: NodeReport{Host: "node1", Arch: "x86_64", GPUs: 4, Pyxis: true}},
		{out: "sh: uname: not found\n", err: true},
	}
	for _, tt := range tests {
		got, err := ParseNodeReport(tt.out)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseNodeReport(%q) = %+v, %v; want %+v (error %v)", tt.out, got, err, tt.want, tt.err)
		}
	}
}

// BenchmarkPreflight measures a whole profile preflight against the fake
// slurmrestd (no probe): the bar is under a second.
func BenchmarkPreflight(b *testing.B) {
	fake := slurmtest.NewFake(b)
	b.Setenv("PREFLIGHT_TEST_JWT", "any")
	_, p := newEnv(b, fake.URL, nil)
	b.ResetTimer()
	for range b.N {
		if r := Run(context.Background(), Options{Profile: p}); !r.OK() {
			b.Fatal(r.Err())
		}
	}
}
