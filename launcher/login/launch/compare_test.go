package launch

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestCompare: the entry refuses anything but two directories, tells "no
// gate" (nil) from an empty gate (refused), gates with exit 8, and writes
// the step summary only under GitHub Actions.
func TestCompare(t *testing.T) {
	data := filepath.Join("..", "..", "..", "results", "compare", "testdata", "compare")
	base, cand := filepath.Join(data, "baseline"), filepath.Join(data, "candidate")
	s := func(v string) *string { return &v }
	for _, tt := range []struct {
		name    string
		o       CompareOptions
		actions bool
		code    exitcode.Code
		want    string // in stdout, or in the error when code is not 0
		summary bool
	}{
		{"one directory", CompareOptions{Args: []string{base}}, false, exitcode.Config, "want BASELINE and CANDIDATE directories, got 1 arguments", false},
		{"no baseline", CompareOptions{Args: []string{filepath.Join(data, "nope"), cand}}, false, exitcode.Config, "results compare: baseline: ", false},
		{"table", CompareOptions{Args: []string{base, cand}}, false, 0, "| Point | Metric | Baseline | Candidate | Delta % |", false},
		{"table in Actions", CompareOptions{Args: []string{base, cand}}, true, 0, "| Point |", true},
		{"empty gate", CompareOptions{Args: []string{base, cand}, FailOn: s("")}, false, exitcode.Config, "--fail-on: ", false},
		{"gate fails", CompareOptions{Args: []string{base, cand}, FailOn: s("median_tpot>+5%"), AllowMissing: true}, true, exitcode.Benchmark, "ctx16/gen8 c2048", true},
		{"gate passes", CompareOptions{Args: []string{base, cand}, FailOn: s("median_tpot>+20%"), AllowMissing: true}, false, 0, "ctx16/gen8 c2048", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			summary := filepath.Join(t.TempDir(), "summary.md")
			t.Setenv("GITHUB_STEP_SUMMARY", summary)
			t.Setenv("GITHUB_ACTIONS", map[bool]string{true: "true"}[tt.actions])
			var out strings.Builder
			tt.o.IO = IO{Stdout: &out, Stderr: io.Discard}
			err := Compare(tt.o)
			if exitcode.Of(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", exitcode.Of(err), err, tt.code)
			}
			got := out.String()
			if tt.code == exitcode.Config {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to hold %q", got, tt.want)
			}
			b, _ := os.ReadFile(summary)
			if wrote := strings.Contains(string(b), "## slurmbench results compare"); wrote != tt.summary {
				t.Errorf("step summary written %v, want %v:\n%s", wrote, tt.summary, b)
			}
		})
	}
}

// TestCompareHTML: --html writes the page with both curves and the gate's
// verdict, passed or failed, beside the table.
func TestCompareHTML(t *testing.T) {
	data := filepath.Join("..", "..", "..", "results", "compare", "testdata", "compare")
	base, cand := filepath.Join(data, "baseline"), filepath.Join(data, "candidate")
	for _, tt := range []struct {
		rule, want string
		code       exitcode.Code
	}{
		{"median_tpot>+5%", "gate failed", exitcode.Benchmark},
		{"median_tpot>+20%", "gate passed", 0},
	} {
		page := filepath.Join(t.TempDir(), "compare.html")
		rule := tt.rule
		err := Compare(CompareOptions{IO: IO{Stdout: io.Discard, Stderr: io.Discard}, Args: []string{base, cand}, FailOn: &rule, AllowMissing: true, HTML: page})
		if exitcode.Of(err) != tt.code {
			t.Errorf("%s: %v, want exit %d", tt.rule, err, tt.code)
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{tt.want, `class="chart pareto"`, ">baseline<", ">candidate<", `id="verdict"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: the page lacks %q", tt.rule, want)
			}
		}
	}
}
