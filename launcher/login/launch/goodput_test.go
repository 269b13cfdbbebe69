package launch

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// --goodput reaches the plan the benchmark step reads; a bad SLO is refused
// naming the flag before anything else happens.
func TestPlanGoodput(t *testing.T) {
	po := PlanOptions{Profile: filepath.Join("..", "..", "..", "profiles", "testcluster.toml"), Recipe: filepath.Join("..", "..", "..", "examples", "mock-2p1d.yaml"),
		Point: -1, Warn: io.Discard, Goodput: []string{"ttft:200", "tpot:30"}}
	pl, _, err := Plan(context.Background(), po)
	if err != nil {
		t.Fatal(err)
	}
	if g := pl.Benchmark.Goodput; g["ttft"] != 200 || g["tpot"] != 30 || len(g) != 2 {
		t.Errorf("plan goodput %v", g)
	}
	po.Goodput = []string{"ttft:0"}
	if _, _, err := Plan(context.Background(), po); err == nil || !strings.Contains(err.Error(), "--goodput") {
		t.Errorf("a zero SLO: %v", err)
	}
}
