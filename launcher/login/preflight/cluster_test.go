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
	// The test cluster has no pyxis: Slurm's own containers, oci.conf
	// driving Debian's crun (testcluster/up.sh); the profile's enroot here
	// is the stand-in.
	for _, want := range []string{profile.GoArch(), "4 GPUs", "enroot 3.5.0", "pyxis no", "oci crun version "} {
		if !strings.Contains(probe.Detail, want) {
			t.Errorf("probe detail %q lacks %q", probe.Detail, want)
		}
	}
	// A profile for the oci runtime passes the probe there; one for pyxis
	// does not, and says what to change.
	ociProfile := *p
	ociProfile.Container.Runtime = profile.RuntimeOCI
	r = Run(context.Background(), Options{Profile: &ociProfile, Probe: true, ProbeTimeout: 2 * time.Minute})
	if probe := check(t, r, "probe"); !r.OK() || !strings.Contains(probe.Detail, "oci crun") {
		b.Reset()
		r.WriteText(&b)
		t.Errorf("probe for the oci runtime: %q, want a pass naming crun\n%s", probe.Detail, b.String())
	}
	pyxisProfile := *p
	pyxisProfile.Container.Runtime = profile.RuntimePyxis
	r = Run(context.Background(), Options{Profile: &pyxisProfile, Probe: true, ProbeTimeout: 2 * time.Minute})
	if probe := check(t, r, "probe"); r.OK() || !strings.Contains(probe.Detail, "no pyxis") {
		t.Errorf("probe for pyxis on a cluster without it: ok %v, %q; want a failure saying there is no pyxis", r.OK(), probe.Detail)
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
