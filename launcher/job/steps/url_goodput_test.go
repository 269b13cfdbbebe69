package steps

import (
	"strings"
	"testing"
)

// --goodput reaches the plan the native client reads; a bad SLO is refused
// naming the flag.
func TestURLBenchGoodput(t *testing.T) {
	u := URLBench{URL: "http://127.0.0.1:8000", Model: "m", ISL: 8, OSL: 8, Concurrencies: []int{1}, GPUs: 1, Out: t.TempDir(),
		Goodput: []string{"ttft:200", "e2el:5000"}}
	pl, err := u.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if g := pl.Benchmark.Goodput; g["ttft"] != 200 || g["e2el"] != 5000 || len(g) != 2 {
		t.Errorf("plan goodput %v", g)
	}
	if cfg := nativeConfig(pl, BenchOptions{Frontend: u.URL}, pl.Points[0]); cfg.Goodput["ttft"] != 200 {
		t.Errorf("client config goodput %v", cfg.Goodput)
	}
	u.Goodput = []string{"itl:3"}
	if _, err := u.Plan(); err == nil || !strings.Contains(err.Error(), "--goodput") {
		t.Errorf("bad SLO: %v", err)
	}
}
