package planner

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/* from the current output")

// goldenCases are the topologies whose plans are pinned byte for byte.
var goldenCases = []struct {
	name, profile, recipe string
}{
	{"1p1d", "b200.toml", "1p1d.yaml"},               // 8-GPU nodes, sglang router
	{"4p1d", "b200.toml", "4p1d.yaml"},               // corpus 8k1k_mtp_4p1d_c2048 shape
	{"tp16-decode", "b200.toml", "tp16-decode.yaml"}, // multi-node decode worker, dedicated infra node
	{"gb300", "gb300.toml", "gb300.yaml"},            // 4-GPU nodes, GPU slices, TP8 over two nodes
	{"agg", "b200.toml", "agg.yaml"},                 // aggregated
	{"mock-2p1d", "mock4.toml", "mock-2p1d.yaml"},    // the demo's mock engine
	{"agentic", "b200.toml", "agentic.yaml"},         // benchmark.type custom on the last decode node
	// Mooncake store, KV events, per-node DP, frontend on the first decode node.
	{"vllm-mooncake", "gb300.toml", "vllm-mooncake.yaml"},
	// prefill/decode colocation on one node, per-GPU DP ranks, KV events: true.
	{"vllm-coloc", "b200.toml", "vllm-coloc.yaml"},
	{"sglang-direct", "b200.toml", "sglang-direct.yaml"},     // schema 2's router-free frontend.type: sglang
	{"vllm-router-pd", "b200.toml", "vllm-router-pd.yaml"},   // vLLM Router, P/D, decode DP16 pools on two nodes
	{"vllm-router-agg", "b200.toml", "vllm-router-agg.yaml"}, // vLLM Router over one DEP2 worker, DP expansion
	// frontend.type trtllm_serve: the aggregated worker is the endpoint; the disaggregated orchestrator.
	{"trtllm-serve-agg", "b200.toml", "trtllm-serve-agg.yaml"},
	{"trtllm-serve-disagg", "b200.toml", "trtllm-serve-disagg.yaml"},
}

// TestGolden pins the JSON plan and the human view of each case. The
// testdata directory's absolute path is replaced by @TESTDATA@ so the files
// do not depend on where the repository is checked out.
func TestGolden(t *testing.T) {
	td := testdataDir(t)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			p := loadProfile(t, filepath.Join(td, "profiles", tc.profile))
			r := loadRecipe(t, filepath.Join(td, "recipes", tc.recipe))
			pl, err := Build(inputs(p, r))
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, pl)
			js, err := pl.JSON()
			if err != nil {
				t.Fatal(err)
			}
			var human bytes.Buffer
			if err := pl.WriteHuman(&human); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join(td, "golden", tc.name+".json"), bytes.ReplaceAll(js, []byte(td), []byte("@TESTDATA@")))
			compareGolden(t, filepath.Join(td, "golden", tc.name+".txt"), bytes.ReplaceAll(human.Bytes(), []byte(td), []byte("@TESTDATA@")))
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./planner -run TestGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test ./planner -run TestGolden -update rewrites it):\n%s", filepath.Base(path), firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first differing line with a little context.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(equal lines, different bytes)"
}
