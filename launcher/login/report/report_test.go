package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// succeededRun is a two-point run with gsm8k, as "make demo" ends.
func succeededRun(t *testing.T) Summary {
	t.Helper()
	dir := t.TempDir()
	writeEval(t, dir, "results_2025-01-01T00-10-00.json", fixture(t), time.Unix(1735690200, 0))
	writeMeta(t, dir, "dsr1")
	points := []results.CollectedPoint{
		collected(8, saResult(8, 80, 80, 5123.456, 612.34, 38.125, 4.5, 612.0)),
		collected(32, saResult(32, 320, 320, 15876.55, 1830.25, 95.5049, 7.8125, 1090.4567)),
	}
	s, err := FromRun(mockPlan(), points, dir)
	if err != nil {
		t.Fatal(err)
	}
	s.JobID, s.ImageDigest, s.Outcome = "4242", "sha256:0d8bf4b6f0c3e8a54df8a8a1bbbbd3dd1dcdb7b9c7fb3c1e0a4f2b5c6d7e8f90", OutcomeSucceeded
	return s
}

// failedRun lost its c32 point to an engine crash and never ran gsm8k.
func failedRun(t *testing.T) Summary {
	t.Helper()
	s, err := FromRun(mockPlan(), []results.CollectedPoint{
		collected(8, saResult(8, 80, 80, 5123.456, 612.34, 38.125, 4.5, 612.0)),
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.AddMissing(32, "missing: decode-0 died mid-benchmark | no result")
	s.JobID, s.Outcome, s.ExitCode = "4243", OutcomeFailed, 13
	s.Class, s.Phase, s.Process = "died_after_healthy", "benchmark", "decode-0"
	s.Message = "decode-0 exited with code 1 after the health gate\n# not a heading"
	s.FirstError = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\x1b[0m\n```\nline with ``` fence"
	return s
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T) Summary
	}{{"succeeded", succeededRun}, {"failed", failedRun}} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.run(t)
			golden(t, tc.name+".md.golden", s.Markdown())
			golden(t, tc.name+".txt.golden", s.Text())
		})
	}
}

func TestFromRunFigures(t *testing.T) {
	s := succeededRun(t)
	if s.Name != "mock-2p1d" || s.RunID != "20250101T000000-ab12cd" || s.Image != "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.1" {
		t.Errorf("identity = %q %q %q", s.Name, s.RunID, s.Image)
	}
	if len(s.Points) != 2 {
		t.Fatalf("%d rows, want 2", len(s.Points))
	}
	r := s.Points[1]
	want := PointRow{
		Label: "ctx8/gen4 c32", Concurrency: 32, GPUs: 12, PrefillGPUs: 8, DecodeGPUs: 4, HasResult: true,
		Completed: 320, NumPrompts: 320, TputPerGPU: 15876.55 / 12, OutputPerGPU: 1830.25 / 4,
		MedianTTFTms: 95.5049, MedianTPOTms: 7.8125, MedianE2Ems: 1090.4567, Interactivity: 128, Valid: true,
	}
	if !closeRow(r, want) {
		t.Errorf("row = %+v\nwant  %+v", r, want)
	}
	ev := s.GSM8K
	if ev == nil {
		t.Fatal("no gsm8k row")
	}
	if *ev.Strict != 0.9529946929492039 || *ev.FlexStderr != 0.005647434462418396 || ev.N != 1319 {
		t.Errorf("gsm8k = %+v", ev)
	}
	if !ev.Passed || ev.Threshold != 0.91 || ev.ThresholdSource != "models.dsr1" || ev.Verdict != "pass (≥ 0.91, models.dsr1)" {
		t.Errorf("gate = %v %v %q %q", ev.Passed, ev.Threshold, ev.ThresholdSource, ev.Verdict)
	}
}

