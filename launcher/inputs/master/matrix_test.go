package master

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// TestExpandMatchesGenerator compares the expansion of both shipped master
// configs, row by row and field by field, with the generator's own output
// recorded in testdata (provenance in testdata/README.md).
func TestExpandMatchesGenerator(t *testing.T) {
	for _, c := range []struct{ dir, golden string }{
		{"inferencex", "generator-august.json"},
		{"inferencex-v2", "generator-v2.json"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			path := shareddata.Path(t, "data", c.dir, "configs", "nvidia-master.yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			pts, err := Expand(path, data)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join("testdata", c.golden))
			if err != nil {
				t.Fatal(err)
			}
			var want []map[string]any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			got := make([]map[string]any, len(pts))
			for i, p := range pts {
				got[i] = roundTrip(t, p.GeneratorRow())
			}
			if len(got) != len(want) {
				t.Errorf("%d points, the generator has %d", len(got), len(want))
			}
			bad := 0
			for i := 0; i < len(got) && i < len(want); i++ {
				if d := diffRow(got[i], want[i]); d != "" {
					if bad++; bad <= 5 {
						t.Errorf("point %d (%v, line %d): %s", i, want[i]["config-key"], pts[i].Line, d)
					}
				}
			}
			if bad > 5 {
				t.Errorf("... %d points differ in all", bad)
			}
		})
	}
}

func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func diffRow(got, want map[string]any) string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%s missing (want %v)", k, w))
		} else if !reflect.DeepEqual(g, w) {
			d = append(d, fmt.Sprintf("%s = %v, want %v", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s = %v, not in the generator's row", k, g))
		}
	}
	return strings.Join(d, "; ")
}

// TestExpandRules builds the cases the generator distinguishes: conc ranges
// (doubling, end always included), aggregated workers, conflicting
// CONFIG_FILEs, the eval choice (8k1k only, >= 16, highest per parallelism
// group, first on a tie) and skipped single-node entries.
func TestExpandRules(t *testing.T) {
	const doc = `
single:
  image: i
  model: m
  model-prefix: s
  runner: b200
  precision: fp8
  framework: sglang
  scenarios:
    fixed-seq-len:
    - {isl: 8192, osl: 1024, search-space: [{tp: 8, conc-start: 4, conc-end: 64}]}
agg:
  image: img
  model: mod
  model-prefix: dsr1
  runner: b200-multinode
  precision: fp4
  framework: dynamo-sglang
  multinode: true
  router: {name: r}
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - {conc-start: 4, conc-end: 48, worker: {num-worker: 2, tp: 8, ep: 8, dp-attn: true, additional-settings: ["CONFIG_FILE=recipes/a.yaml:override_x"]}}
      - {conc-list: [8, 12], worker: {num-worker: 2, tp: 8, ep: 8, dp-attn: true, additional-settings: ["CONFIG_FILE=recipes/a.yaml:override_x"]}}
      - {conc-list: [4, 8], worker: {num-worker: 1, tp: 4, ep: 1, dp-attn: false}}
    - isl: 1024
      osl: 1024
      search-space:
      - {conc-list: [512], worker: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}}
disagg:
  image: img
  model: mod
  model-prefix: dsr1
  runner: b200-multinode
  precision: fp4
  framework: dynamo-trt
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - {spec-decoding: mtp, conc-list: [64, 32], prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true}, decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true, pp: 2}}
      - {spec-decoding: mtp, conc-list: [64], prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true}, decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true, pp: 2}}
`
	pts, err := Expand("t.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 6 {
		t.Fatalf("%d points, want 6 (the single-node entry skipped)", len(pts))
	}
	if sk, err := SkippedEntries("t.yaml", []byte(doc)); err != nil || len(sk) != 1 || sk[0].Key != "single" || sk[0].Line != 2 || !strings.Contains(sk[0].Reason, "single-node entry") {
		t.Errorf("skipped entries: %+v (err %v), want the single-node entry at line 2", sk, err)
	}
	if want := []int{4, 8, 16, 32, 48}; !reflect.DeepEqual(pts[0].Conc, want) {
		t.Errorf("conc range = %v, want %v", pts[0].Conc, want)
	}
	if pts[0].ConfigFile != "recipes/a.yaml" || pts[0].Selector != "override_x" {
		t.Errorf("CONFIG_FILE = %q selector %q", pts[0].ConfigFile, pts[0].Selector)
	}
	if _, ok := pts[0].Decode["additional-settings"]; ok || pts[0].Decode["num-worker"] != 0 || pts[0].Prefill["num-worker"] != 2 {
		t.Errorf("aggregated pair: prefill %v decode %v", pts[0].Prefill, pts[0].Decode)
	}
	if pts[0].Prefill["pp"] != 1 || pts[5].Decode["pp"] != 2 {
		t.Errorf("pp defaults: %v / %v", pts[0].Prefill["pp"], pts[5].Decode["pp"])
	}
	if pts[0].ExpName != "dsr1_8k1k" || pts[3].ExpName != "dsr1_1k1k" || pts[0].MaxModelLen != 8192+1024+256 {
		t.Errorf("names: %q %q %d", pts[0].ExpName, pts[3].ExpName, pts[0].MaxModelLen)
	}
	if pts[0].Meta["router"] == nil || pts[4].Meta["router"] != nil {
		t.Errorf("router metadata: %v / %v", pts[0].Meta, pts[4].Meta)
	}
	if pts[4].SpecDecoding != "mtp" || pts[0].SpecDecoding != "none" {
		t.Errorf("spec-decoding: %q %q", pts[4].SpecDecoding, pts[0].SpecDecoding)
	}
	// Evals: points 0 and 1 are one parallelism group (0 has 48 >= 12);
	// point 2 has no concurrency >= 16; point 3 is 1k1k; 4 and 5 tie at 64,
	// the first wins.
	var evals []string
	for _, p := range pts {
		evals = append(evals, fmt.Sprintf("%v/%d", p.RunEval, p.EvalConc))
	}
	if want := []string{"true/48", "false/0", "false/0", "false/0", "true/64", "false/0"}; !reflect.DeepEqual(evals, want) {
		t.Errorf("evals = %v, want %v", evals, want)
	}
	if pts[5].GPUs() != 4+16 {
		t.Errorf("GPUs = %d, want 20", pts[5].GPUs())
	}

	conflict := strings.Replace(doc, "decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true, pp: 2}}\n      - {spec", "decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true, pp: 2, additional-settings: [CONFIG_FILE=recipes/b.yaml]}, prefill2: 1}\n      - {spec", 1)
	conflict = strings.Replace(conflict, "prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true}, decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true, pp: 2, additional", "prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true, additional-settings: [CONFIG_FILE=recipes/c.yaml]}, decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true, pp: 2, additional", 1)
	if _, err := Expand("t.yaml", []byte(conflict)); err == nil || !strings.Contains(err.Error(), "conflicting CONFIG_FILE") || !strings.Contains(err.Error(), "t.yaml:") {
		t.Errorf("conflicting CONFIG_FILEs: err = %v", err)
	}
	if _, err := Expand("t.yaml", []byte(strings.Replace(doc, "conc-list: [4, 8], worker", "worker", 1))); err == nil || !strings.Contains(err.Error(), "conc-list, or conc-start") {
		t.Errorf("no concurrency: err = %v", err)
	}
}

