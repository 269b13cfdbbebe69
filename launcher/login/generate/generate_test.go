package generate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
)

// The identity hash against Python's json.dumps(..., sort_keys=True):
// the digests were computed with CPython 3 for this point.
func TestFileNameMatchesPython(t *testing.T) {
	matrix := json.RawMessage(`{"runner":"gb300","conc":[4,16],"isl":1024,"osl":128,"exp-name":"x_1k","prefill":{"tp":4,"pp":1,"pcp-size":1},"ratio":0.8,"name":"é"}`)
	sel := "override_a"
	for _, tc := range []struct {
		key     string
		variant *string
		want    string
	}{
		{"dsr1-fp8-gb300-dynamo-sglang", &sel, "dsr1-fp8-gb300-dynamo-sglang-91c8e0f0d62f.yaml"},
		{"a key/with spaces", nil, "a_key_with_spaces-7166833e0e7f.yaml"},
	} {
		got, err := FileName(tc.key, matrix, tc.variant)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("FileName(%q) = %s, want %s", tc.key, got, tc.want)
		}
	}
}

type fakePoints []Point

func (f fakePoints) Points(context.Context, []string) ([]Point, error) { return f, nil }

type fakeClusters map[string]fragment.Cluster

func (f fakeClusters) Cluster(_ context.Context, id string) (fragment.Cluster, error) {
	return f[id], nil
}

func write(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

const mockFragment = `schema: 2
base:
  name: mock
  slurm:
    time_limit: "00:30:00"
  resources:
    gpu_type: h100
    gpus_per_node: 4
  engine: mock
  roles:
    prefill:
      nodes: 1
      workers: 1
      gpus: 2
      env:
        UCX_NET_DEVICES: '@fabric.ucx-net-devices'
    decode:
      nodes: 1
      workers: 1
      gpus: 2
  frontend:
    type: dynamo
override_small:
  roles:
    decode:
      gpus: 2
`

// TestRun writes one bound recipe per point and the manifest; a label on
// several clusters leaves fabric references and a null cluster; a power
// point on such a label is refused; a non-empty output is refused.
func TestRun(t *testing.T) {
	root := t.TempDir()
	write(t, root, "configs/srt-recipes/fixed-sequence-multi.yaml", "benchmark:\n  type: custom\n  command: bash run.sh\n  env:\n    TOKENIZER: /model\n")
	write(t, root, "configs/srt-recipes/telemetry-dcgm.yaml", "telemetry:\n  enabled: true\n  dcgm_exporter:\n    container_image: dcgm-exporter\n")
	write(t, root, "benchmarks/multi_node/srt-slurm-recipes/mock/mock/h100-fp8/1k1k/disagg-variants.yaml", mockFragment)
	// h100-one schedules on testcluster, h100-many on several clusters.
	clusterOf := map[string]string{"h100-one": "testcluster", "h100-noport": "noport"}
	point := func(runner string, power bool) Point {
		return Point{Key: "mock-fp8-h100", Runner: runner, Power: power, Cluster: clusterOf[runner], GPUsPerNode: 4,
			Recipe: "benchmarks/multi_node/srt-slurm-recipes/mock/mock/h100-fp8/1k1k/disagg-variants.yaml:override_small",
			Matrix: json.RawMessage(`{"runner":"` + runner + `","conc":[4,16],"power":` + map[bool]string{true: "true", false: "false"}[power] + `}`),
			Lane:   fragment.Lane{MultiNode: true},
			Binder: fragment.Point{Model: "mock/Model", Image: "registry#mock:1", Precision: "fp8", ISL: 1024, OSL: 1024, Conc: []int{4, 16}}}
	}
	clusters := fakeClusters{"testcluster": {ID: "testcluster", GPUsPerNode: 4, PowerExporterPort: 9401,
		Fabric: fragment.Fabric{Values: map[string]string{"ucx-net-devices": "mlx5_0:1,mlx5_1:1"}}}}

	out := filepath.Join(t.TempDir(), "out")
	m, err := Run(context.Background(), Options{Root: root, Out: out, Clusters: clusters,
		Points: fakePoints{point("h100-one", true), point("h100-many", false)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Recipes) != 2 {
		t.Fatalf("%d records, want 2", len(m.Recipes))
	}
	var onDisk Manifest
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &onDisk); err != nil {
		t.Fatal(err)
	}
	one, many := onDisk.Recipes[0], onDisk.Recipes[1]
	if one.Cluster == nil || *one.Cluster != "testcluster" || many.Cluster != nil {
		t.Errorf("clusters %v, %v; want testcluster and null", one.Cluster, many.Cluster)
	}
	if one.Variant == nil || *one.Variant != "override_small" || one.ConfigKey != "mock-fp8-h100" || !strings.Contains(strings.ReplaceAll(string(one.Matrix), " ", ""), `"power":true`) {
		t.Errorf("record %+v", one)
	}
	for _, tc := range []struct {
		rec  Record
		want map[string]string // dotted path → value
	}{
		{one, map[string]string{"model.path": "hf:mock/Model", "model.container": "registry#mock:1", "schema": "2",
			"roles.prefill.env.UCX_NET_DEVICES": "mlx5_0:1,mlx5_1:1", "telemetry.dcgm_exporter.port": "9401",
			"benchmark.concurrencies": "[4 16]", "benchmark.env.ISL": "1024", "name": "mock_small"}},
		{many, map[string]string{"roles.prefill.env.UCX_NET_DEVICES": "@fabric.ucx-net-devices", "telemetry": "<nil>"}},
	} {
		data, err := os.ReadFile(filepath.Join(out, tc.rec.File))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for path, want := range tc.want {
			if got := lookup(doc, path); got != want {
				t.Errorf("%s: %s = %s, want %s", tc.rec.File, path, got, want)
			}
		}
	}

	// A power point on a label that spans clusters cannot be bound.
	if _, err := Run(context.Background(), Options{Root: root, Out: filepath.Join(t.TempDir(), "o"), Clusters: clusters,
		Points: fakePoints{point("h100-many", true)}}); err == nil || !strings.Contains(err.Error(), "one cluster") {
		t.Errorf("power point on a multi-cluster label: %v", err)
	}
	// A power point on a cluster without an exporter port cannot be bound.
	clusters["noport"] = fragment.Cluster{ID: "noport", GPUsPerNode: 4}
	if _, err := Run(context.Background(), Options{Root: root, Out: filepath.Join(t.TempDir(), "o"), Clusters: clusters,
		Points: fakePoints{point("h100-noport", true)}}); err == nil || !strings.Contains(err.Error(), "power-exporter-port") {
		t.Errorf("power point on a cluster without a port: %v", err)
	}
	// The output must be empty.
	if _, err := Run(context.Background(), Options{Root: root, Out: out, Clusters: clusters,
		Points: fakePoints{point("h100-one", false)}}); err == nil || !strings.Contains(err.Error(), "must be empty") {
		t.Errorf("non-empty output: %v", err)
	}
}

func lookup(doc map[string]any, path string) string {
	var v any = doc
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "<nil>"
		}
		v = m[p]
	}
	if v == nil {
		return "<nil>"
	}
	return fmtAny(v)
}

