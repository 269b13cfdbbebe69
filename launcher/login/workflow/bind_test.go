package workflow

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// infxTree writes a small InferenceX tree: the runners.yaml record of
// testdata/workflow, the lane's shared blocks, and the given recipes.
func infxTree(t *testing.T, recipes map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "workflow", "runners.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"configs/runners.yaml": strings.NewReplacer("@RUNNERS@", "    - gb300-nv_07", "@PARTITION@", "debug",
			"@MODELS@", "/shared/models", "@SQUASH@", "/shared/squash").Replace(string(tmpl)),
		"configs/srt-recipes/fixed-sequence-multi.yaml":  "benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/multi_node/srt_fixed_sequence.sh\n  env:\n    TOKENIZER: /model\n",
		"configs/srt-recipes/fixed-sequence-single.yaml": "benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/single_node/srt_fixed_sequence.sh\n",
		"configs/srt-recipes/telemetry-dcgm.yaml":        "telemetry:\n  enabled: true\n  dcgm_exporter:\n    container_image: dcgm-exporter\n",
		"configs/srt-recipes/agentic-multi.yaml":         "benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh\n",
	}
	for k, v := range recipes {
		files[k] = v
	}
	for rel, body := range files {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

const fragment2p1d = `schema: 2
name: mock-2p1d
resources:
  gpu_type: mock
  gpus_per_node: 4
engine: mock
roles:
  prefill:
    nodes: 2
    workers: 2
    gpus: 4
  decode:
    nodes: 1
    workers: 1
    gpus: 4
frontend:
  type: dynamo
`

// TestBindFragment: in InferenceX's tree a row's fragment is composed with
// its shared block (and the telemetry block on a power row) and bound for
// the runner's cluster; a fragment that sets a bound key is refused, exit
// 2, naming it.
func TestBindFragment(t *testing.T) {
	const rel = "benchmarks/multi_node/srt-slurm-recipes/mock/2p1d.yaml"
	tests := []struct {
		name    string
		recipe  string
		env     []string
		wantErr string
		check   func(t *testing.T, doc map[string]any)
	}{
		{name: "a fixed-sequence row", recipe: fragment2p1d, check: func(t *testing.T, doc map[string]any) {
			m, _ := doc["model"].(map[string]any)
			b, _ := doc["benchmark"].(map[string]any)
			if m == nil || m["precision"] != "fp4" || b == nil || b["type"] != "custom" {
				t.Errorf("bound: model %v benchmark %v", m, b)
			}
			if _, ok := doc["telemetry"]; ok {
				t.Error("telemetry composed into a row without power")
			}
			// The launch-time edits: the record's cluster default health
			// check at InferenceX's floor.
			if hc, _ := doc["health_check"].(map[string]any); hc["max_attempts"] != 720 || hc["interval_seconds"] != 10 {
				t.Errorf("health_check %v", doc["health_check"])
			}
			if env, _ := b["env"].(map[string]any); env["RESULT_DIR"] != nil {
				t.Errorf("client paths on a fixed-sequence row: %v", env)
			}
		}},
		{name: "an AgentX row gets the client's result directory", recipe: fragment2p1d,
			env: []string{"IS_AGENTIC", "1", "SCENARIO_TYPE", "agentic-coding", "KV_OFFLOADING", "none"}, check: func(t *testing.T, doc map[string]any) {
				b, _ := doc["benchmark"].(map[string]any)
				env, _ := b["env"].(map[string]any)
				// The test cluster's record mounts no cache volumes: the
				// result directory alone.
				if env["RESULT_DIR"] != "/logs/agentic" || env["HF_HUB_CACHE"] != nil || env["KV_OFFLOADING"] != "none" {
					t.Errorf("benchmark.env %v", env)
				}
			}},
		{name: "a power row", recipe: fragment2p1d, env: []string{"POWER", "true"}, check: func(t *testing.T, doc map[string]any) {
			tel, _ := doc["telemetry"].(map[string]any)
			if tel == nil || tel["enabled"] != true {
				t.Errorf("telemetry %v", doc["telemetry"])
			}
		}},
		{name: "a fragment that sets model", recipe: fragment2p1d + "model:\n  path: mock\n", wantErr: "model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := infxTree(t, map[string]string{rel: tt.recipe})
			req, err := ParseRequest(with(multinodeEnv(), append([]string{"GITHUB_WORKSPACE", ws, "SRT_RECIPE", rel, "MODEL", "DeepSeek-R1"}, tt.env...)...))
			if err != nil {
				t.Fatal(err)
			}
			b, err := BindFragment(t.Context(), req, filepath.Join(ws, rel), "", t.TempDir())
			if tt.wantErr != "" {
				var bk *recipe.BoundKeyError
				if exitcode.Of(err) != exitcode.Config || !errors.As(err, &bk) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want exit 2 naming the bound key %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Cluster != "testcluster" {
				t.Errorf("cluster %q", b.Cluster)
			}
			data, err := os.ReadFile(b.File)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			tt.check(t, doc)
		})
	}
}

// TestRunnersResolverBinds: in InferenceX's tree the resolver hands the
// plan the bound recipe, not the fragment, and names the record's cluster.
func TestRunnersResolverBinds(t *testing.T) {
	const rel = "benchmarks/multi_node/srt-slurm-recipes/mock/2p1d.yaml"
	ws := infxTree(t, map[string]string{rel: fragment2p1d})
	req, err := ParseRequest(with(multinodeEnv(), "GITHUB_WORKSPACE", ws, "SRT_RECIPE", rel, "MODEL", "DeepSeek-R1"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Runners{}.Resolve(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var o launch.PlanOptions
	res.Plan(&o)
	if want := filepath.Join(ws, BoundDir, "2p1d.bound.yaml"); o.Recipe != want || res.Cluster != "testcluster" {
		t.Errorf("recipe %q (want %q), cluster %q", o.Recipe, want, res.Cluster)
	}
	if _, err := os.Stat(o.Recipe); err != nil {
		t.Error(err)
	}
}
