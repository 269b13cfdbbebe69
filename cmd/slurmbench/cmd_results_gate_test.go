package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestResultsCompareGate: on the compare fixtures (median TPOT of
// ctx16/gen8 c2048 up 17.6 %) the gate exits 8 naming that point when the
// threshold is below the regression and 0 when it is above; a missing or
// invalid point fails unless --allow-missing; --json is machine output;
// --svg/--csv and the step summary are written.
func TestResultsCompareGate(t *testing.T) {
	data := filepath.Join("..", "..", "results", "compare", "testdata", "compare")
	base, cand := filepath.Join(data, "baseline"), filepath.Join(data, "candidate")
	summary := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)

	out, errOut, code := runResults(t, "compare", "--fail-on", "tput_per_gpu<-2%,median_ttft>+10%,median_tpot>+5%", "--allow-missing", base, cand)
	if code != exitcode.Benchmark || !strings.Contains(errOut, "1 of 5 rows fail the gate: ctx16/gen8 c2048 (median_tpot +17.6% (rule median_tpot>+5%))") {
		t.Errorf("exit %d, stderr %q; want 8 naming ctx16/gen8 c2048", code, errOut)
	}
	if !strings.Contains(out, "| ctx16/gen8 c2048 | 8534.8 → 8783.7 ▲2.9 % |") {
		t.Errorf("no per-point row:\n%s", out)
	}

	_, errOut, code = runResults(t, "compare", "--fail-on", "median_tpot>+20%", "--allow-missing", base, cand)
	if code != exitcode.OK {
		t.Errorf("threshold above the regression: exit %d, %s", code, errOut)
	}
	_, errOut, code = runResults(t, "compare", "--fail-on", "median_tpot>+20%", base, cand)
	if code != exitcode.Benchmark || !strings.Contains(errOut, "ctx16/gen8 c4096 (missing in the baseline)") ||
		!strings.Contains(errOut, "ctx16/gen8 c1024 (invalid in the candidate") {
		t.Errorf("missing/invalid points: exit %d, %s", code, errOut)
	}
	_, errOut, code = runResults(t, "compare", "--fail-on", "tpot>5", base, cand)
	if code != exitcode.Config || !strings.Contains(errOut, "--fail-on: gate clause") {
		t.Errorf("bad rule: exit %d, %s", code, errOut)
	}

	svg, csv := filepath.Join(t.TempDir(), "p.svg"), filepath.Join(t.TempDir(), "p.csv")
	out, _, code = runResults(t, "compare", "--json", "--fail-on", "median_tpot>+5%", "--allow-missing", "--svg", svg, "--csv", csv, base, cand)
	var g struct {
		Pass bool
		Rows []struct {
			Point, Status string
			Reasons       []string
		}
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || g.Pass || code != exitcode.Benchmark {
		t.Fatalf("--json: %v, pass %v, exit %d", err, g.Pass, code)
	}
	if strings.ContainsRune(out, '−') {
		t.Errorf("--json has a typographic minus")
	}
	for _, f := range []string{svg, csv} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	sum, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(sum), "```mermaid\nxychart-beta") || !strings.Contains(string(sum), "Gate ❌ fail") {
		t.Errorf("step summary lacks the gate and the chart: %v\n%s", err, sum)
	}
}
