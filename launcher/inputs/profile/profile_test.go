package profile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// minimal is the smallest valid profile; cases append to or edit it.
const minimal = `
[slurm]
rest_url = "http://slurmrestd:6820"
partition = "batch"
gpus_per_node = 8

[paths]
runs_dir = "/shared/runs"
squash_dir = "/shared/squash"
`

// writeProfile writes text as p.toml in a fresh directory and returns its path.
func writeProfile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// realDir is dir with symlinks resolved, as Load reports paths.
func realDir(t *testing.T, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLoadMinimalDefaults(t *testing.T) {
	p, err := Load(writeProfile(t, minimal))
	if err != nil {
		t.Fatal(err)
	}
	if p.Slurm.TokenEnv != "SLURM_JWT" {
		t.Errorf("token_env default = %q, want SLURM_JWT", p.Slurm.TokenEnv)
	}
	if p.Container.Runtime != RuntimePyxis {
		t.Errorf("runtime default = %q, want pyxis", p.Container.Runtime)
	}
	if p.Benchmark.Client != "native" {
		t.Errorf("benchmark client default = %q, want native", p.Benchmark.Client)
	}
	if p.Paths.RunsDir != "/shared/runs" || p.Paths.SquashDir != "/shared/squash" {
		t.Errorf("absolute paths changed: %q %q", p.Paths.RunsDir, p.Paths.SquashDir)
	}
	if !filepath.IsAbs(p.Path) {
		t.Errorf("Path %q is not absolute", p.Path)
	}
}

// The shipped example profiles must load: they are what a user copies.
func TestExampleProfilesLoad(t *testing.T) {
	for file, gpus := range map[string]int{"b200-dgxc.toml": 8, "gb300-nv.toml": 4} {
		t.Run(file, func(t *testing.T) {
			p, err := Load(filepath.Join("..", "..", "..", "profiles", file))
			if err != nil {
				t.Fatal(err)
			}
			if p.Slurm.GPUsPerNode != gpus {
				t.Errorf("gpus_per_node = %d, want %d", p.Slurm.GPUsPerNode, gpus)
			}
			if len(p.Models) == 0 {
				t.Error("no [models]")
			}
			for alias, dir := range p.Models {
				if !filepath.IsAbs(dir) {
					t.Errorf("models.%s = %q is not absolute", alias, dir)
				}
			}
		})
	}
}

func TestUnknownKeyIsNamed(t *testing.T) {
	cases := []struct{ extra, want string }{
		{"colour = \"red\"\n", "unknown key colour"},
		{"[slurm]\ngpus_per_nod = 8\n", "unknown key slurm.gpus_per_nod"},
		{"[paths]\nrun_dir = \"/x\"\n", "unknown key paths.run_dir"},
		{"[container]\nruntim = \"none\"\n", "unknown key container.runtim"},
		{"[healthcheck]\nmax_attempts = 3\n", "unknown key healthcheck"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			// Appending [slurm] twice is a TOML error; merge into the table instead.
			var text string
			if strings.HasPrefix(tc.extra, "[slurm]\n") || strings.HasPrefix(tc.extra, "[paths]\n") {
				head, body, _ := strings.Cut(tc.extra, "\n")
				text = strings.Replace(minimal, head+"\n", head+"\n"+body, 1)
			} else if !strings.HasPrefix(tc.extra, "[") {
				text = tc.extra + minimal
			} else {
				text = minimal + tc.extra
			}
			_, err := Load(writeProfile(t, text))
			if err == nil {
				t.Fatal("loaded a profile with an unknown key")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestRelativePathsResolveAgainstProfileDir(t *testing.T) {
	root := realDir(t, t.TempDir())
	dir := filepath.Join(root, "site", "profiles")
	for _, d := range []string{dir, filepath.Join(dir, "recipes"), filepath.Join(root, "site", "ws")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "jwt"), []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("pem"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := `
[slurm]
rest_url = "http://slurmrestd:6820"
partition = "batch"
gpus_per_node = 4
token_file = "jwt"
ca_file = "ca.pem"
use_env_proxy = true

[paths]
runs_dir = "runs"
squash_dir = "../squash"
recipes_root = "./recipes"
workspace = "../ws"

[models]
m = "models/m"
"dotted.alias" = "/abs/model"
h = "hf:org/name"

[containers]
local = "./images/x.sqsh"
remote = "nvcr.io/nvidia/x:1"

[container]
mounts = ["data:/data:ro", "/abs/cache:/cache"]
`
	path := filepath.Join(dir, "p.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// Load through a relative path from an unrelated working directory:
	// nothing may resolve against the working directory.
	elsewhere := filepath.Join(root, "elsewhere")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(elsewhere)
	p, err := Load(filepath.Join("..", "site", "profiles", "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(root, "site")
	checks := []struct{ name, got, want string }{
		{"path", p.Path, path},
		{"slurm.token_file", p.Slurm.TokenFile, filepath.Join(dir, "jwt")},
		{"slurm.ca_file", p.Slurm.CAFile, filepath.Join(dir, "ca.pem")},
		{"slurm.use_env_proxy", fmt.Sprint(p.Slurm.UseEnvProxy), "true"},
		{"paths.runs_dir", p.Paths.RunsDir, filepath.Join(dir, "runs")},
		{"paths.squash_dir", p.Paths.SquashDir, filepath.Join(site, "squash")},
		{"paths.recipes_root", p.Paths.RecipesRoot, filepath.Join(dir, "recipes")},
		{"paths.workspace", p.Paths.Workspace, filepath.Join(site, "ws")},
		{"models.m", p.Models["m"], filepath.Join(dir, "models", "m")},
		{"models.dotted.alias", p.Models["dotted.alias"], "/abs/model"},
		{"models.h", p.Models["h"], "hf:org/name"},
		{"containers.local", p.Containers["local"], filepath.Join(dir, "images", "x.sqsh")},
		{"containers.remote", p.Containers["remote"], "nvcr.io/nvidia/x:1"},
		{"container.mounts[0]", p.Container.Mounts[0], filepath.Join(dir, "data") + ":/data:ro"},
		{"container.mounts[1]", p.Container.Mounts[1], "/abs/cache:/cache"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

// A profile reached through a symlinked directory resolves its relative
// paths against where the file really is.
func TestProfileThroughSymlink(t *testing.T) {
	root := realDir(t, t.TempDir())
	real := filepath.Join(root, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(minimal, `runs_dir = "/shared/runs"`, `runs_dir = "runs"`, 1)
	if err := os.WriteFile(filepath.Join(real, "p.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p, err := Load(filepath.Join(link, "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != filepath.Join(real, "p.toml") {
		t.Errorf("Path = %q, want the symlink-free %q", p.Path, filepath.Join(real, "p.toml"))
	}
	if p.Paths.RunsDir != filepath.Join(real, "runs") {
		t.Errorf("runs_dir = %q, want %q", p.Paths.RunsDir, filepath.Join(real, "runs"))
	}
}

func TestTokenFileMustExist(t *testing.T) {
	text := strings.Replace(minimal, "gpus_per_node = 8", "gpus_per_node = 8\ntoken_file = \"missing.jwt\"", 1)
	_, err := Load(writeProfile(t, text))
	if err == nil || !strings.Contains(err.Error(), "slurm.token_file") || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing token file: err = %v, want slurm.token_file ... no such file", err)
	}
}

func TestMissingProfileFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.toml"))
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("err = %v, want no such file", err)
	}
}

// TestValidationNamesField: each broken setting is refused with its TOML
// key in the message.
func TestValidationNamesField(t *testing.T) {
	cases := []struct {
		name    string
		old     string // text in minimal to replace ("" = append)
		new     string
		field   string
		wantErr bool
	}{
		{"no rest_url with transport rest", `rest_url = "http://slurmrestd:6820"`, `transport = "rest"`, "slurm.rest_url", true},
		{"no rest_url: auto", `rest_url = "http://slurmrestd:6820"`, ``, "", false},
		{"no rest_url: cli", `rest_url = "http://slurmrestd:6820"`, `transport = "cli"`, "", false},
		{"transport neither", `rest_url = "http://slurmrestd:6820"`, `rest_url = "http://slurmrestd:6820"` + "\ntransport = \"ssh\"", "slurm.transport", true},
		{"rest_url not http", `rest_url = "http://slurmrestd:6820"`, `rest_url = "slurmrestd:6820"`, "slurm.rest_url", true},
		{"no partition", `partition = "batch"`, ``, "slurm.partition", true},
		{"zero gpus", `gpus_per_node = 8`, `gpus_per_node = 0`, "slurm.gpus_per_node", true},
		{"negative gpus", `gpus_per_node = 8`, `gpus_per_node = -4`, "slurm.gpus_per_node", true},
		{"gpus wrong type", `gpus_per_node = 8`, `gpus_per_node = "8"`, "slurm.gpus_per_node", true},
		{"bad time limit", `gpus_per_node = 8`, "gpus_per_node = 8\ntime_limit = \"999d\"", "slurm.time_limit", true},
		{"good time limit", `gpus_per_node = 8`, "gpus_per_node = 8\ntime_limit = \"1-00:00:00\"", "", false},
		{"bad api version", `gpus_per_node = 8`, "gpus_per_node = 8\napi_version = \"v0.0.39\"", "slurm.api_version", true},
		{"bad token env", `gpus_per_node = 8`, "gpus_per_node = 8\ntoken_env = \"1JWT\"", "slurm.token_env", true},
		{"bad arch", `gpus_per_node = 8`, "gpus_per_node = 8\ncompute_arch = \"arm64\"", "slurm.compute_arch", true},
		{"bad directive", `gpus_per_node = 8`, "gpus_per_node = 8\ndirectives = { \"mem;rm\" = \"0\" }", "slurm.directives", true},
		{"dash directive", `gpus_per_node = 8`, "gpus_per_node = 8\ndirectives = { \"--mem\" = \"0\" }", "slurm.directives", true},
		{"good directive", `gpus_per_node = 8`, "gpus_per_node = 8\ndirectives = { segment = \"3\", exclusive = \"\" }", "", false},
		{"no runs_dir", `runs_dir = "/shared/runs"`, ``, "paths.runs_dir", true},
		{"no squash_dir", `squash_dir = "/shared/squash"`, ``, "paths.squash_dir", true},
		{"no squash_dir without containers", `squash_dir = "/shared/squash"`, "[container]\nruntime = \"none\"", "", false},
		{"bad runtime", "", "[container]\nruntime = \"docker\"", "container.runtime", true},
		{"bad mount", "", "[container]\nmounts = [\"/only-host\"]", "container.mounts[0]", true},
		{"relative container side", "", "[container]\nmounts = [\"/a:b\"]", "container.mounts[0]", true},
		{"bad mount option", "", "[container]\nmounts = [\"/a:/b:rx\"]", "container.mounts[0]", true},
		{"bad client", "", "[benchmark]\nclient = \"aiperf\"", "benchmark.client", true},
		{"bad passthrough", "", "[env]\npassthrough = [\"HF TOKEN\"]", "env.passthrough", true},
		{"bad passthrough prefix", "", "[env]\npassthrough_prefixes = [\"MY-LAB_\"]", "env.passthrough_prefixes", true},
		{"passthrough prefix", "", "[env]\npassthrough_prefixes = [\"MYLAB_\"]", "", false},
		{"bad env set", "", "[env]\nset = { \"A-B\" = \"1\" }", "env.set", true},
		{"negative attempts", "", "[health]\nmax_attempts = -1", "health.max_attempts", true},
		{"negative interval", "", "[health]\ninterval_seconds = -1", "health.interval_seconds", true},
		{"tilde path", `runs_dir = "/shared/runs"`, `runs_dir = "~/runs"`, "paths.runs_dir", true},
		{"comma path", `runs_dir = "/shared/runs"`, `runs_dir = "/shared/a,b"`, "paths.runs_dir", true},
		{"nul path", `runs_dir = "/shared/runs"`, `runs_dir = "/shared/a\u0000b"`, "paths.runs_dir", true},
		{"missing recipes root", `runs_dir = "/shared/runs"`, "runs_dir = \"/shared/runs\"\nrecipes_root = \"no-such-dir\"", "paths.recipes_root", true},
		{"gsm8k under ~", `runs_dir = "/shared/runs"`, "runs_dir = \"/shared/runs\"\ngsm8k = \"~/gsm8k\"", "paths.gsm8k", true},
		{"bad model path", "", "[models]\nm = \"~/m\"", "models.m", true},
		{"bad GPU mask variable", "", "[defaults]\nvisible_devices_env = \"ROCR-VISIBLE\"", "defaults.visible_devices_env", true},
		{"ROCm GPU mask", "", "[defaults]\nvisible_devices_env = \"ROCR_VISIBLE_DEVICES\"\nnginx_raise_ulimit = false", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := minimal + "\n" + tc.new + "\n"
			if tc.old != "" {
				if !strings.Contains(minimal, tc.old) {
					t.Fatalf("test bug: %q not in the minimal profile", tc.old)
				}
				text = strings.Replace(minimal, tc.old, tc.new, 1)
			}
			_, err := Load(writeProfile(t, text))
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded; want an error naming %s", tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
}

func TestParseTimeLimit(t *testing.T) {
	good := []struct {
		in   string
		mins int
	}{
		{"30", 30},
		{"1", 1},
		{"30:00", 30},
		{"1:30", 2}, // MM:SS, seconds round up
		{"0:59", 1},
		{"04:00:00", 240},
		{"00:20:00", 20},
		{"1:00:01", 61},
		{"1-0", 1440},
		{"2-3", 2*1440 + 180},
		{"1-2:30", 1440 + 150},
		{"1-00:00:00", 1440},
		{"0-00:00:30", 1},
		{"4h", 240}, // Go's forms too: one parser for every duration
		{"1d12h", 36 * 60},
		{"30d", 30 * 1440},
	}
	for _, tc := range good {
		got, err := ParseTimeLimit(tc.in)
		if err != nil {
			t.Errorf("ParseTimeLimit(%q): %v", tc.in, err)
			continue
		}
		if got != tc.mins {
			t.Errorf("ParseTimeLimit(%q) = %d, want %d", tc.in, got, tc.mins)
		}
	}
	// 200000 days (288,000,000 min) passed validation once and wrapped
	// time.Duration: the job went out without a time limit.
	bad := []string{"200000-00:00:00", "288000000", "106751-23:48:00", "", "0", "00:00:00", "abc", "999d", "999-00:00:00", "4q", "1:2:3:4", "-5", "1-", "-1-00", "1-2:3:4:5", "1:-2", "1.5", " 30", "1-a"}
	for _, in := range bad {
		if got, err := ParseTimeLimit(in); err == nil {
			t.Errorf("ParseTimeLimit(%q) = %d, want an error", in, got)
		}
	}
}

// TestTimeLimitMinutes: up --time-limit rounds up and refuses what no
// time limit can hold, naming the limit.
func TestTimeLimitMinutes(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
		err  string
	}{
		{90 * time.Second, 2, ""},
		{4 * time.Hour, 240, ""},
		{30 * time.Second, 1, ""}, // Slurm rounds a partial minute up
		{0, 0, "must be positive"},
		{time.Duration(math.MaxInt64), 0, "more than the most allowed, 30d"},
		{31 * 24 * time.Hour, 0, "more than the most allowed, 30d"},
	} {
		got, err := TimeLimitMinutes(tc.d)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("TimeLimitMinutes(%s) = %d, %v; want %d, %q", tc.d, got, err, tc.want, tc.err)
		}
	}
}

func TestCanonicalMaybe(t *testing.T) {
	root := realDir(t, t.TempDir())
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	got, err := CanonicalMaybe(filepath.Join(root, "link", "not", "yet"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "real", "not", "yet"); got != want {
		t.Errorf("CanonicalMaybe through a link = %q, want %q", got, want)
	}
	got, err = CanonicalMaybe("/no-such-top/x/y")
	if err != nil || got != "/no-such-top/x/y" {
		t.Errorf("CanonicalMaybe of a missing absolute path = %q, %v", got, err)
	}
	if _, err := Canonical(filepath.Join(root, "link", "missing")); err == nil {
		t.Error("Canonical accepted a missing path")
	}
}
