package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm/hostlist"
)

// gb300Recipe is a GB300-shaped production topology on the test cluster's
// 4-GPU nodes: five one-node prefill workers and one decode worker of 16
// GPUs (dep16) spanning four nodes, nine nodes in all (InferenceX's GB300
// 3P1D with a dep16 decode is seven).
func gb300Recipe(name string) string {
	return `name: ` + name + `
model:
  path: mock
  container: mock-image
  precision: fp4
resources:
  gpu_type: mock
  gpus_per_node: 4
  prefill_nodes: 5
  prefill_workers: 5
  decode_nodes: 4
  decode_workers: 1
frontend:
  type: dynamo
  enable_multiple_frontends: false
backend:
  type: mock
  mock_config:
    prefill:
      ttft: 5ms
    decode:
      itl: 2ms
health_check:
  max_attempts: 90
  interval_seconds: 1
benchmark:
  type: sa-bench
  isl: 64
  osl: 16
  concurrencies: "4x16"
  num_prompts_mult: 2
  num_warmup_mult: 0
`
}

// TestGB300Shaped9Nodes runs the nine-node topology end to end: one job on
// nine nodes, every worker up behind the health gate, both concurrencies
// benchmarked and staged. It needs a cluster of at least nine nodes
// (testcluster's SLURMBENCH_CLUSTER_NUM_NODES).
func TestGB300Shaped9Nodes(t *testing.T) {
	// Not parallel: it takes nine nodes at once, so it runs before the
	// parallel tests start, on an idle cluster.
	c := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := c.api.ListNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) < 9 {
		t.Skipf("the test cluster has %d nodes; start it with SLURMBENCH_CLUSTER_NUM_NODES=9 or more", len(nodes))
	}
	name := uniqueName("e2e-gb300")
	r := c.prepare(t, runOpts{name: name, recipe: gb300Recipe(name)}).start()
	if code := r.wait(6 * time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.output())
	}
	if o := r.outcome(); o.Result != rundir.Succeeded {
		t.Errorf("outcome %+v", o)
	}
	jobs := r.jobs()
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	hosts, err := hostlist.Expand(jobs[0].Nodes)
	if err != nil || len(hosts) != 9 {
		t.Errorf("job %d ran on %q (%d hosts, %v), want 9 nodes", jobs[0].ID, jobs[0].Nodes, len(hosts), err)
	}
	staged, err := os.ReadFile(filepath.Join(r.runDir(), "staged.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, conc := range []string{"_conc4_gpus_36_", "_conc16_gpus_36_"} {
		if !strings.Contains(string(staged), conc) {
			t.Errorf("no staged result named %s: %s", conc, staged)
		}
	}
}
