package results

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var prov = Provenance{
	ImageRef: "nvcr.io/nvidia/sglang:0.5", ImageDigest: "sha256:abc", RecipeSHA256: "def",
	ProfilePath: "/etc/slurmbench/b200.toml", SlurmbenchVersion: "v0.1.0", SlurmVersion: "24.11.5",
	SlurmAPIVersion: "v0.0.42", JobID: "1234", Nodes: []string{"node01", "node02"},
}

func TestManifest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.json"), "hello\n")
	writeFile(t, filepath.Join(dir, "LOGS", "a.log"), "")
	writeFile(t, filepath.Join(dir, atomicfile.TempPrefix+"123"), "leftover")
	os.Symlink("b.json", filepath.Join(dir, "link.json"))

	m, err := BuildManifest(dir, prov)
	if err != nil {
		t.Fatal(err)
	}
	want := []Artifact{
		// sha256 of the empty string and of "hello\n", as sha256sum prints them.
		{Path: "LOGS/a.log", Size: 0, SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{Path: "b.json", Size: 6, SHA256: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"},
		{Path: "link.json", LinkTarget: "b.json"},
	}
	if !reflect.DeepEqual(m.Artifacts, want) {
		t.Errorf("artifacts = %+v\nwant %+v", m.Artifacts, want)
	}
	path, err := WriteManifest(dir, m, atomicfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var back Manifest
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &back); err != nil || back.Provenance.JobID != "1234" || back.SchemaVersion != ManifestSchemaVersion ||
		!reflect.DeepEqual(back.Provenance.Nodes, prov.Nodes) || back.Provenance.SlurmAPIVersion != "v0.0.42" {
		t.Errorf("manifest on disk: %s (%v)", b, err)
	}

	// The manifest does not list itself; rebuilding gives the same bytes, and
	// writing them again is fine.
	m2, err := BuildManifest(dir, prov)
	if err != nil || !reflect.DeepEqual(m2, m) {
		t.Errorf("rebuilt manifest differs: %+v, %v", m2, err)
	}
	if _, err := WriteManifest(dir, m2, atomicfile.Options{}); err != nil {
		t.Errorf("identical manifest: %v", err)
	}
	if err := VerifyManifest(dir); err != nil {
		t.Errorf("verify: %v", err)
	}

	// A changed provenance is a different file: refused unless Overwrite.
	p2 := prov
	p2.JobID = "1235"
	m3, _ := BuildManifest(dir, p2)
	if _, err := WriteManifest(dir, m3, atomicfile.Options{}); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("different manifest: error = %v", err)
	}
	if _, err := WriteManifest(dir, m3, atomicfile.Options{Overwrite: true}); err != nil {
		t.Errorf("overwrite: %v", err)
	}

	// Verification notices a changed, a removed and an added file.
	writeFile(t, filepath.Join(dir, "b.json"), "hellO\n")
	os.Remove(filepath.Join(dir, "LOGS", "a.log"))
	writeFile(t, filepath.Join(dir, "new.txt"), "x")
	err = VerifyManifest(dir)
	for _, want := range []string{"LOGS/a.log: missing", "b.json: changed", "new.txt: not in the manifest"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("verify error = %v, want %q", err, want)
		}
	}
}

func TestStage(t *testing.T) {
	logs := runDir(t, map[int]map[string]any{8: nil, 16: nil}, p4p1d)
	coll, err := Collect(CollectOptions{ResultsDir: logs, Concurrencies: []int{8, 16}})
	if err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(t.TempDir(), "multinode_server_logs.tar.gz")
	writeFile(t, extra, "tar")
	dest := filepath.Join(t.TempDir(), "workspace")
	opt := StageOptions{ResultFilename: "RF", Dest: dest, Extra: []string{extra}}
	staged, err := Stage(coll.Points, opt)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range staged {
		names = append(names, filepath.Base(s.Dest))
	}
	want := []string{
		"RF_sa-bench_isl_8192_osl_1024_conc8_gpus_24_ctx_16_gen_8.json",
		"RF_sa-bench_isl_8192_osl_1024_conc16_gpus_24_ctx_16_gen_8.json",
		"multinode_server_logs.tar.gz",
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("staged %v, want %v", names, want)
	}
	if staged[0].Point == nil || staged[0].Point.Concurrency != 8 || staged[2].Point != nil {
		t.Errorf("staged points: %+v", staged)
	}
	src, _ := os.ReadFile(coll.Points[0].Path)
	got, _ := os.ReadFile(staged[0].Dest)
	if !bytes.Equal(src, got) {
		t.Error("staged copy differs from the raw result")
	}

	// Staging again is idempotent; a different file at a staged name is refused.
	if _, err := Stage(coll.Points, opt); err != nil {
		t.Errorf("restage: %v", err)
	}
	writeFile(t, staged[1].Dest, "{}")
	if _, err := Stage(coll.Points, opt); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), staged[1].Dest) {
		t.Errorf("stage over a different file: %v", err)
	}
	opt.Overwrite = true
	if _, err := Stage(coll.Points, opt); err != nil {
		t.Errorf("stage with Overwrite: %v", err)
	}

	// Two extras with one base name cannot be staged flat.
	other := filepath.Join(t.TempDir(), "multinode_server_logs.tar.gz")
	writeFile(t, other, "other")
	opt.Extra = []string{extra, other}
	if _, err := Stage(nil, opt); err == nil || !strings.Contains(err.Error(), "would both be staged as multinode_server_logs.tar.gz") {
		t.Errorf("colliding extras: %v", err)
	}
}

