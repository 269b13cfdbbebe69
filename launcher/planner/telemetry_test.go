package planner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// withTelemetry plans the mock 2P1D recipe with a telemetry block (or
// none) on the mock profile with a [telemetry] table appended.
func withTelemetry(t *testing.T, block, profileTable string, mods ...func(*Inputs)) (*plan.Plan, error) {
	t.Helper()
	td := testdataDir(t)
	dir := t.TempDir()
	prof, err := os.ReadFile(filepath.Join(td, "profiles", "mock4.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "p.toml"), string(prof)+"\n"+profileTable)
	rec, err := os.ReadFile(filepath.Join(td, "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "r.yaml"), string(rec)+block)
	in := inputs(loadProfile(t, filepath.Join(dir, "p.toml")), loadRecipe(t, filepath.Join(dir, "r.yaml")))
	for _, m := range mods {
		m(&in)
	}
	return Build(in)
}

func TestTelemetryPlan(t *testing.T) {
	const block = "telemetry:\n  enabled: true\n  provider: dcgm-power\n  required: true\n  dcgm_exporter: {container_image: dcgm-exporter, port: 19401}\n"
	t.Run("recipe block and exporter image", func(t *testing.T) {
		pl, err := withTelemetry(t, block, "")
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, pl)
		tm := pl.Telemetry
		if tm == nil || !tm.Required || tm.Port != 19401 || tm.IntervalSeconds != 1 {
			t.Fatalf("telemetry = %+v", tm)
		}
		// 2 prefill workers and 1 decode worker of 4 GPUs: 12 devices on
		// the three worker nodes, one window per concurrency.
		if len(tm.Devices) != 12 || !slices.Equal(tm.Nodes, []int{0, 1, 2}) || len(tm.Windows) != len(pl.Points) {
			t.Fatalf("devices %d nodes %v windows %v", len(tm.Devices), tm.Nodes, tm.Windows)
		}
		roles := map[string]int{}
		for _, d := range tm.Devices {
			roles[d.Role]++
		}
		if roles["prefill"] != pl.GPUs.Prefill || roles["decode"] != pl.GPUs.Decode {
			t.Errorf("device roles %v, plan GPUs %+v", roles, pl.GPUs)
		}
		if tm.PowerDir != filepath.Join(pl.Layout.Logs, "power") || tm.ResultRoot != filepath.Dir(pl.Benchmark.ResultDir) {
			t.Errorf("power dir %s, result root %s", tm.PowerDir, tm.ResultRoot)
		}
		var exp *plan.Process
		for i := range pl.Processes {
			if pl.Processes[i].Role == plan.RoleTelemetry {
				exp = &pl.Processes[i]
			}
		}
		if exp == nil || exp.Critical || exp.Image != "dcgm-exporter" || exp.Srun.NTasks != 3 ||
			strings.Join(exp.Argv, " ") != "dcgm-exporter --collect-interval=100 --address :19401" {
			t.Fatalf("exporter step = %+v", exp)
		}
	})
	t.Run("profile default with the mock exporter", func(t *testing.T) {
		pl, err := withTelemetry(t, "", "[telemetry]\nenabled = true\nmock_watts = 350\nport = 19500\n")
		if err != nil {
			t.Fatal(err)
		}
		if pl.Telemetry == nil || pl.Telemetry.Required || pl.Telemetry.Port != 19500 {
			t.Fatalf("telemetry = %+v", pl.Telemetry)
		}
		for _, p := range pl.Processes {
			if p.Role == plan.RoleTelemetry && !slices.Contains(p.Argv, "mock-dcgm-exporter") {
				t.Errorf("exporter argv %v", p.Argv)
			}
		}
	})
	t.Run("no exporter image anywhere", func(t *testing.T) {
		_, err := withTelemetry(t, "", "[telemetry]\nenabled = true\n")
		if err == nil || !strings.Contains(err.Error(), "telemetry.dcgm_exporter.container_image") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("eval only collects nothing", func(t *testing.T) {
		pl, err := withTelemetry(t, block, "", func(in *Inputs) { in.Eval.Only = true })
		if err != nil {
			t.Fatal(err)
		}
		if pl.Telemetry != nil {
			t.Errorf("telemetry planned for an eval-only run")
		}
		for _, p := range pl.Processes {
			if p.Role == plan.RoleTelemetry {
				t.Errorf("exporter step planned for an eval-only run")
			}
		}
	})
}
