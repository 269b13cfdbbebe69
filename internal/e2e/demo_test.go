package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/browsertest"
)

// TestDemoFromLoneClone is a new user's first command: `make demo` in a
// fresh clone that has no ../shared beside it (the eval's GSM8K data is
// built into the binary). It clones what is committed, so it proves the
// repository, not the working tree. `make demo` submits through
// slurmrestd, `make demo TRANSPORT=cli` through Slurm's commands.
func TestDemoFromLoneClone(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		// One after the other: both demos share the cluster's demo directory.
		t.Run(transport, func(t *testing.T) { testDemoFromLoneClone(t, setup(t).over(t, transport), transport) })
	}
}

func testDemoFromLoneClone(t *testing.T, c *cluster, transport string) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skipf("no make: %v", err)
	}
	parent := t.TempDir()
	clone := filepath.Join(parent, "slurmbench")
	if out, err := exec.Command("git", "clone", "--quiet", "--no-hardlinks", c.repo, clone).CombinedOutput(); err != nil {
		t.Skipf("cannot clone %s (not a git checkout?): %v\n%s", c.repo, err, out)
	}
	if _, err := os.Stat(filepath.Join(parent, "shared")); err == nil {
		t.Fatal("the clone has a ../shared")
	}
	t0 := time.Now()
	cmd := exec.Command("make", "demo", "TRANSPORT="+transport)
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "SLURM_REST_URL="+c.Cluster.RestURL)
	out, err := cmd.CombinedOutput()
	t.Logf("make demo in a lone clone: %v in %s", err, time.Since(t0).Round(time.Second))
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
	if transport == "cli" && !strings.Contains(string(out), "profiles/testcluster-cli.toml") {
		t.Errorf("make demo TRANSPORT=cli did not use the cli profile:\n%s", out)
	}
	// The demo's recipe is schema 2 (the layout InferenceX's tree uses)
	// and runs end to end: two SA-Bench points, the gsm8k eval against
	// the 95 % answer key, the power package from the profile's mock
	// exporters.
	if b, err := os.ReadFile(filepath.Join(clone, "examples", "mock-2p1d.yaml")); err != nil || !strings.Contains(string(b), "\nschema: 2\n") {
		t.Errorf("examples/mock-2p1d.yaml is not a schema-2 recipe (%v)", err)
	}
	for _, re := range []string{`mock-2p1d: succeeded`, `gsm8k: strict-match 0\.9[0-9]+`, `power c32: [0-9.]+ J per output token`} {
		if !regexp.MustCompile(re).Match(out) {
			t.Errorf("make demo output lacks /%s/:\n%s", re, out)
		}
	}
	if strings.Contains(string(out), "shared/data") {
		t.Errorf("make demo mentions ../shared's data:\n%s", out)
	}
	if got := stagedResults(t, filepath.Join(clone, "demo-out")); len(got) != 2 {
		t.Errorf("staged %v in demo-out/, want c8 and c32:\n%s", got, out)
	}
	// The demo runs on a real container path (Slurm's own containers,
	// crun through oci.conf, the image from the cluster's registry): its
	// manifest names the digest the registry holds for the image it pushed.
	m := demoImageLine.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("make demo did not say which image it pushed:\n%s", out)
	}
	if got := stagedManifest(t, filepath.Join(clone, "demo-out")).Provenance.ImageDigest; got != m[1] {
		t.Errorf("staged manifest image_digest %q, want the registry's %s", got, m[1])
	}
	// The run's page: in demo-out/, named by the summary, and a real
	// browser draws every section with both points on the Pareto chart.
	page := filepath.Join(clone, "demo-out", "report.html")
	if !strings.Contains(string(out), "report: "+page) && !strings.Contains(string(out), "report.html") {
		t.Errorf("make demo does not name its report:\n%s", out)
	}
	shot := ""
	if a := os.Getenv("SLURMBENCH_ARTIFACTS"); a != "" {
		shot = filepath.Join(a, "demo-report.png")
		_ = os.MkdirAll(a, 0o755)
	}
	p := browsertest.Render(t, page, shot, 1200, 3000)
	browsertest.CheckReport(t, p, 2, "what-ran", "points", "pareto", "distributions", "power", "eval")
	if got := len(regexp.MustCompile(`class="bar"`).FindAllString(p.DOM, -1)); got == 0 {
		t.Errorf("the demo's page draws no TTFT/ITL bars: no per-request records reached it")
	}
}

// demoImageLine is scripts/demo.sh's line naming the image it pushed.
var demoImageLine = regexp.MustCompile(`(?m)^demo: mock-engine image \S+@(sha256:[0-9a-f]{64})$`)