func TestSelect(t *testing.T) {
	pts := []MatrixPoint{
		{Key: "dsr1-fp4-b200-x", Runner: "b200-multinode", ISL: 8192, OSL: 1024, RunEval: true},
		{Key: "dsr1-fp4-b200-x", Runner: "b200-multinode", ISL: 1024, OSL: 1024},
		{Key: "dsr1-fp4-gb200-y", Runner: "gb200", ISL: 8192, OSL: 1024},
	}
	for _, c := range []struct {
		s    Selection
		want int
		err  string
	}{
		{Selection{Runner: "b200-multinode"}, 2, ""},
		{Selection{Keys: []string{"*-gb200-*"}}, 1, ""},
		{Selection{Filter: "seq=8k1k"}, 2, ""},
		{Selection{Filter: "seq=8k1k, eval=true"}, 1, ""},
		{Selection{Filter: "colour=red"}, 0, "unknown field"},
		{Selection{Filter: "seq"}, 0, "not field=value"},
		{Selection{Keys: []string{"["}}, 0, "--key"},
	} {
		got, err := Select(pts, c.s)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: err = %v, want %q", c.s, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != c.want {
			t.Errorf("%+v: %d points (err %v), want %d", c.s, len(got), err, c.want)
		}
	}
}

// TestResultFilenameBase: the workflow's RESULT_FILENAME_BASE for a point of
// the August master config (dsr1-fp4-b200-dynamo-trt's first point).
func TestResultFilenameBase(t *testing.T) {
	path := shareddata.Path(t, "data", "inferencex", "configs", "nvidia-master.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := Expand(path, data)
	if err != nil {
		t.Fatal(err)
	}
	want := "dsr1_8k1k_fp4_dynamo-trt_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw1_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_disagg-true_spec-mtp_conc90_b200-nv_0"
	if got := pts[0].ResultFilenameBase("b200-nv_0"); got != want {
		t.Errorf("RESULT_FILENAME_BASE\n got %s\nwant %s", got, want)
	}
}

// TestExpandMatchesLiveGenerator runs InferenceX's generator itself when a
// checkout names it (SLURMBENCH_INFERENCEX_GENERATOR: the path of
// generate_sweep_configs.py; SLURMBENCH_INFERENCEX_RUNNERS: its runner
// config) and compares its multi-node fixed-seq-len rows with the expansion,
// node-count aside. The generator is not part of this repository or of the
// shared data, so without it the test skips, saying so; the recorded
// outputs above are checked either way.
func TestExpandMatchesLiveGenerator(t *testing.T) {
	gen, runners := os.Getenv("SLURMBENCH_INFERENCEX_GENERATOR"), os.Getenv("SLURMBENCH_INFERENCEX_RUNNERS")
	if gen == "" || runners == "" {
		t.Skip("SLURMBENCH_INFERENCEX_GENERATOR and SLURMBENCH_INFERENCEX_RUNNERS unset: no InferenceX checkout to run the generator from (the recorded outputs are compared by TestExpandMatchesGenerator)")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	for _, dir := range []string{"inferencex", "inferencex-v2"} {
		t.Run(dir, func(t *testing.T) {
			path := shareddata.Path(t, "data", dir, "configs", "nvidia-master.yaml")
			cmd := exec.Command(py, gen, "full-sweep", "--config-files", path, "--runner-config", runners,
				"--multi-node", "--scenario-type", "fixed-seq-len", "--run-evals")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the generator: %v\n%s", err, stderr.String())
			}
			var want []map[string]any
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatalf("the generator's output: %v", err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			pts, err := Expand(path, data)
			if err != nil {
				t.Fatal(err)
			}
			if len(pts) != len(want) {
				t.Fatalf("%d points, the generator printed %d", len(pts), len(want))
			}
			for i, p := range pts {
				got := roundTrip(t, p.GeneratorRow())
				delete(got, "config-key")
				delete(want[i], "node-count")
				if d := diffRow(got, want[i]); d != "" {
					t.Errorf("point %d (%s): %s", i, p.Name(), d)
				}
			}
		})
	}
}
