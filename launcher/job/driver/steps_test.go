package driver

import (
	"path/filepath"
	"strings"
	"testing"

	goldenpkg "github.com/slurmbench/slurmbench/internal/golden"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

func testPlan(runtime profile.Runtime) *plan.Plan {
	run := "/shared/runs/r1"
	return &plan.Plan{
		Version: plan.PlanVersion, Name: "t", RunID: "r1", RunDir: run, PlanFile: run + "/plan.json",
		Binary: run + "/bin/slurmbench", Runtime: runtime, Enroot: "/opt/enroot/bin/enroot",
		Image:          plan.Image{Ref: "lmsysorg/sglang:v0.5.12", Squash: "/squash/lmsysorg_sglang_v0.5.12.sqsh"},
		EnvPassthrough: []string{"HF_TOKEN"},
		Layout:         rundir.New(run),
	}
}

func testProcs() []plan.Process {
	return []plan.Process{
		{Name: "prefill_w1", Role: plan.RolePrefill, Nodes: []int{1}, GPUs: []int{4, 5, 6, 7}, Container: true,
			Mounts: []string{"/shared/runs/r1:/shared/runs/r1", "/shared/runs/r1/logs:/logs", "/models/dsr1:/model:ro"},
			Env:    map[string]string{"CUDA_VISIBLE_DEVICES": "4,5,6,7", "ETCD_ENDPOINTS": "http://{host:0}:2379", "HEAD_NODE_IP": "{ip:0}"},
			Argv:   []string{"python3", "-m", "dynamo.sglang", "--dist-init-addr", "{ip:1}:8300", "--served-model-name", "a b"},
			Log:    "/shared/runs/r1/logs/prefill_w1.log", Srun: plan.SrunOptions{NTasks: 1, Export: []string{"ENROOT_REMAP_ROOT=yes"}, Extra: []string{"--mem=0"}}},
		{Name: "frontend_0", Role: plan.RoleFrontend, Nodes: []int{0}, Container: true,
			Argv: []string{"python3", "-m", "dynamo.frontend", "--http-port=8000"}, Log: "/shared/runs/r1/logs/frontend_0.log",
			Srun: plan.SrunOptions{NTasks: 1, MPI: "pmix"}},
		{Name: "benchmark", Role: plan.RoleBenchmark, Nodes: []int{0},
			Argv: []string{"/shared/runs/r1/bin/slurmbench", "bench", "--plan", "/shared/runs/r1/plan.json", "--frontend", "http://{ip:0}:8000"},
			Log:  "/shared/runs/r1/logs/benchmark.log"},
	}
}

// TestStepGolden pins the exact srun lines for each runtime.
func TestStepGolden(t *testing.T) {
	alloc := Allocation{JobID: "4242", Hosts: []string{"gpu001", "gpu002"}, IPs: []string{"10.0.0.1", "10.0.0.2"}}
	getenv := func(k string) string {
		if k == "HF_TOKEN" {
			return "hf_secret_value"
		}
		return ""
	}
	for _, rt := range []profile.Runtime{profile.RuntimePyxis, profile.RuntimeEnroot, profile.RuntimeNone} {
		t.Run(string(rt), func(t *testing.T) {
			pl := testPlan(rt)
			var b strings.Builder
			for _, p := range testProcs() {
				st, err := BuildStep(pl, p, alloc, getenv)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range st.Argv {
					if strings.Contains(a, "hf_secret_value") {
						t.Errorf("%s: secret value in argv", p.Name)
					}
					if strings.Contains(a, "{") {
						t.Errorf("%s: unfilled placeholder in argv element %q", p.Name, a)
					}
				}
				if isShell(st.Argv) || isShell(st.Spec.Argv) {
					t.Errorf("%s: a shell string in the step", p.Name)
				}
				b.WriteString("# " + p.Name + "\n")
				for _, a := range st.Argv {
					b.WriteString(a + "\n")
				}
				b.WriteString("## env: " + strings.Join(st.Env, " ") + "\n")
				b.WriteString("## exec: " + strings.Join(st.Spec.Argv, " | ") + "\n")
				keys := make([]string, 0, len(st.Spec.Env))
				for k := range st.Spec.Env {
					keys = append(keys, k+"="+st.Spec.Env[k])
				}
				sortStrings(keys)
				b.WriteString("## spec env: " + strings.Join(keys, " ") + "\n\n")
			}
			golden(t, filepath.Join("testdata", "steps-"+string(rt)+".golden"), b.String())
		})
	}
}

func TestFillRejectsNodesOutsideAllocation(t *testing.T) {
	a := Allocation{JobID: "1", Hosts: []string{"n1"}, IPs: []string{"10.0.0.1"}}
	if _, err := a.Fill("{ip:1}:8000"); err == nil {
		t.Fatal("node 1 of a 1-node allocation was filled")
	}
	got, err := a.Fill("http://{host:0}:{job_id}/{ip:0}")
	if err != nil || got != "http://n1:1/10.0.0.1" {
		t.Fatalf("Fill = %q, %v", got, err)
	}
}

func isShell(argv []string) bool {
	for i := 0; i+1 < len(argv); i++ {
		b := filepath.Base(argv[i])
		if (b == "bash" || b == "sh") && argv[i+1] == "-c" {
			return true
		}
	}
	return false
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	goldenpkg.Assert(t, path, []byte(got))
}

func TestStepFilesAndSetupAreFilled(t *testing.T) {
	alloc := Allocation{JobID: "7", Hosts: []string{"a", "b"}, IPs: []string{"10.0.0.1", "10.0.0.2"}}
	pl := testPlan("none")
	proc := plan.Process{Name: "nginx", Role: plan.RoleNginx, Nodes: []int{0}, Log: "/shared/runs/r1/logs/nginx.log",
		Argv:  []string{"nginx", "-c", "/logs/nginx.conf"},
		Setup: [][]string{{"echo", "{host:1}"}},
		Files: map[string]string{"/shared/runs/r1/logs/nginx.conf": "upstream u { server {ip:1}:8180; }\n"}}
	st, err := BuildStep(pl, proc, alloc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Files["/shared/runs/r1/logs/nginx.conf"]; got != "upstream u { server 10.0.0.2:8180; }\n" {
		t.Errorf("file content %q", got)
	}
	if got := st.Spec.Setup[0][1]; got != "b" {
		t.Errorf("setup argv %q", st.Spec.Setup)
	}
	proc.Files = map[string]string{"/etc/passwd": "x"}
	if _, err := BuildStep(pl, proc, alloc, nil); err == nil {
		t.Error("a file outside the run directory was accepted")
	}
}
