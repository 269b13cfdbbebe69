// Package clustertest sets up end-to-end runs on the project's test cluster
// (or any cluster exporting the same variables): a static slurmbench binary
// and the stand-in enroot in the shared directory, and a profile pointing at
// both. Test code only.
package clustertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// Env is a prepared cluster.
type Env struct {
	Cluster slurmtest.ClusterEnv
	Shared  string // shared directory (same path on host and nodes)
	Root    string // per-test-binary directory under Shared
	Binary  string // static slurmbench built from this checkout
	Enroot  string // the stand-in enroot, in the shared directory
	Owner   string // UID:GID jobs run as ("" = same as us)
}

var (
	buildOnce sync.Once
	buildErr  error
	built     string
)

// RepoRoot is the module root (where go.mod is).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Setup returns the cluster environment, building the binary once per test
// process. It skips (or fails under SLURMBENCH_REQUIRE_CLUSTER=1) without a
// cluster.
func Setup(t testing.TB) *Env {
	t.Helper()
	c := slurmtest.Cluster(t)
	shared := slurmtest.SharedDir(t)
	root := filepath.Join(shared, "e2e")
	repo := RepoRoot(t)
	buildOnce.Do(func() {
		dir := filepath.Join(root, "bin")
		if buildErr = os.MkdirAll(dir, 0o755); buildErr != nil {
			return
		}
		built = filepath.Join(dir, "slurmbench")
		cmd := exec.Command("go", "build", "-trimpath", "-o", built, "./cmd/slurmbench") //nolint:noctx // built once for every test of the process (sync.Once): no one test's context
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building slurmbench: %w\n%s", err, out)
			return
		}
		src, err := os.ReadFile(filepath.Join(repo, "testdata", "enroot-standin", "enroot"))
		if err != nil {
			buildErr = err
			return
		}
		buildErr = os.WriteFile(filepath.Join(dir, "enroot"), src, 0o755)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	e := &Env{Cluster: c, Shared: shared, Root: root, Binary: built, Enroot: filepath.Join(root, "bin", "enroot")}
	if os.Geteuid() == 0 && c.User != "root" {
		// The test cluster runs jobs as its user (uid 1000); run dirs are
		// made by root here.
		e.Owner = envOr("SLURMBENCH_TEST_OWNER", "1000:1000")
	}
	return e
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Profile writes a profile for the cluster into dir and returns its path.
// extra is appended verbatim (more TOML tables).
func (e *Env) Profile(t testing.TB, dir, extra string) string {
	t.Helper()
	owner := ""
	if e.Owner != "" {
		owner = fmt.Sprintf("owner = %q\n", e.Owner)
	}
	body := fmt.Sprintf(`cluster = "e2e"

[slurm]
rest_url = %q
user = %q
partition = %q
time_limit = "00:10:00"
gpus_per_node = 4

[paths]
runs_dir = %q
squash_dir = %q
%s
[models]
mock = %q

[containers]
mock-image = "slurmbench/mock-engine:e2e"

[container]
runtime = "enroot"
enroot = %q

[env]
passthrough = ["HF_TOKEN"]

[health]
interval_seconds = 1

[benchmark]
client = "native"
%s`, e.Cluster.RestURL, e.Cluster.User, e.Cluster.Partition,
		filepath.Join(e.Root, "runs"), filepath.Join(e.Root, "squash"), owner,
		filepath.Join(e.Root, "models", "mock"), e.Enroot, extra)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// No paths.gsm8k: evals use the GSM8K splits built into the binary.
	for _, d := range []string{"runs", "squash", filepath.Join("models", "mock")} {
		if err := os.MkdirAll(filepath.Join(e.Root, d), 0o777); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(filepath.Join(e.Root, d), 0o777)
	}
	p := filepath.Join(dir, "profile.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// JobEnv is the environment a test job gets.
func JobEnv(extra ...string) []string {
	return append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, extra...)
}

// Quote is for readable failure messages.
func Quote(argv []string) string { return strings.Join(argv, " ") }