func readTarGz(t *testing.T, path string) (names []string, contents map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	contents = map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, contents
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Typeflag == tar.TypeSymlink {
			contents[h.Name] = "-> " + h.Linkname
			continue
		}
		b, _ := io.ReadAll(tr)
		contents[h.Name] = string(b)
	}
}

func TestBundleDir(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	writeFile(t, filepath.Join(logs, "sweep_1234.log"), "sweep")
	writeFile(t, filepath.Join(logs, "b_decode_w0.out"), "decode")
	writeFile(t, filepath.Join(logs, "a_prefill_w0.out"), "prefill")
	writeFile(t, filepath.Join(logs, "sa-bench_isl_8192_osl_1024", "results_concurrency_8_gpus_8.json"), "{}")
	os.Symlink("sweep_1234.log", filepath.Join(logs, "latest.log"))

	dst := filepath.Join(t.TempDir(), ServerLogsBundleName)
	if err := BundleDir(logs, dst, BundleOptions{}); err != nil {
		t.Fatal(err)
	}
	names, contents := readTarGz(t, dst)
	want := []string{"logs/", "logs/a_prefill_w0.out", "logs/b_decode_w0.out", "logs/latest.log",
		"logs/sa-bench_isl_8192_osl_1024/", "logs/sa-bench_isl_8192_osl_1024/results_concurrency_8_gpus_8.json", "logs/sweep_1234.log"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("entries = %q\nwant %q", names, want)
	}
	if contents["logs/b_decode_w0.out"] != "decode" || contents["logs/latest.log"] != "-> sweep_1234.log" {
		t.Errorf("contents = %q", contents)
	}

	// The same tree bundles to the same bytes; bundling again is a no-op.
	again := filepath.Join(t.TempDir(), ServerLogsBundleName)
	if err := BundleDir(logs, again, BundleOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(dst)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("two bundles of the same tree differ")
	}
	if err := BundleDir(logs, dst, BundleOptions{}); err != nil {
		t.Errorf("identical rebundle: %v", err)
	}

	// An archive written inside the tree does not contain itself, and a
	// prefix replaces the top directory.
	inside := filepath.Join(logs, ServerLogsBundleName)
	if err := BundleDir(logs, inside, BundleOptions{Prefix: "LOGS"}); err != nil {
		t.Fatal(err)
	}
	names, _ = readTarGz(t, inside)
	for _, n := range names {
		if strings.Contains(n, ServerLogsBundleName) || strings.Contains(n, atomicfile.TempPrefix) || !strings.HasPrefix(n, "LOGS/") {
			t.Errorf("unexpected entry %q", n)
		}
	}
}

func TestCopyTree(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	writeFile(t, filepath.Join(logs, "power", "gpu.csv"), "w")
	writeFile(t, filepath.Join(logs, "sa-bench_isl_8192_osl_1024", "results_concurrency_8_gpus_8.json"), "{}")
	os.Symlink("power/gpu.csv", filepath.Join(logs, "latest.csv"))
	dst := filepath.Join(t.TempDir(), "LOGS")
	for i := 0; i < 2; i++ { // the second copy is a no-op, not LOGS/logs
		if _, err := CopyTree(logs, dst, false); err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
	}
	m, err := BuildManifest(dst, Provenance{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, a := range m.Artifacts {
		paths = append(paths, a.Path)
	}
	want := []string{"latest.csv", "power/gpu.csv", "sa-bench_isl_8192_osl_1024/results_concurrency_8_gpus_8.json"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("copied %v, want %v", paths, want)
	}
	writeFile(t, filepath.Join(logs, "power", "gpu.csv"), "changed")
	if _, err := CopyTree(logs, dst, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("copy over a changed file: %v", err)
	}
}
