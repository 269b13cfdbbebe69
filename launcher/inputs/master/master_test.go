package master

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// realMaster is InferenceX's master config beside the repo in ../shared.
func realMaster(t *testing.T) map[string]Entry {
	t.Helper()
	path := shareddata.Path(t, "data", "inferencex", "configs", "nvidia-master.yaml")
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLookupRealMaster4P1D(t *testing.T) {
	m := realMaster(t)
	const key = "dsr1-fp4-b200-dynamo-sglang-mtp"
	pt, err := Lookup(m, key, 8)
	if err != nil {
		t.Fatal(err)
	}
	if pt.ConfigFile != "recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_4p1d_c2048.yaml" {
		t.Errorf("point 8 CONFIG_FILE = %q, want the 4p1d c2048 recipe", pt.ConfigFile)
	}
	if pt.Selector != "" {
		t.Errorf("selector = %q, want none", pt.Selector)
	}
	if !reflect.DeepEqual(pt.Concurrency, []int{2048}) {
		t.Errorf("conc = %v, want [2048]", pt.Concurrency)
	}
	if pt.ISL != 8192 || pt.OSL != 1024 {
		t.Errorf("isl/osl = %d/%d, want 8192/1024", pt.ISL, pt.OSL)
	}
	if pt.Image != "lmsysorg/sglang:v0.5.12.post1" {
		t.Errorf("image = %q", pt.Image)
	}
	if pt.SpecDecoding != "mtp" || pt.Precision != "fp4" || pt.ModelPrefix != "dsr1" || pt.Key != key || pt.Index != 8 {
		t.Errorf("point = %+v", pt)
	}
	// Every point of the key names its own recipe, in file order.
	var files []string
	for i := 0; ; i++ {
		p, err := Lookup(m, key, i)
		if err != nil {
			if !strings.Contains(err.Error(), "out of range 0..8") {
				t.Errorf("point %d: %v, want out of range 0..8", i, err)
			}
			break
		}
		files = append(files, p.ConfigFile)
	}
	if len(files) != 9 || !strings.HasSuffix(files[0], "8k1k_mtp_lowlat_0.yaml") {
		t.Errorf("points: %v", files)
	}
}

func TestLookupRealMasterSelector(t *testing.T) {
	m := realMaster(t)
	pt, err := Lookup(m, "dsr1-fp4-b200-dynamo-sglang", 0)
	if err != nil {
		t.Fatal(err)
	}
	if pt.ConfigFile != "recipes/b200-fp4/8k1k.yaml" || pt.Selector != "zip_override_stp_lowlat[0]" {
		t.Errorf("config file %q selector %q", pt.ConfigFile, pt.Selector)
	}
}

func TestLookupRealMasterErrors(t *testing.T) {
	m := realMaster(t)
	_, err := Lookup(m, "dsr1-fp4-b200-dynamo-sglang-mt", 0)
	if err == nil || !strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "dsr1-fp4-b200-dynamo-sglang-mtp") {
		t.Errorf("near-miss key: %v", err)
	}
	_, err = Lookup(m, "dsr1-fp4-b200-dynamo-sglang-mtp", -1)
	if err == nil || !strings.Contains(err.Error(), "pick one with --point") || !strings.Contains(err.Error(), "8k1k_mtp_4p1d_c2048.yaml") {
		t.Errorf("ambiguous point: %v", err)
	}
	_, err = Lookup(m, "dsr1-fp4-b200-dynamo-sglang-mtp", 9)
	if err == nil || !strings.Contains(err.Error(), "--point 9 out of range") {
		t.Errorf("point out of range: %v", err)
	}
}

const small = `
one-point:
  image: img:1
  model: org/model
  model-prefix: m
  precision: fp8
  framework: dynamo-sglang
  runner: b200-multinode
  multinode: true
  disagg: true
  extra-field-for-other-tools: {ignored: true}
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 128
      search-space:
      - conc-list: [8, 32]
        spec-decoding: none
        prefill:
          num-worker: 2
          additional-settings:
          - "CONFIG_FILE=recipes/x/2p1d.yaml"
          - "PREFILL_NODES=2"
        decode:
          num-worker: 1
          additional-settings:
          - "DECODE_NODES=1"
two-points:
  image: img:2
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4]
        prefill: {additional-settings: ["CONFIG_FILE=recipes/a.yaml"]}
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [64]
        prefill: {additional-settings: ["CONFIG_FILE=recipes/b.yaml:override_x"]}
no-points:
  image: img:3
bad-setting:
  scenarios:
    fixed-seq-len:
    - isl: 1
      osl: 1
      search-space:
      - prefill: {additional-settings: ["NOT_A_PAIR"]}
`

func loadSmall(t *testing.T) map[string]Entry {
	t.Helper()
	path := filepath.Join(t.TempDir(), "master.yaml")
	if err := os.WriteFile(path, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLookupOnePoint(t *testing.T) {
	m := loadSmall(t)
	pt, err := Lookup(m, "one-point", -1) // the only point
	if err != nil {
		t.Fatal(err)
	}
	want := ConfigPoint{Key: "one-point", Index: 0, Image: "img:1", Model: "org/model", ModelPrefix: "m", Precision: "fp8",
		Framework: "dynamo-sglang", Runner: "b200-multinode", ISL: 1024, OSL: 128, Concurrency: []int{8, 32},
		SpecDecoding: "none", ConfigFile: "recipes/x/2p1d.yaml",
		Settings: map[string]string{"CONFIG_FILE": "recipes/x/2p1d.yaml", "PREFILL_NODES": "2", "DECODE_NODES": "1"}}
	if !reflect.DeepEqual(pt, want) {
		t.Errorf("Lookup =\n%+v\nwant\n%+v", pt, want)
	}
}

func TestLookupPointsAcrossScenarios(t *testing.T) {
	m := loadSmall(t)
	pt, err := Lookup(m, "two-points", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pt.ISL != 8192 || pt.ConfigFile != "recipes/b.yaml" || pt.Selector != "override_x" || pt.Index != 1 {
		t.Errorf("point 1 = %+v", pt)
	}
	if _, err := Lookup(m, "two-points", -1); err == nil || !strings.Contains(err.Error(), "has 2 points") {
		t.Errorf("two points without --point: %v", err)
	}
	if _, err := Lookup(m, "no-points", 0); err == nil || !strings.Contains(err.Error(), "no fixed-seq-len points") {
		t.Errorf("no points: %v", err)
	}
	if _, err := Lookup(m, "bad-setting", 0); err == nil || !strings.Contains(err.Error(), "NOT_A_PAIR") {
		t.Errorf("bad setting: %v", err)
	}
	if _, err := Lookup(m, "zzz", 0); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("unrelated key should get no suggestion: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file loaded")
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("key: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Error("malformed YAML loaded")
	}
}

func TestRecipePath(t *testing.T) {
	root := "/repo/benchmarks/multi_node/srt-slurm-recipes"
	good := map[string]string{
		"recipes/sglang/x.yaml":     root + "/sglang/x.yaml",
		"recipes/a/../b.yaml":       root + "/b.yaml",
		"recipes/./sglang/./y.yaml": root + "/sglang/y.yaml",
	}
	for in, want := range good {
		got, err := RecipePath(root, in)
		if err != nil || got != want {
			t.Errorf("RecipePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"recipes/../../x.yaml", "recipes/../x.yaml", "recipes/a/../../../etc/passwd", "other/x.yaml", "/abs/x.yaml"} {
		if got, err := RecipePath(root, bad); err == nil {
			t.Errorf("RecipePath(%q) = %q, want an error", bad, got)
		}
	}
}
