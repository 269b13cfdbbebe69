package browsertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The browser reports what a page logs, and lays out what it draws.
func TestRenderSeesConsoleAndDOM(t *testing.T) {
	dir := t.TempDir()
	noisy := filepath.Join(dir, "noisy.html")
	if err := os.WriteFile(noisy, []byte(`<!DOCTYPE html><html><body><p id="x">hi</p><script>console.error("boom")</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Render(t, noisy, "", 320, 240)
	if len(p.Console) != 1 || !strings.Contains(p.Console[0], "boom") || !strings.Contains(p.DOM, `id="x"`) {
		t.Errorf("console %q, DOM %q", p.Console, p.DOM)
	}
	quiet := filepath.Join(dir, "quiet.html")
	if err := os.WriteFile(quiet, []byte(`<!DOCTYPE html><html><body><svg class="chart pareto"><circle r="2"/><text>c8</text></svg></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	p = Render(t, quiet, "", 320, 240)
	if len(p.Console) != 0 {
		t.Errorf("a script-free page logged %q", p.Console)
	}
	CheckReport(t, p, 1)
}
