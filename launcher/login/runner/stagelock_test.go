package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestTwoRunsStagingIntoOneDirectoryDoNotMix: runs staging into one
// directory at once (two matrix runs sharing --stage-dir, which always
// overwrite) take turns: LOGS/ ends up holding one run's logs whole, never
// a mix (audit #33 row 9: mixed in 106 of 200 rounds).
func TestTwoRunsStagingIntoOneDirectoryDoNotMix(t *testing.T) {
	const files = 40
	for round := range 6 {
		dir := t.TempDir()
		stage := filepath.Join(dir, "stage")
		plans := []string{"run-a", "run-b", "run-c"}
		var wg sync.WaitGroup
		errs := make([]error, len(plans))
		for i, id := range plans {
			pl := testPlan(t, filepath.Join(dir, "runs"), id)
			for _, d := range []string{pl.Layout.Logs, pl.Layout.Results} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for f := range files {
				if err := os.WriteFile(filepath.Join(pl.Layout.Logs, fmt.Sprintf("worker-%02d.log", f)), []byte(id+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wg.Go(func() {
				_, errs[i], _ = collectAndStage(context.Background(), pl, CollectOptions{StageDir: stage, Overwrite: true}, nil)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %s staging its logs: %v", round, plans[i], err)
			}
		}
		logs := filepath.Join(stage, LogsDirName)
		owner, err := os.ReadFile(filepath.Join(logs, logsOwner))
		if err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(logs)
		if err != nil {
			t.Fatal(err)
		}
		from := map[string]int{}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "worker-") {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(logs, e.Name()))
			from[strings.TrimSpace(string(b))]++
		}
		if len(from) != 1 || from[strings.TrimSpace(string(owner))] != files {
			t.Fatalf("round %d: LOGS/ (owner %s) holds logs from %v, want %d files of one run", round, strings.TrimSpace(string(owner)), from, files)
		}
	}
}
