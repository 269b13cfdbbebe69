package fragment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadBlocksMissing: a block the tree lacks is a *MissingBlockError
// naming it (missing input); a block that is there but unreadable as a
// mapping is not.
func TestLoadBlocksMissing(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		lane  Lane
		power bool
		// missing is the block a MissingBlockError names ("" : none).
		missing string
		wantErr string
	}{
		{name: "no shared block", lane: Lane{Agentic: true, MultiNode: true},
			files:   map[string]string{FixedSequenceMulti: "benchmark: {}\n"},
			missing: AgenticMulti, wantErr: "the agentic multi-node lane's shared block: " + AgenticMulti + " is not in this tree"},
		{name: "no telemetry block for a power row", lane: Lane{MultiNode: true}, power: true,
			files:   map[string]string{FixedSequenceMulti: "benchmark: {}\n"},
			missing: TelemetryBlock, wantErr: "the telemetry block: " + TelemetryBlock + " is not in this tree"},
		{name: "a shared block that does not parse is no missing block", lane: Lane{},
			files:   map[string]string{FixedSequenceSingle: "benchmark: [\n"},
			wantErr: "the fixed-sequence single-node lane's shared block"},
		{name: "all there", lane: Lane{MultiNode: true}, power: true,
			files: map[string]string{FixedSequenceMulti: "benchmark: {}\n", TelemetryBlock: "telemetry: {enabled: true}\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for p, body := range c.files {
				full := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadBlocks(context.Background(), root, c.lane, c.power, 9401)
			var mb *MissingBlockError
			switch {
			case c.wantErr == "":
				if err != nil {
					t.Fatal(err)
				}
			case err == nil || !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("err %v, want one with %q", err, c.wantErr)
			case errors.As(err, &mb) != (c.missing != ""):
				t.Fatalf("err %v (%T): a missing block %v, want %v", err, err, mb != nil, c.missing != "")
			case mb != nil && (mb.Block != c.missing || mb.Root != root || !errors.Is(err, os.ErrNotExist)):
				t.Errorf("missing block %q under %q, want %q under %q", mb.Block, mb.Root, c.missing, root)
			}
		})
	}
}
