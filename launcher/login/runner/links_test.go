package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/results"
)

// TestStagedLogsLeaveOutEscapingLinks: end to end through collection and
// staging, a link chain a job planted in its logs that climbs out of them
// ("s -> ." at each level, then s/../s/../../secret) is not staged into
// LOGS/, and the run's manifest lists it as refused (audit #33 row 1).
func TestStagedLogsLeaveOutEscapingLinks(t *testing.T) {
	dir := t.TempDir()
	pl := testPlan(t, filepath.Join(dir, "runs"), "links")
	secret := filepath.Join(pl.RunDir, "secret")
	worker := filepath.Join(pl.Layout.Logs, "w", "x")
	for _, d := range []string{worker, pl.Layout.Results} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{".", "w/s"}, {".", "w/x/s"}, {"s/../s/../../secret", "w/x/worker.log"}, {"s/engine.log", "w/x/ok.log"}} {
		if err := os.Symlink(l[0], filepath.Join(pl.Layout.Logs, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(worker, "engine.log"), []byte("engine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(worker, "worker.log")); err != nil || string(b) != "secret" {
		t.Fatalf("the planted chain does not escape (%q, %v)", b, err)
	}
	stage := filepath.Join(dir, "stage")
	col, logsErr, _ := collectAndStage(context.Background(), pl, CollectOptions{StageDir: stage}, nil)
	if logsErr != nil {
		t.Fatal(logsErr)
	}
	if b, err := os.ReadFile(filepath.Join(stage, LogsDirName, "w", "x", "worker.log")); err == nil {
		t.Errorf("the staged worker.log reads %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(stage, LogsDirName, "w", "x", "ok.log")); err != nil || string(b) != "engine" {
		t.Errorf("the inside link: %q, %v", b, err)
	}
	b, err := os.ReadFile(col.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.RefusedLinks) != 1 || m.RefusedLinks[0].Path != "LOGS/w/x/worker.log" || !strings.Contains(m.RefusedLinks[0].Why, "leaves") {
		t.Errorf("manifest refused_links %+v, want LOGS/w/x/worker.log", m.RefusedLinks)
	}
}
