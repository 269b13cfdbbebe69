// Package browsertest renders a page in a real headless browser for tests:
// Debian's chromium-headless-shell (scripts/chromium.sh installs it; make
// test runs that). A test gets the DOM after rendering, every console
// message the page logged, and a screenshot. Without the browser the test
// skips, or fails under SLURMBENCH_REQUIRE_BROWSER=1 (CI).
package browsertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequireEnv turns a missing browser from a skip into a failure.
const RequireEnv = "SLURMBENCH_REQUIRE_BROWSER"

// binaries are the headless Chromium builds Debian packages, in order.
var binaries = []string{"chromium-headless-shell", "chromium"}

// Find returns the browser's path, skipping (or failing) t without one.
func Find(t testing.TB) string {
	t.Helper()
	for _, b := range binaries {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("no headless Chromium (%s) on PATH (%s=1): scripts/chromium.sh installs Debian's", strings.Join(binaries, ", "), RequireEnv)
	}
	t.Skipf("no headless Chromium (%s) on PATH: scripts/chromium.sh installs Debian's", strings.Join(binaries, ", "))
	return ""
}

// Page is what the browser made of a file.
type Page struct {
	DOM     string   // the document after rendering (--dump-dom)
	Console []string // every console message, errors included
	// Screenshot is the PNG's path (under the test's temporary directory
	// unless the caller named one).
	Screenshot string
}

var consoleLine = regexp.MustCompile(`:CONSOLE(?:\(\d+\))?[:\]][^\n]*`)

// Render opens path (an HTML file) in the browser twice, once for the DOM
// and the console, once for a screenshot of width×height pixels written to
// shot ("" : a temporary file). Each run is bounded by the test's context
// and a minute, which only catches a hung browser.
func Render(t testing.TB, path, shot string, width, height int) Page {
	t.Helper()
	bin := Find(t)
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "screenshot.png")
	}
	profile := t.TempDir()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile,
		"--enable-logging=stderr", "--v=0", "--allow-file-access-from-files"}
	run := func(extra ...string) (string, string) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append(append([]string(nil), base...), extra...), "file://"+abs)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %v: %v\n%s", bin, extra, err, errb.String())
		}
		return out.String(), errb.String()
	}
	dom, stderr := run("--dump-dom")
	p := Page{DOM: dom, Screenshot: shot}
	p.Console = append(p.Console, consoleLine.FindAllString(stderr, -1)...)
	run("--screenshot="+shot, "--window-size="+itoa(width)+","+itoa(height), "--hide-scrollbars")
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Fatalf("the browser wrote no screenshot at %s: %v", shot, err)
	}
	return p
}

func itoa(n int) string { return strconv.Itoa(n) }

var circleRE = regexp.MustCompile(`<circle[^>]*>`)

var labelRE = regexp.MustCompile(`<text[^>]*>c(\d+)</text>`)

// CheckReport checks what a browser made of a slurmbench report page
// whose Pareto chart has points points: no console message at all (the page has no script), the
// sections, and every point drawn and labelled.
func CheckReport(t testing.TB, p Page, points int, sections ...string) {
	t.Helper()
	for _, c := range p.Console {
		t.Errorf("console: %s", c)
	}
	for _, id := range sections {
		if !strings.Contains(p.DOM, `id="`+id+`"`) {
			t.Errorf("the rendered page has no section %q", id)
		}
	}
	i := strings.Index(p.DOM, `class="chart pareto"`)
	if i < 0 {
		t.Errorf("the rendered page has no Pareto chart")
		return
	}
	chart := p.DOM[i:]
	chart = chart[:strings.Index(chart, "</svg>")]
	if n := len(circleRE.FindAllString(chart, -1)); n != points {
		t.Errorf("the Pareto chart has %d points, want %d", n, points)
	}
	if n := len(labelRE.FindAllString(chart, -1)); n != points {
		t.Errorf("the Pareto chart has %d point labels, want %d", n, points)
	}
}