func closeRow(a, b PointRow) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
	fa, fb := a, b
	fa.TputPerGPU, fa.OutputPerGPU, fa.Interactivity = 0, 0, 0
	fb.TputPerGPU, fb.OutputPerGPU, fb.Interactivity = 0, 0, 0
	return fa == fb && near(a.TputPerGPU, b.TputPerGPU) && near(a.OutputPerGPU, b.OutputPerGPU) && near(a.Interactivity, b.Interactivity)
}

// TestPerGPU4P1D checks the DeepSeek 4P1D topology (4 prefill workers of
// TP4, one decode worker of TP8: 16+8 GPUs) against process_result.py's
// formulas by hand and against results.PerGPUThroughput.
func TestPerGPU4P1D(t *testing.T) {
	pl := &plan.Plan{
		Name: "dsr1-4p1d", Mode: "disaggregated",
		GPUs:   plan.GPUCount{Prefill: 16, Decode: 8, Total: 24},
		Points: []plan.BenchPoint{{Concurrency: 2048, NumPrompts: 20480}},
	}
	p := results.PointID{Concurrency: 2048, GPUs: 24, PrefillGPUs: 16, DecodeGPUs: 8}
	r := saResult(2048, 20480, 20480, 204835.2, 22345.6, 60718.2, 52.1, 110000)
	s, err := FromRun(pl, []results.CollectedPoint{{Point: p, Result: r}}, "")
	if err != nil {
		t.Fatal(err)
	}
	per, err := results.PerGPUThroughput(p, r.TotalTokenThroughput, r.OutputThroughput)
	if err != nil {
		t.Fatal(err)
	}
	row := s.Points[0]
	if row.TputPerGPU != per.TputPerGPU || row.OutputPerGPU != per.OutputTputPerGPU || row.GPUs != per.TotalGPUs {
		t.Errorf("row %+v disagrees with PerGPUThroughput %+v", row, per)
	}
	if math.Abs(row.TputPerGPU-8534.8) > 1e-9 || math.Abs(row.OutputPerGPU-2793.2) > 1e-9 {
		t.Errorf("tput/GPU %v (want 204835.2/24 = 8534.8), output/GPU %v (want 22345.6/8 = 2793.2)", row.TputPerGPU, row.OutputPerGPU)
	}
	if row.Label != "ctx16/gen8 c2048" {
		t.Errorf("label %q", row.Label)
	}
	for _, want := range []string{"| ctx16/gen8 c2048 | 2048 | 24 (16+8) | 20480/20480 | 8534.8 | 2793.2 | 60718.20 | 52.10 | 110.000 | ✅ |"} {
		if md := s.Markdown(); !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestAddMissingOrderAndTopology(t *testing.T) {
	pl := &plan.Plan{
		Name: "agg", Mode: "aggregated",
		GPUs:   plan.GPUCount{Agg: 8, Total: 8},
		Points: []plan.BenchPoint{{Concurrency: 64, NumPrompts: 640}, {Concurrency: 4, NumPrompts: 40}, {Concurrency: 16, NumPrompts: 160}},
	}
	p := results.PointID{Concurrency: 16, GPUs: 8}
	s, err := FromRun(pl, []results.CollectedPoint{{Point: p, Result: saResult(16, 160, 160, 800, 80, 1, 2, 3)}}, "")
	if err != nil {
		t.Fatal(err)
	}
	s.AddMissing(1000, "") // not in the plan: goes last
	s.AddMissing(4, "missing: no result file")
	s.AddMissing(64, "first note")
	s.AddMissing(64, "second note") // replaces
	var got []string
	for _, r := range s.Points {
		got = append(got, r.Label+"="+r.Note)
	}
	want := "gpus8 c64=second note,gpus8 c4=missing: no result file,gpus8 c16=,gpus8 c1000=missing"
	if strings.Join(got, ",") != want {
		t.Errorf("rows %s\nwant %s", strings.Join(got, ","), want)
	}
	if r := s.Points[0]; r.Valid || r.HasResult || r.NumPrompts != 640 || r.GPUs != 8 {
		t.Errorf("missing row %+v", r)
	}
	if r := s.Points[2]; !r.Valid || r.TputPerGPU != 100 || r.OutputPerGPU != 10 {
		t.Errorf("aggregated row %+v: want 800/8 and 80/8 (no decode GPUs: output over all)", r)
	}
	if txt := s.Text(); !strings.Contains(txt, "gpus8 c64      64           8          -") {
		t.Errorf("Text of missing row:\n%s", txt)
	}
}

func TestAddIncomplete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results_concurrency_32_gpus_12_ctx_8_gen_4.json")
	data, err := json.Marshal(saResult(32, 320, 12, 900, 90, 10, 0, 20))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := FromRun(mockPlan(), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	s.AddIncomplete(&results.IncompleteError{
		Missing: []int{8},
		Invalid: []results.InvalidPoint{{Concurrency: 32, Path: path, Reasons: []string{"failure rate 96%"}}},
	})
	if len(s.Points) != 2 {
		t.Fatalf("rows %+v", s.Points)
	}
	if r := s.Points[0]; r.Concurrency != 8 || r.HasResult || r.Note != "missing: no result file" {
		t.Errorf("missing row %+v", r)
	}
	r := s.Points[1]
	if r.Concurrency != 32 || !r.HasResult || r.Valid || r.Completed != 12 || r.TputPerGPU != 75 || r.Interactivity != 0 || r.Note != "invalid: failure rate 96%" {
		t.Errorf("invalid row %+v", r)
	}
	// An unreadable invalid file still gets a row, without numbers.
	s.AddIncomplete(&results.IncompleteError{Invalid: []results.InvalidPoint{{Concurrency: 32, Path: filepath.Join(dir, "gone.json"), Reasons: []string{"x"}}}})
	if r := s.Points[1]; r.HasResult || r.Note != "invalid: x" || r.Label != "ctx8/gen4 c32" {
		t.Errorf("unreadable invalid row %+v", r)
	}
}

func TestFromRunMarkedInvalidAndErrors(t *testing.T) {
	no := false
	r := saResult(8, 80, 80, 1200, 120, 1, 2, 3)
	r.Valid, r.InvalidReason = &no, "0 output tokens"
	bad := collected(32, nil)
	s, err := FromRun(mockPlan(), []results.CollectedPoint{collected(8, r), bad}, "")
	if err == nil || !strings.Contains(err.Error(), "ctx8/gen4 c32") {
		t.Errorf("err = %v, want one naming the unreadable point", err)
	}
	if len(s.Points) != 2 || s.Points[0].Valid || s.Points[0].Note != "0 output tokens" || s.Points[1].Valid || s.Points[1].HasResult {
		t.Errorf("rows %+v", s.Points)
	}
	if _, err := FromRun(nil, nil, ""); err == nil {
		t.Error("nil plan accepted")
	}
}

func TestReadEval(t *testing.T) {
	base := string(fixture(t))
	older := strings.Replace(base, "0.9529946929492039", "0.5", 1)
	noStderr := strings.Replace(strings.Replace(base, "0.005836973736011843", `"N/A"`, 1), "0.9560272934040940", "0.87", 1)
	t0 := time.Unix(1735689600, 0)

	t.Run("newest by mtime, non-gsm8k skipped", func(t *testing.T) {
		dir := t.TempDir()
		writeEval(t, dir, "results_2025-01-02T00-00-00.json", []byte(older), t0) // greater name, older file
		writeEval(t, dir, "results_2025-01-01T00-00-00.json", []byte(base), t0.Add(time.Minute))
		writeEval(t, dir, "results_other.json", []byte(`{"results": {"mmlu": {"acc,none": 0.7}}}`), t0.Add(time.Hour))
		ev, err := ReadEval(dir)
		if err != nil {
			t.Fatal(err)
		}
		if ev == nil || *ev.Strict != 0.9529946929492039 || filepath.Base(ev.Source) != "results_2025-01-01T00-00-00.json" {
			t.Errorf("eval %+v", ev)
		}
		if ev.ThresholdSource != "default" || ev.Threshold != 0.9 || !ev.Passed {
			t.Errorf("without meta_env.json: %v from %q passed=%v, want 0.9 from default", ev.Threshold, ev.ThresholdSource, ev.Passed)
		}
	})
	t.Run("same mtime: greater name", func(t *testing.T) {
		dir := t.TempDir()
		writeEval(t, dir, "results_2025-01-01T00-00-00.json", []byte(older), t0)
		writeEval(t, dir, "results_2025-01-02T00-00-00.json", []byte(base), t0)
		if ev, err := ReadEval(dir); err != nil || *ev.Strict != 0.9529946929492039 {
			t.Errorf("eval %+v, %v", ev, err)
		}
	})
	t.Run("N/A stderr and a failing filter", func(t *testing.T) {
		dir := t.TempDir()
		writeEval(t, dir, "results_x.json", []byte(noStderr), t0)
		writeMeta(t, dir, "glm5")
		ev, err := ReadEval(dir)
		if err != nil {
			t.Fatal(err)
		}
		if ev.StrictStderr != nil || ev.Passed || ev.Threshold != 0.94 {
			t.Errorf("eval %+v", ev)
		}
		if want := "fail: flexible-extract 0.8700 < 0.94 (models.glm5)"; ev.Verdict != want {
			t.Errorf("verdict %q\nwant    %q", ev.Verdict, want)
		}
		s := Summary{Outcome: OutcomeFailed, GSM8K: ev}
		if line := s.evalLine(); !strings.HasPrefix(line, "strict-match 0.9530, flexible-extract 0.8700 ± 0.0056, n=1319: fail") {
			t.Errorf("eval line %q", line)
		}
	})
	t.Run("batch: one row per listed concurrency", func(t *testing.T) {
		dir := t.TempDir()
		writeEval(t, dir, "results_a_conc16.json", []byte(base), t0)
		writeEval(t, dir, "results_a_conc4.json", []byte(older), t0)
		writeEval(t, dir, "results_b_conc4.json", []byte(noStderr), t0) // the newer stamp of c4
		writeEval(t, dir, "results_a_conc8.json", []byte(base), t0)     // not listed: no row
		meta := gsm8k.MetaEnv{InfmaxModelPrefix: "glm5"}
		meta.SetBatch([]int{16, 4, 2}, []int{16, 4}, []int{2})
		if err := gsm8k.WriteMetaEnv(filepath.Join(dir, "meta_env.json"), meta); err != nil {
			t.Fatal(err)
		}
		rows, err := ReadEvalBatch(dir)
		if err != nil || len(rows) != 2 || rows[0].Concurrency != 16 || rows[1].Concurrency != 4 ||
			filepath.Base(rows[1].Source) != "results_b_conc4.json" || !rows[0].Passed || rows[1].Passed {
			t.Fatalf("rows %+v, %v; want c16 passing then c4 (newest) failing", rows, err)
		}
		s := Summary{GSM8K: &rows[0], GSM8KBatch: rows}
		if line := s.evalLine(); !strings.HasPrefix(line, "c16 strict-match 0.9530") || !strings.Contains(line, "; c4 strict-match 0.9530, flexible-extract 0.8700") {
			t.Errorf("eval line %q", line)
		}
		if rows, err := ReadEvalBatch(t.TempDir()); rows != nil || err != nil {
			t.Errorf("no batch: %v, %v", rows, err)
		}
	})
	t.Run("corrupt newest is an error", func(t *testing.T) {
		dir := t.TempDir()
		writeEval(t, dir, "results_a.json", []byte(base), t0)
		writeEval(t, dir, "results_b.json", []byte(`{"results": {"gsm8k": `), t0.Add(time.Minute))
		if ev, err := ReadEval(dir); err == nil || !strings.Contains(err.Error(), "results_b.json") {
			t.Errorf("eval %+v, err %v", ev, err)
		}
	})
	t.Run("none", func(t *testing.T) {
		for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "absent")} {
			if ev, err := ReadEval(dir); ev != nil || err != nil {
				t.Errorf("%s: %+v, %v", dir, ev, err)
			}
		}
	})
}

