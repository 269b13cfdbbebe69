package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

func artifactPlan(t *testing.T) *plan.Plan {
	t.Helper()
	run := t.TempDir()
	lay := rundir.Layout{Logs: filepath.Join(run, "logs"), Results: filepath.Join(run, "results")}
	for _, d := range []string{lay.Logs, lay.Results} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &plan.Plan{Name: "acc", RunID: "r1", RunDir: run, Layout: lay}
}

func put(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCollectSrtctlBenchmark: what srtctl-bench for an accuracy type
// left in logs/accuracy is copied into results/<type> (the manifest lists
// it) and listed, other files left out; a script that left nothing fails
// the benchmark, naming the type, the patterns and the directory.
func TestCollectSrtctlBenchmark(t *testing.T) {
	pl := artifactPlan(t)
	dir := filepath.Join(pl.Layout.Logs, "accuracy")
	pl.Benchmark = plan.Benchmark{Type: "gpqa", ResultDir: dir,
		Srtctl: &plan.SrtctlBenchmark{Type: "gpqa", Args: []string{"http://localhost:8000"}, Argv: []string{"/run/bin/slurmbench", "srtctl-bench", "gpqa", "http://localhost:8000"},
			ResultDir: dir, Results: []string{"gpqa_*.json"}}}

	c, err := Collect(pl, CollectOptions{})
	if err == nil || exitcode.Of(err) != exitcode.Benchmark || !strings.Contains(err.Error(), "benchmark.type gpqa") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("nothing written: %v", err)
	}
	if len(c.Artifacts) != 1 || len(c.Artifacts[0].Files) != 0 {
		t.Errorf("artifacts %+v", c.Artifacts)
	}

	put(t, filepath.Join(dir, "gpqa_deepseek_r1.json"), `{"score": 0.7}`)
	put(t, filepath.Join(dir, "notes.txt"), "x")
	c, err = Collect(pl, CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	row := c.Artifacts[0]
	if row.Kind != "benchmark" || row.Type != "gpqa" || len(row.Files) != 1 || row.Files[0].Path != "gpqa_deepseek_r1.json" || row.Files[0].Bytes != 14 {
		t.Errorf("row %+v", row)
	}
	copied := filepath.Join(pl.Layout.Results, "gpqa", "gpqa_deepseek_r1.json")
	if b, err := os.ReadFile(copied); err != nil || string(b) != `{"score": 0.7}` || row.CopiedTo != filepath.Dir(copied) {
		t.Errorf("copy %s: %q %v (copied to %q)", copied, b, err, row.CopiedTo)
	}
	manifest, _ := os.ReadFile(c.Manifest)
	if !strings.Contains(string(manifest), "gpqa_deepseek_r1.json") || !strings.Contains(string(manifest), `"benchmark_script"`) {
		t.Errorf("manifest does not list the result:\n%s", manifest)
	}
	sum := Summary(pl, &Result{Collected: c}, nil)
	text := sum.Text()
	if !strings.Contains(text, "gpqa benchmark: 1 files, 14 bytes") || !strings.Contains(text, "gpqa_deepseek_r1.json (14 bytes)") || strings.Contains(text, "no benchmark points") {
		t.Errorf("summary:\n%s", text)
	}
}

// TestListProfiles: a profiled run's summary lists every file under the
// profile directory; none is a note, not a failure.
func TestListProfiles(t *testing.T) {
	pl := artifactPlan(t)
	pl.Profiling = &plan.Profiling{Type: "nsys", Dir: filepath.Join(pl.Layout.Logs, "profiles")}
	c, err := Collect(pl, CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Artifacts) != 1 || c.Artifacts[0].Note != "no profile was written" {
		t.Errorf("artifacts %+v", c.Artifacts)
	}
	put(t, filepath.Join(pl.Profiling.Dir, "prefill", "n0_prefill_w0_profile_gpu0-1.nsys-rep"), "abc")
	put(t, filepath.Join(pl.Profiling.Dir, "decode", "n1_decode_w0_profile_gpu0-1.nsys-rep"), "abcd")
	if err := os.Symlink("/etc/passwd", filepath.Join(pl.Profiling.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	c, err = Collect(pl, CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	row := c.Artifacts[0]
	if row.Kind != "profiles" || len(row.Files) != 2 || row.Files[0].Path != filepath.Join("decode", "n1_decode_w0_profile_gpu0-1.nsys-rep") || row.Note != "" {
		t.Errorf("row %+v", row)
	}
	md := Summary(pl, &Result{Collected: c}, nil).Markdown()
	if !strings.Contains(md, "nsys profiles: 2 files, 7 bytes") {
		t.Errorf("markdown:\n%s", md)
	}
}
