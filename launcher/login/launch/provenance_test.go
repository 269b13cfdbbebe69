package launch

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/fingerprint"
	"github.com/slurmbench/slurmbench/launcher/login/runs"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
)

// runs show reads the run's manifest and shows the image, the edits, the
// engine versions, the GPUs per node, what each step ran and what the probes
// could not read; a run without a manifest shows none of it.
func TestRunsShowProvenance(t *testing.T) {
	dir := t.TempDir()
	layout := rundir.New(dir)
	if err := os.MkdirAll(layout.Results, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := runs.ReadProvenance(dir); p != nil || err != nil {
		t.Fatalf("no manifest: %v, %v; want nothing", p, err)
	}
	recs := []fingerprint.Record{
		{Step: "prefill_w0", Host: "n1", Argv: []string{"python3", "-m", "sglang.launch_server", "--tp", "4"}, EnvNames: []string{"A", "B"},
			Packages: []fingerprint.Package{{Name: "sglang", Version: "0.5.2"}, {Name: "torch", Version: "2.8.0"}},
			GPUs:     []fingerprint.GPU{{Index: "0", Name: "NVIDIA B200", Driver: "570.1"}, {Index: "1", Name: "NVIDIA B200", Driver: "570.1"}},
			Arch:     "arm64", OS: "Ubuntu 24.04", CPU: fingerprint.CPU{Model: "NVIDIA Grace"}, CUDA: "12.9.1"},
		{Step: "benchmark", Host: "n1", Argv: []string{"/bin/slurmbench", "bench"}, Notes: []string{"nvidia-smi not found in PATH: GPU model and driver unknown"}},
		{Step: "eval", Host: "n1", Argv: []string{"/bin/slurmbench", "eval"}, Notes: []string{"nvidia-smi not found in PATH: GPU model and driver unknown"}},
	}
	prov := results.Provenance{ImageRef: "lmsysorg/sglang:v0.5.2", ImageDigest: "sha256:abc", Overrides: []string{"benchmark.isl=1024"},
		Runtime: results.RuntimeOf(recs, []string{"prefill_w0", "benchmark", "eval", "frontend"}, nil)}
	m, err := results.BuildManifest(layout.Results, prov)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.WriteManifest(layout.Results, m, atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	p, err := runs.ReadProvenance(dir)
	if err != nil || p == nil {
		t.Fatalf("ReadProvenance: %v, %v", p, err)
	}
	var out bytes.Buffer
	if err := writeRun(&out, runs.Run{ID: "r1", Dir: dir, State: "ended", Provenance: p}); err != nil {
		t.Fatal(err)
	}
	id := p.Runtime.Software[0].ID
	// Columns are aligned by tabwriter: compare with runs of spaces as one.
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	got := squash(out.String())
	for _, want := range []string{
		"image             lmsysorg/sglang:v0.5.2 @ sha256:abc",
		"override          benchmark.isl=1024",
		"software " + id + "  sglang 0.5.2, torch 2.8.0 (2 packages)",
		"node n1           2 × NVIDIA B200, driver 570.1; arm64, NVIDIA Grace, Ubuntu 24.04, CUDA 12.9.1",
		"process prefill_w0  on n1, software " + id + ", 2 env names: python3 -m sglang.launch_server --tp 4",
		"probe note        nvidia-smi not found in PATH: GPU model and driver unknown (2 steps)",
		"no fingerprint    frontend",
	} {
		if !strings.Contains(got, squash(want)) {
			t.Errorf("runs show lacks %q:\n%s", want, out.String())
		}
	}
	// An unreadable manifest is a problem, not a crash.
	if err := os.WriteFile(filepath.Join(layout.Results, results.ManifestName), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.ReadProvenance(dir); err == nil || !strings.Contains(err.Error(), results.ManifestName) {
		t.Errorf("broken manifest: %v, want an error naming it", err)
	}
}