// TestNoSecrets: a plan carries process env (possibly with a token) and the
// names of passed-through variables; none of it may reach the summary.
func TestNoSecrets(t *testing.T) {
	const marker = "hf_SECRETMARKER123"
	t.Setenv("HF_TOKEN", marker)
	pl := mockPlan()
	pl.EnvPassthrough = []string{"HF_TOKEN"}
	pl.Processes = []plan.Process{{Name: "prefill-0", Env: map[string]string{"HF_TOKEN": marker}, Argv: []string{"python3", "--token", marker}}}
	s, err := FromRun(pl, []results.CollectedPoint{collected(8, saResult(8, 80, 80, 1, 1, 1, 1, 1))}, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Outcome = OutcomeFailed
	var ann strings.Builder
	s.Annotate(&ann)
	js, _ := json.Marshal(s)
	for name, out := range map[string]string{"markdown": s.Markdown(), "text": s.Text(), "json": string(js), "annotation": ann.String()} {
		if strings.Contains(out, marker) {
			t.Errorf("%s holds the secret", name)
		}
	}
}

func TestMarkdownEscaping(t *testing.T) {
	for in, want := range map[string]string{
		"a|b":              `a\|b`,
		"# title":          `\# title`,
		"- item":           `\- item`,
		"1. first":         `1\. first`,
		"x-y 1.5":          `x-y 1.5`,
		"<b>*x*</b> `c` &": "\\<b\\>\\*x\\*\\</b\\> \\`c\\` \\&",
		"two\nlines\x1b[31mred\x1b[0m\x1b]0;title\x07\x07": "two linesred",
		"[link](x)":   `\[link\](x)`,
		"   indented": "indented",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"plain":    "`plain`",
		"a`b":      "``a`b``",
		"`x``":     "``` `x`` ```",
		"dir\nnew": "`dir new`",
	} {
		if got := codeSpan(in); got != want {
			t.Errorf("codeSpan(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutputs(t *testing.T) {
	s := failedRun(t)
	got := s.Outputs()
	want := map[string]string{"job_id": "4243", "run_id": "20250101T000000-ab12cd", "run_dir": "/shared/slurmbench/runs/20250101T000000-ab12cd", "outcome": "failed", "class": "died_after_healthy"}
	if len(got) != len(want) {
		t.Errorf("outputs %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := succeededRun(t).Outputs()["class"]; ok {
		t.Error("class output on a succeeded run")
	}
}

// staged_files reaches the workflow as a multi-line output (one name per
// line, read back through the runner's heredoc form) and the step summary
// lists the same names; a run that staged nothing has neither.
func TestStagedFilesOutputAndSummary(t *testing.T) {
	s := succeededRun(t)
	if _, ok := s.Outputs()["staged_files"]; ok {
		t.Error("staged_files output on a run that staged nothing")
	}
	if strings.Contains(s.Markdown(), "Staged files") {
		t.Error("staged files section on a run that staged nothing")
	}
	s.StagedFiles = []string{"RF_sa-bench_isl_8192_osl_1024_conc4_gpus_24_ctx_16_gen_8.json", "manifest.json"}
	if got, want := s.Outputs()["staged_files"], strings.Join(s.StagedFiles, "\n"); got != want {
		t.Errorf("staged_files = %q, want %q", got, want)
	}
	path := filepath.Join(t.TempDir(), "out")
	if err := AppendOutputs(path, s.Outputs()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !regexp.MustCompile(`(?m)^staged_files<<(ghadelimiter_\w+)\nRF_sa-bench_isl_8192_osl_1024_conc4_gpus_24_ctx_16_gen_8\.json\nmanifest\.json\n(ghadelimiter_\w+)$`).Match(data) {
		t.Errorf("GITHUB_OUTPUT:\n%s", data)
	}
	md := s.Markdown()
	for _, f := range s.StagedFiles {
		if !strings.Contains(md, "- `"+f+"`\n") {
			t.Errorf("summary does not list %s:\n%s", f, md)
		}
	}
}
