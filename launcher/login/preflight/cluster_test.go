package preflight

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// TestPreflightOnCluster runs every check, the probe job included, against
// the project's test cluster (under the cluster lock: see RULES). Every
// check passes, and the probe sees the nodes' architecture, GPUs and the
// enroot the profile names.
func TestPreflightOnCluster(t *testing.T) {
	cl := slurmtest.Cluster(t)
	shared := slurmtest.SharedDir(t)
	dir, err := os.MkdirTemp(shared, "preflight-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"runs", "squash", "models/mock", "bin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	standin, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "enroot-standin", "enroot"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "enroot"), standin, 0o755); err != nil {
		t.Fatal(err)
	}
	owner := ""
	if os.Geteuid() == 0 {
		owner = `owner = "1000:1000"` // jobs run as the cluster's user, not root
		os.Chmod(dir, 0o777)
	}
	text := fmt.Sprintf(`[slurm]
rest_url = %q
user = %q
partition = %q
gpus_per_node = 4
time_limit = "00:05:00"
token_env = "SLURM_JWT"
[paths]
runs_dir = "runs"
squash_dir = "squash"
%s
[models]
mock = "models/mock"
[container]
runtime = "enroot"
enroot = %q
`, cl.RestURL, cl.User, cl.Partition, owner, filepath.Join(dir, "bin", "enroot"))
	path := filepath.Join(dir, "profile.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	r := Run(context.Background(), Options{Profile: p})
	noProbe := time.Since(start)
	var b bytes.Buffer
	r.WriteText(&b)
	if !r.OK() {
		t.Fatalf("want every check to pass:\n%s", b.String())
	}
	t.Logf("preflight without probe: %d checks in %s\n%s", len(r.Checks), noProbe, b.String())

	var progress bytes.Buffer
	r = Run(context.Background(), Options{Profile: p, Probe: true, ProbeTimeout: 2 * time.Minute, Progress: &progress})
	b.Reset()
	r.WriteText(&b)
	if !r.OK() {
		t.Fatalf("want every check to pass with the probe:\n%s\n%s", b.String(), progress.String())
	}
	probe := check(t, r, "probe")
	t.Logf("probe: %s", probe.Detail)
	// The test cluster loads pyxis 0.24.0 (testcluster/up.sh, built from
	// third_party/pyxis); the profile's enroot here is the stand-in.
	for _, want := range []string{profile.GoArch(), "4 GPUs", "enroot 3.5.0", "pyxis 0.24.0"} {
		if !strings.Contains(probe.Detail, want) {
			t.Errorf("probe detail %q lacks %q", probe.Detail, want)
		}
	}
	// With the enroot the test cluster installs on every node (built from
	// third_party/enroot), the probe reports its real version.
	real := *p
	real.Container.Enroot = "/usr/local/bin/enroot"
	real.Container.Runtime = profile.RuntimePyxis
	r = Run(context.Background(), Options{Profile: &real, Probe: true, ProbeTimeout: 2 * time.Minute})
	if probe := check(t, r, "probe"); !r.OK() || !strings.Contains(probe.Detail, "enroot 4.1.2") || !strings.Contains(probe.Detail, "pyxis 0.24.0") {
		b.Reset()
		r.WriteText(&b)
		t.Errorf("probe with the real enroot and pyxis: %q, want enroot 4.1.2 and pyxis 0.24.0\n%s", probe.Detail, b.String())
	}

	// A wrong partition: one ✗, naming the fix, exit 2.
	bad := *p
	bad.Slurm.Partition = "nosuch"
	r = Run(context.Background(), Options{Profile: &bad})
	if f := r.Failed(); len(f) != 1 || f[0].Name != "partition" || !strings.Contains(f[0].Fix, "slurm.partition") || r.ExitCode() != 2 {
		b.Reset()
		r.WriteText(&b)
		t.Errorf("wrong partition:\n%s", b.String())
	}
}
