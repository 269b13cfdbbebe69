package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hand-made sets under testdata/compare: the baseline is a run's logs
// directory (srt-slurm's SA-Bench copy, raw names); the candidate is a
// workspace with staged names, an identical LOGS/ copy, an agg_ sidecar,
// a point the baseline lacks, one marked invalid, and two gsm8k runs.
func loadCompareSets(t *testing.T) (*ResultSet, *ResultSet) {
	t.Helper()
	base, err := LoadResultSet(filepath.Join("testdata", "compare", "baseline"))
	if err != nil {
		t.Fatal(err)
	}
	cand, err := LoadResultSet(filepath.Join("testdata", "compare", "candidate"))
	if err != nil {
		t.Fatal(err)
	}
	return base, cand
}

func findRow(t *testing.T, c *Comparison, point, metric string) ComparisonRow {
	t.Helper()
	for _, r := range c.Rows {
		if r.Point == point && r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %s / %s", point, metric)
	return ComparisonRow{}
}

func TestCompare(t *testing.T) {
	base, cand := loadCompareSets(t)
	if len(base.Points) != 3 || len(cand.Points) != 3 || len(base.GSM8K) != 1 || len(cand.GSM8K) != 1 {
		t.Fatalf("loaded %d+%d points, %d+%d gsm8k", len(base.Points), len(cand.Points), len(base.GSM8K), len(cand.GSM8K))
	}
	c := Compare(base, cand)

	// Hand-computed from the fixtures: 204835.2 / 24 and 210808.8 / 24 tok/s/GPU.
	checks := []struct {
		point, metric string
		base, cand    float64
		delta         string
	}{
		{"ctx16/gen8 c2048", "tput_per_gpu", 8534.8, 8783.7, "+2.9 %"},      // (8783.7 − 8534.8) / 8534.8 = 2.916 %
		{"ctx16/gen8 c2048", "output_tput_per_gpu", 3100.5, 3200, "+3.2 %"}, // 24804 / 8, 25600 / 8
		{"ctx16/gen8 c2048", "median_ttft_ms", 60718, 55498, "−8.6 %"},      // ms, as bench prints TTFT
		{"ctx16/gen8 c2048", "median_tpot_ms", 21.72, 25.55, "+17.6 %"},     //
		{"ctx16/gen8 c2048", "median_e2el_s", 80.123, 82, "+2.3 %"},         //
		{"gsm8k", "gsm8k_strict_match", 0.9507, 0.9477, "−0.3 %"},           // the newest candidate file wins
		{"gsm8k", "gsm8k_flexible_extract", 0.9522, 0.9530, "+0.1 %"},       //
	}
	for _, ck := range checks {
		r := findRow(t, c, ck.point, ck.metric)
		if r.Baseline == nil || r.Candidate == nil || !near(*r.Baseline, ck.base) || !near(*r.Candidate, ck.cand) {
			t.Errorf("%s %s: %v → %v, want %v → %v", ck.point, ck.metric, deref(r.Baseline), deref(r.Candidate), ck.base, ck.cand)
			continue
		}
		if got := formatDelta(r.DeltaPct); got != ck.delta {
			t.Errorf("%s %s: delta %s, want %s", ck.point, ck.metric, got, ck.delta)
		}
	}
	// Unpaired points are N/A on the other side.
	if r := findRow(t, c, "ctx16/gen8 c4096", "tput_per_gpu"); r.Baseline != nil || r.Candidate == nil || r.DeltaPct != nil {
		t.Errorf("candidate-only point: %+v", r)
	}
	if r := findRow(t, c, "gpus8 c64", "tput_per_gpu"); r.Baseline == nil || *r.Baseline != 1500 || r.Candidate != nil {
		t.Errorf("baseline-only aggregated point: %+v", r)
	}

	var md, js bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| ctx16/gen8 c2048 | tput/GPU | 8534.8 | 8783.7 | +2.9 % |",
		"| ctx16/gen8 c2048 | median TTFT (ms) | 60718.00 | 55498.00 | −8.6 % |",
		"| ctx16/gen8 c2048 | median TPOT (ms) | 21.72 | 25.55 | +17.6 % |",
		"| ctx16/gen8 c4096 | tput/GPU | N/A | 9100.0 | N/A |",
		"- ctx16/gen8 c4096 — only in candidate",
		"- gpus8 c64 — only in baseline",
		"candidate ctx16/gen8 c1024: marked invalid: failure rate 12.1 % above 5 %",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// Issue #25 row 14: one table (no list repeating its numbers), one unit
	// per metric (TTFT in ms, as bench prints it), an invalid point's
	// reason said once.
	if strings.Contains(md.String(), "8534.8 → 8783.7") || strings.Count(md.String(), "8534.8") != 1 {
		t.Errorf("the Markdown repeats the table's numbers:\n%s", md.String())
	}
	if strings.Contains(md.String(), "TTFT (s)") || strings.Count(md.String(), "failure rate 12.1") != 1 {
		t.Errorf("TTFT in seconds, or the invalid reason said twice:\n%s", md.String())
	}
	var decoded Comparison
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || len(decoded.Rows) != len(c.Rows) {
		t.Errorf("JSON does not decode: %v", err)
	}
	golden(t, "compare.golden.md", md.Bytes())
	golden(t, "compare.golden.json", js.Bytes())
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func deref(p *float64) any {
	if p == nil {
		return "N/A"
	}
	return *p
}

func TestLoadResultSetErrors(t *testing.T) {
	empty := t.TempDir()
	if _, err := LoadResultSet(empty); err == nil || !strings.Contains(err.Error(), "no SA-Bench or gsm8k result files") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := LoadResultSet(filepath.Join(empty, "nope")); err == nil {
		t.Error("missing dir accepted")
	}
	// The same point with different numbers in one set is ambiguous.
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "a", "results_concurrency_8_gpus_8.json"), saBench(8, nil))
	writeJSON(t, filepath.Join(dir, "RF_cfg_conc8_gpus_8.json"), saBench(8, map[string]any{"duration": 1.0}))
	if _, err := LoadResultSet(dir); err == nil || !strings.Contains(err.Error(), "two different results for gpus8 c8") {
		t.Errorf("conflicting duplicates: %v", err)
	}
	// A name that looks like a result but whose numbers disagree fails loudly.
	bad := t.TempDir()
	writeJSON(t, filepath.Join(bad, "RF_conc8_gpus_24_ctx_16_gen_9.json"), saBench(8, nil))
	if _, err := LoadResultSet(bad); err == nil || !strings.Contains(err.Error(), "gpus 24 is not ctx 16 + gen 9") {
		t.Errorf("inconsistent name: %v", err)
	}
	// A corrupt result file is an error naming it.
	corrupt := t.TempDir()
	os.WriteFile(filepath.Join(corrupt, "results_concurrency_8_gpus_8.json"), []byte("{"), 0o644)
	if _, err := LoadResultSet(corrupt); err == nil || !strings.Contains(err.Error(), "results_concurrency_8_gpus_8.json") {
		t.Errorf("corrupt file: %v", err)
	}
}

func TestFormatDelta(t *testing.T) {
	for in, want := range map[float64]string{2.916: "+2.9 %", -8.597: "−8.6 %", 0.04: "0.0 %", -0.04: "0.0 %", 100: "+100.0 %"} {
		if got := formatDelta(&in); got != want {
			t.Errorf("formatDelta(%v) = %q, want %q", in, got, want)
		}
	}
	if got := formatDelta(nil); got != "N/A" {
		t.Errorf("formatDelta(nil) = %q", got)
	}
}
