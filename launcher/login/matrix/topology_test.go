package matrix

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
)

// TestTopologySample packs the sample's NVIDIA master
// (../shared/data/inferencex-v3) with its runners.yaml and the default
// estimates. Counted over the multi-node points the matrix can run (their
// recipe is in the tree; they wait for the composer): without a time limit
// in the way the allocations holding them are exactly their distinct
// (entry, total GPUs) pairs; under the default 4-hour limit a few
// topologies split, and the packing still saves at least 40 % of the setup
// GPU-hours one allocation per point would spend (issue 35's goal).
func TestTopologySample(t *testing.T) {
	root := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	for _, limit := range []time.Duration{1000 * time.Hour, 0} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			o := todayOptions(root)
			o.Startup = 0
			o.Estimates.TimeLimit = limit
			o.Runners = filepath.Join(root, "configs", "runners.yaml")
			m, err := Build(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			checkSample(t, m, limit > 0)
		})
	}
}

func checkSample(t *testing.T, m *Matrix, unlimited bool) {
	type shape struct {
		key  string
		gpus int
	}
	for _, scen := range []string{master.FixedSeqLen, master.AgenticCoding} {
		pairs, variants, splits := map[shape]bool{}, map[string]bool{}, map[string]bool{}
		rows, allocs := 0, 0
		var perPoint, packed float64
		setup := m.Startup.Hours()
		for _, g := range m.Groups {
			in := 0
			for _, p := range g.Points {
				if !p.Multinode || p.Scenario != scen || ReasonOf(p.Err) != ReasonNotComposed {
					continue
				}
				in++
				rows++
				pairs[shape{p.Key, p.AllocGPUs()}] = true
				variants[p.Key+"|"+p.SrtRecipe] = true
				splits[p.Key+"|"+splitKey(p)] = true
				perPoint += float64(p.AllocGPUs()) * setup
			}
			if in == 0 {
				continue
			}
			if in != len(g.Points) {
				t.Errorf("allocation of %s mixes runnable multi-node %s points with others", g.Points[0].Name(), scen)
			}
			allocs++
			packed += float64(g.GPUs()) * setup
		}
		saved := 100 * (perPoint - packed) / perPoint
		t.Logf("%s: %d multi-node rows, %d (entry, variant), %d (entry, split), %d (entry, GPUs); %d allocations; setup %.1f of %.1f GPU-h, %.0f %% saved",
			scen, rows, len(variants), len(splits), len(pairs), allocs, packed, perPoint, saved)
		if rows == 0 || allocs == 0 {
			t.Fatalf("%s: no runnable multi-node rows", scen)
		}
		if unlimited && allocs != len(pairs) {
			t.Errorf("%s: %d allocations without a time limit, want one per distinct (entry, total GPUs) pair: %d", scen, allocs, len(pairs))
		}
		if saved < 40 {
			t.Errorf("%s: %.0f %% of setup GPU-hours saved, want at least 40 %%", scen, saved)
		}
	}
}

// TestPackOrdersAndSplits builds points of one topology: identical
// servers run back to back, then points of one split; a point that would
// take the allocation past its limit opens the next one; a point of
// another entry or GPU count never joins.
func TestPackOrdersAndSplits(t *testing.T) {
	pt := func(key string, idx, gpus int, split, variant string, conc int) *Point {
		row := map[string]any{"srt-recipe": "r.yaml:" + variant, "conc": []int{conc}}
		pw, dw := 1, 1
		fmt.Sscanf(split, "%d/%d", &pw, &dw)
		return &Point{
			MatrixPoint: master.MatrixPoint{Key: key, Index: idx, Multinode: true, Scenario: master.FixedSeqLen, NodeCount: gpus / 4, GPUsPerNode: 4,
				Conc: []int{conc}, Row: row, Prefill: map[string]any{"num-worker": pw, "tp": 4}, Decode: map[string]any{"num-worker": dw, "tp": 4}},
			Err: &PointError{Reason: ReasonNotComposed, Err: fmt.Errorf("not composed")},
		}
	}
	est := Estimates{Import: time.Minute, Stage: time.Minute, Dynamo: time.Minute, EngineStart: 10 * time.Minute, PerConc: 30 * time.Minute, TimeLimit: 2 * time.Hour}.withDefaults()
	pts := []*Point{
		pt("a", 0, 12, "2/1", "v1", 4), // a: split 2/1 variant v1
		pt("a", 1, 12, "1/2", "v2", 4), // a: the other split
		pt("a", 2, 12, "2/1", "v3", 4), // a: split 2/1, engine args v3
		pt("a", 3, 12, "2/1", "v1", 8), // a: v1's servers again
		pt("b", 4, 12, "2/1", "v1", 4), // another entry
		pt("a", 5, 8, "1/1", "v1", 4),  // a on fewer GPUs
		pt("a", 6, 12, "1/2", "v2", 8), // v2 again
	}
	gs := groupByTopology(pts, est)
	var got []string
	for _, g := range gs {
		s := ""
		for i, p := range g.Points {
			mark := ""
			switch {
			case g.Resplit[i]:
				mark = "!"
			case g.Restart[i]:
				mark = "~"
			}
			s += fmt.Sprintf("%s%s%d ", mark, p.Key, p.Index)
		}
		got = append(got, fmt.Sprintf("[%s| %s]", s, g.Estimate))
	}
	// a's 12-GPU points: v1 ×2 (0, 3), v3 (2), then the other split, v2 ×2
	// (1, 6). Setup 3 min, then 0 and 3 with one start: 3+10+60 = 73 min;
	// 2 restarts: +40 = 113; 1 would pass 120: a new allocation, 3+10+60.
	want := []string{"[a0 a3 ~a2 | 1h53m0s]", "[a1 a6 | 1h13m0s]", "[b4 | 43m0s]", "[a5 | 43m0s]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("groups\n%v\nwant\n%v", got, want)
	}
	// Estimates that do not fit the limit even for one point split
	// nothing (the test cluster's 20-minute jobs).
	short := est
	short.TimeLimit = 20 * time.Minute
	if gs := groupByTopology(pts, short); len(gs) != 3 || len(gs[0].Points) != 5 {
		t.Errorf("limit below one point: %d allocations, the first of %d points; want 3 and 5", len(gs), len(gs[0].Points))
	}
	// With room, the split change is marked as one.
	est.TimeLimit = 10 * time.Hour
	gs = groupByTopology(pts, est)
	if all, resplit := gs[0].Restarts(); len(gs[0].Points) != 5 || all != 2 || resplit != 1 {
		t.Errorf("first allocation: %d points, %d restarts, %d resplits; want 5, 2 and 1", len(gs[0].Points), all, resplit)
	}
}
