package launch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestDCGMExporterAliasPerJob: on a cluster whose record has a power
// exporter, only a job whose recipe collects DCGM power gets the
// "dcgm-exporter" alias (and the exporter step running the staged image);
// another job of the same cluster has neither, as InferenceX's launcher
// stages the exporter only when power.dcgm (config.py@eacb6075).
func TestDCGMExporterAliasPerJob(t *testing.T) {
	dir := t.TempDir()
	const staged = "/helpers/nvcr.io_nvidia_k8s_dcgm-exporter_4.6.0-4.8.3-distroless.sqsh"
	runners := filepath.Join(dir, "runners.yaml")
	if err := os.WriteFile(runners, []byte(`labels:
  cluster:c1: [c1_00]
clusters:
  c1:
    gpus-per-node: 4
    arch: x86_64
    scheduler: slurm
    slurm:
      partition: batch
      exclusive: false
      squash:
        dir: /sq
        import: compute
        helper-dirs:
          dcgm-exporter: {dir: /helpers, import: unchecked}
      srt-slurm:
        network-interface: ""
        shared-run-root: /shared/runs
        power-exporter-port: 9555
`), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "planner", "testdata", "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(src), "path: mock\n", "path: /srv/models/mock\n", 1)
	const telemetry = `telemetry:
  enabled: true
  dcgm_exporter:
    container_image: dcgm-exporter
    port: 9555
`
	for _, c := range []struct {
		name, extra string
		power       bool
	}{
		{"no telemetry", "", false},
		{"telemetry disabled", "telemetry:\n  enabled: false\n  dcgm_exporter: {container_image: dcgm-exporter, port: 9555}\n", false},
		{"power job", telemetry, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			recipe := filepath.Join(t.TempDir(), "r.yaml")
			if err := os.WriteFile(recipe, []byte(base+c.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			pl, prof, err := Plan(context.Background(), PlanOptions{Runners: runners, Runner: "c1_00", Recipe: recipe, Point: -1})
			if err != nil {
				t.Fatal(err)
			}
			ref, ok := prof.Containers[profile.DCGMExporterAlias]
			if ok != c.power || ok && ref != staged {
				t.Errorf("containers.dcgm-exporter = %q (set %v); want set %v to %s", ref, ok, c.power, staged)
			}
			var exporter *plan.Process
			for i := range pl.Processes {
				if pl.Processes[i].Role == plan.RoleTelemetry {
					exporter = &pl.Processes[i]
				}
			}
			switch {
			case c.power && (exporter == nil || exporter.Image != staged):
				t.Errorf("power job: exporter step %+v, want one running %s", exporter, staged)
			case !c.power && exporter != nil:
				t.Errorf("job without power plans an exporter step %+v", exporter)
			}
		})
	}
}