func fmtAny(v any) string {
	if l, ok := v.([]any); ok {
		s := make([]string, len(l))
		for i, e := range l {
			s[i] = fmtAny(e)
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// TestRunMissingInputs: points whose recipe or lane block is not in the
// tree are left out and named (each input once, with its points and
// keys); every other point is written with the manifest (InferenceX's
// one key), and the run still fails (the output is partial). A point the
// binder refuses writes nothing, as before.
func TestRunMissingInputs(t *testing.T) {
	root := t.TempDir()
	write(t, root, "configs/srt-recipes/fixed-sequence-multi.yaml", "benchmark:\n  type: custom\n  command: bash run.sh\n")
	const fixed = "benchmarks/multi_node/srt-slurm-recipes/mock/mock/h100-fp8/1k1k/disagg-variants.yaml"
	const agentic = "benchmarks/multi_node/srt-slurm-recipes/mock/mock/h100-fp8/agentx/disagg-variants.yaml"
	const absent = "benchmarks/multi_node/srt-slurm-recipes/mock/mock/h100-fp8/8k1k/absent.yaml"
	write(t, root, fixed, mockFragment)
	write(t, root, agentic, mockFragment)
	clusters := fakeClusters{"testcluster": {ID: "testcluster", GPUsPerNode: 4,
		Fabric: fragment.Fabric{Values: map[string]string{"ucx-net-devices": "mlx5_0:1"}}}}
	point := func(key, recipe string, agentic bool, conc int) Point {
		p := Point{Key: key, Runner: "h100-one", Cluster: "testcluster", GPUsPerNode: 4, Recipe: recipe + ":override_small",
			Matrix: json.RawMessage(`{"key":"` + key + `","conc":[` + strconv.Itoa(conc) + `]}`), Lane: fragment.Lane{MultiNode: true, Agentic: agentic},
			Binder: fragment.Point{Model: "mock/Model", Image: "registry#mock:1", Precision: "fp8", Conc: []int{conc}}}
		if !agentic {
			p.Binder.ISL, p.Binder.OSL = 1024, 1024
		}
		return p
	}
	pts := fakePoints{
		point("fixed", fixed, false, 4), point("agentx-a", agentic, true, 4), point("agentx-a", agentic, true, 8),
		point("agentx-b", agentic, true, 4), point("fixed", fixed, false, 16), point("gone", absent, false, 4),
	}
	out := filepath.Join(t.TempDir(), "out")
	m, err := Run(context.Background(), Options{Root: root, Out: out, Clusters: clusters, Points: pts})
	var mi *MissingInputsError
	if !errors.As(err, &mi) {
		t.Fatalf("err %v, want the missing inputs", err)
	}
	want := []Missing{
		{Input: "configs/srt-recipes/agentic-multi.yaml", What: "the agentic multi-node lane's shared block", Points: 3, Keys: []string{"agentx-a", "agentx-b"}},
		{Input: absent, What: "recipe", Points: 1, Keys: []string{"gone"}},
	}
	if !reflect.DeepEqual(mi.Missing, want) || mi.Written != 2 {
		t.Errorf("missing %+v (written %d), want %+v and 2 written", mi.Missing, mi.Written, want)
	}
	for _, s := range []string{"4 points not generated (the other 2 are)", "agentic-multi.yaml", "3 points of agentx-a, agentx-b", absent} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if m == nil || len(m.Recipes) != 2 {
		t.Fatalf("manifest %+v, want the 2 fixed-sequence points", m)
	}
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk map[string]json.RawMessage
	if err := json.Unmarshal(data, &onDisk); err != nil || len(onDisk) != 1 || onDisk["recipes"] == nil {
		t.Errorf("manifest.json %s: want InferenceX's one key, recipes", data)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 3 {
		t.Errorf("%d files in the output, want 2 recipes and manifest.json", len(entries))
	}

	// A refused point (a fragment setting a bound key) writes nothing.
	write(t, root, "benchmarks/multi_node/srt-slurm-recipes/mock/mock/h100-fp8/1k1k/bad.yaml", strings.Replace(mockFragment, "  name: mock\n", "  name: mock\n  model: {path: /x}\n", 1))
	out2 := filepath.Join(t.TempDir(), "out")
	_, err = Run(context.Background(), Options{Root: root, Out: out2, Clusters: clusters,
		Points: fakePoints{point("agentx-a", agentic, true, 4), point("bad", "benchmarks/multi_node/srt-slurm-recipes/mock/mock/h100-fp8/1k1k/bad.yaml", false, 4)}})
	if err == nil || errors.As(err, &mi) || !strings.Contains(err.Error(), "bad") {
		t.Errorf("a refused point: %v", err)
	}
	if _, statErr := os.Stat(out2); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a refused point left output: %v", statErr)
	}
}

// TestRunSetupScript: a bound recipe's setup_script must be in the tree's
// srt-slurm configs/ or the recipe mirror's, or their patches/
// (InferenceX's check_setup_script); one in none is a missing input,
// named with the directories, and the other points are still written.
func TestRunSetupScript(t *testing.T) {
	root := t.TempDir()
	write(t, root, "configs/srt-recipes/fixed-sequence-multi.yaml", "benchmark:\n  type: custom\n  command: bash run.sh\n")
	write(t, root, "utils/srt-slurm/configs/rebuild-deepep.sh", "true\n")
	write(t, root, "benchmarks/multi_node/srt-slurm-recipes/configs/patches/fix.sh", "true\n")
	clusters := fakeClusters{"testcluster": {ID: "testcluster", GPUsPerNode: 4,
		Fabric: fragment.Fabric{Values: map[string]string{"ucx-net-devices": "mlx5_0:1"}}}}
	var pts fakePoints
	for _, script := range []string{"rebuild-deepep.sh", "fix.sh", "absent.sh"} {
		rel := "benchmarks/multi_node/srt-slurm-recipes/mock/mock/h100-fp8/1k1k/" + strings.TrimSuffix(script, ".sh") + ".yaml"
		write(t, root, rel, strings.Replace(mockFragment, "base:\n", "base:\n  setup_script: "+script+"\n", 1))
		pts = append(pts, Point{Key: script, Runner: "h100-one", Cluster: "testcluster", GPUsPerNode: 4, Recipe: rel + ":override_small",
			Matrix: json.RawMessage(`{"key":"` + script + `"}`), Lane: fragment.Lane{MultiNode: true},
			Binder: fragment.Point{Model: "mock/Model", Image: "registry#mock:1", Precision: "fp8", ISL: 1024, OSL: 1024, Conc: []int{4}}})
	}
	m, err := Run(context.Background(), Options{Root: root, Out: filepath.Join(t.TempDir(), "out"), Clusters: clusters, Points: pts})
	var mi *MissingInputsError
	if !errors.As(err, &mi) {
		t.Fatalf("err %v, want the missing setup script", err)
	}
	want := []Missing{{Input: "setup_script absent.sh", What: "in none of utils/srt-slurm/configs, benchmarks/multi_node/srt-slurm-recipes/configs or their patches/", Points: 1, Keys: []string{"absent.sh"}}}
	if !reflect.DeepEqual(mi.Missing, want) || m == nil || len(m.Recipes) != 2 {
		t.Errorf("missing %+v, written %v; want %+v and the other 2 written", mi.Missing, m, want)
	}
}
