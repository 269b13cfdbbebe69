package webreport

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/browsertest"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/results/compare"
)

func renderDir(t *testing.T, dir string) string {
	t.Helper()
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPageGolden holds the page's structure: sections, tables, charts.
func TestPageGolden(t *testing.T) {
	golden.Assert(t, "testdata/run.golden.html", []byte(renderDir(t, writeFixture(t, false))))
	golden.Assert(t, "testdata/failed.golden.html", []byte(renderDir(t, writeFixture(t, true))))
}

// TestPageShowsEverySection: what the issue lists is on the page of a
// succeeded run, and a failed run's page says why.
func TestPageShowsEverySection(t *testing.T) {
	page := renderDir(t, writeFixture(t, false))
	for _, want := range []string{
		`id="what-ran"`, "sha256:" + strings.Repeat("ab", 32), "benchmark.concurrencies=8x32", "node1, node2, node3", "slurmbench mock-engine --mode prefill",
		`id="points"`, "Goodput (req/s)", "16.00", "J/output token",
		`class="chart pareto"`, `id="distributions"`, "320 requests, 1 not completed",
		`id="power"`, `class="window"`, "J per output token", `id="eval"`, "strict-match 0.9500",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", `src="`, `href="http`, "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q: it must be self-contained and script-free", bad)
		}
	}
	failed := renderDir(t, writeFixture(t, true))
	for _, want := range []string{`id="failure"`, "health_deadline", "decode_0 on node3", "CUDA out of memory &lt;alloc&gt;", `id="log-tail"`, "the engines were not healthy"} {
		if !strings.Contains(failed, want) {
			t.Errorf("the failed run's page lacks %q", want)
		}
	}
}

// TestPageInBrowser renders the page in headless Chromium: no console
// message, every point of the Pareto chart drawn and labelled, every
// section there; the screenshot is kept (SLURMBENCH_ARTIFACTS, or the
// README's picture under -update).
func TestPageInBrowser(t *testing.T) {
	dir := writeFixture(t, false)
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	shot := ""
	if *golden.Update {
		shot, _ = filepath.Abs(filepath.Join("..", "..", "..", "docs", "img", "report.png"))
	} else if a := os.Getenv("SLURMBENCH_ARTIFACTS"); a != "" {
		shot = filepath.Join(a, "report-fixture.png")
	}
	if shot != "" {
		if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := browsertest.Render(t, path, shot, 1200, 2600)
	browsertest.CheckReport(t, p, len(fixtureConcs), "what-ran", "points", "pareto", "distributions", "power", "eval")
}

func TestCheckReportFindsProblems(t *testing.T) {
	rec := &recorder{}
	browsertest.CheckReport(rec, browsertest.Page{DOM: "<html></html>", Console: []string{`:CONSOLE:1] "boom"`}}, 2, "points")
	if len(rec.errs) < 3 {
		t.Errorf("a blank page with a console error gave %q", rec.errs)
	}
}

type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }

// TestCommand: report DIR rebuilds the page from the directory alone; a
// directory with neither a summary nor results is refused with exit 2.
func TestCommand(t *testing.T) {
	dir := writeFixture(t, false)
	var out bytes.Buffer
	if err := Command(CommandOptions{Args: []string{dir}, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, PageName))
	if err != nil || !strings.Contains(string(b), `class="chart pareto"`) || !strings.Contains(out.String(), PageName) {
		t.Errorf("report: %v, %q", err, out.String())
	}
	other := filepath.Join(t.TempDir(), "x.html")
	if err := Command(CommandOptions{Args: []string{dir}, Out: other, JSON: true, Stdout: &out}); err != nil || !strings.Contains(out.String(), `"report":`) {
		t.Errorf("--out --json: %v %q", err, out.String())
	}
	if err := Command(CommandOptions{Args: []string{t.TempDir()}, Stdout: &out}); exitcode.Of(err) != exitcode.Config {
		t.Errorf("an empty directory: %v, want exit 2", err)
	}
}

// TestComparePageReadsRequests: the comparison page draws each side's
// per-request distributions when the sides kept them.
func TestComparePageReadsRequests(t *testing.T) {
	base, cand := writeFixture(t, false), writeFixture(t, false)
	bs, err := compare.LoadResultSet(base)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := compare.LoadResultSet(cand)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "compare.html")
	if err := WriteCompare(page, bs, cs, "pass"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gate passed", "baseline ctx8/gen4 c8", "candidate ctx8/gen4 c32", `class="bar"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the comparison page lacks %q", want)
		}
	}
}
