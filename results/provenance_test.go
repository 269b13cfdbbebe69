package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/fingerprint"
)

// Identical package sets are listed once and named by every process that
// ran them; engines are picked out under pip's name normalisation; each
// host's GPUs once; plan steps without a record are missing.
func TestRuntimeOf(t *testing.T) {
	engine := []fingerprint.Package{{Name: "SGLang", Version: "0.5.2"}, {Name: "flashinfer_python", Version: "0.3.1"}, {Name: "numpy", Version: "2.1"}}
	gpus := []fingerprint.GPU{{Index: "0", Name: "NVIDIA B200", Driver: "570.1"}, {Index: "1", Name: "NVIDIA B200", Driver: "570.1"}}
	recs := []fingerprint.Record{
		{Step: "prefill_w0", Host: "n1", Argv: []string{"python3", "-m", "sglang.launch_server"}, EnvNames: []string{"A"}, Packages: engine, GPUs: gpus},
		{Step: "decode_w0", Host: "n2", Argv: []string{"python3", "-m", "sglang.launch_server"}, EnvNames: []string{"B"}, Packages: engine, GPUs: gpus[:1]},
		{Step: "benchmark", Host: "n1", Argv: []string{"/slurmbench", "bench"}, Notes: []string{"no Python site-packages found: engine and library versions unknown"}},
		{Step: "frontend", Host: "n3", Argv: []string{"nginx"}, OS: "Alpine"},
	}
	// n1's host-side benchmark step (no GPUs) comes first: the worker's
	// GPUs still describe n1.
	recs[0], recs[2] = recs[2], recs[0]
	rt := RuntimeOf(recs, []string{"prefill_w0", "decode_w0", "benchmark", "eval", "frontend"}, []string{"fingerprint x: bad"})
	if len(rt.Software) != 1 || rt.Processes[2].Software != rt.Software[0].ID || rt.Processes[1].Software != rt.Software[0].ID || rt.Processes[0].Software != "" {
		t.Fatalf("software %+v processes %+v: want one set shared by the two workers", rt.Software, rt.Processes)
	}
	sw := rt.Software[0]
	if !reflect.DeepEqual(sw.Engines, map[string]string{"sglang": "0.5.2", "flashinfer-python": "0.3.1"}) ||
		!slices.Equal(sw.Packages, []string{"SGLang==0.5.2", "flashinfer_python==0.3.1", "numpy==2.1"}) {
		t.Errorf("software %+v", sw)
	}
	if len(rt.Nodes) != 3 || rt.Nodes[0].Host != "n1" || len(rt.Nodes[0].GPUs) != 2 || !slices.Equal(rt.Nodes[0].Drivers, []string{"570.1"}) ||
		!slices.Equal(rt.Nodes[1].Models, []string{"NVIDIA B200"}) || rt.Nodes[2].Host != "n3" || rt.Nodes[2].OS != "Alpine" || len(rt.Nodes[2].GPUs) != 0 {
		t.Errorf("nodes %+v", rt.Nodes)
	}
	if !slices.Equal(rt.Missing, []string{"eval"}) || !slices.Equal(rt.Problems, []string{"fingerprint x: bad"}) {
		t.Errorf("missing %v problems %v", rt.Missing, rt.Problems)
	}
	// A different package set is a second entry.
	other := append(slices.Clone(recs), fingerprint.Record{Step: "frontend", Packages: []fingerprint.Package{{Name: "ai-dynamo", Version: "0.6"}}})
	if rt := RuntimeOf(other, nil, nil); len(rt.Software) != 2 || rt.Software[1].Engines["ai-dynamo"] != "0.6" {
		t.Errorf("two sets: %+v", rt.Software)
	}
}

// The manifest carries the runtime and the overrides through a write and
// a read, and VerifyManifest still checks the artifacts.
func TestManifestRuntimeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	prov := Provenance{Overrides: []string{"backend.sglang_config.decode.mem-fraction-static=0.8"}, ImageDigest: "sha256:" + strings.Repeat("a", 64),
		Runtime: RuntimeOf([]fingerprint.Record{{Step: "w", Host: "h", Argv: []string{"x"}, EnvNames: []string{"K"}}}, []string{"w"}, nil)}
	m, err := BuildManifest(dir, prov)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteManifest(dir, m, atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := VerifyManifest(dir); err != nil {
		t.Fatal(err)
	}
	var back Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != 2 || !reflect.DeepEqual(back.Provenance.Overrides, prov.Overrides) || back.Provenance.Runtime == nil ||
		!slices.Equal(back.Provenance.Runtime.Processes[0].Argv, []string{"x"}) {
		t.Errorf("read back %+v", back.Provenance)
	}
}
