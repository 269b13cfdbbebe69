package planner

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/hostsetup"
)

// TestHostSetupPlan: host_setup is planned as srtctl runs it: one bare-host
// step per targeted node (head, infra and workers, or the workers), the
// recipe's commands as arguments of one script in order, the teardown as
// its own steps; the recipe's block replaces the cluster's default whole;
// the default runs the record's hook from the workspace with its env.
func TestHostSetupPlan(t *testing.T) {
	record := &profile.HostSetup{Script: "runners/srt-slurm/hooks/c1/setup.sh", Env: map[string]string{"IBDEVICES": "rdma0,rdma1"}, TimeoutSeconds: 1200, Nodes: "all"}
	cases := []struct {
		name      string
		block     string
		def       *profile.HostSetup
		workspace string
		// want: the host steps as "name@node argv", the settings, the
		// env of the first step.
		want    []string
		setting *plan.HostSetup
		env     map[string]string
		wantErr string
	}{
		{name: "the recipe's commands on every node", block: "host_setup:\n  commands: [\"sudo -n nvidia-smi -lgc 1980\", \"cd /tmp && ls\"]\n",
			want:    []string{"host_setup_0@0 bash RUN/host_setup.sh|sudo -n nvidia-smi -lgc 1980|cd /tmp && ls", "host_setup_1@1 …", "host_setup_2@2 …"},
			setting: &plan.HostSetup{TimeoutSeconds: 300, Nodes: "all", Source: "recipe host_setup"}, env: map[string]string{"CLUSTER_VAR": "1"}},
		{name: "workers only, a teardown, its own limits", block: "host_setup:\n  nodes: workers\n  ignore_failure: true\n  timeout_seconds: 60\n  commands: [a]\n  teardown: [b, c]\n",
			want:    []string{"host_setup_0@0 bash RUN/host_setup.sh|a", "host_setup_1@1 …", "host_setup_2@2 …", "host_teardown_0@0 bash RUN/host_setup.sh|b|c", "host_teardown_1@1 …", "host_teardown_2@2 …"},
			setting: &plan.HostSetup{TimeoutSeconds: 60, IgnoreFailure: true, Nodes: "workers", Source: "recipe host_setup"}, env: map[string]string{"CLUSTER_VAR": "1"}},
		{name: "a teardown alone", block: "host_setup: {teardown: [b]}\n",
			want:    []string{"host_teardown_0@0 bash RUN/host_setup.sh|b", "host_teardown_1@1 …", "host_teardown_2@2 …"},
			setting: &plan.HostSetup{TimeoutSeconds: 300, Nodes: "all", Source: "recipe host_setup"}, env: map[string]string{"CLUSTER_VAR": "1"}},
		{name: "the cluster's default", def: record, workspace: "/ws",
			want:    []string{"host_setup_0@0 bash /ws/runners/srt-slurm/hooks/c1/setup.sh", "host_setup_1@1 …", "host_setup_2@2 …"},
			setting: &plan.HostSetup{TimeoutSeconds: 1200, Nodes: "all", Source: "the cluster's default host_setup: runners.yaml"},
			env:     map[string]string{"CLUSTER_VAR": "1", "IBDEVICES": "rdma0,rdma1"}},
		{name: "a recipe's block replaces the default whole", def: record, workspace: "/ws", block: "host_setup: {commands: []}\n"},
		{name: "the recipe's commands over the default", def: record, workspace: "/ws", block: "host_setup: {commands: [x]}\n",
			want:    []string{"host_setup_0@0 bash RUN/host_setup.sh|x", "host_setup_1@1 …", "host_setup_2@2 …"},
			setting: &plan.HostSetup{TimeoutSeconds: 300, Nodes: "all", Source: "recipe host_setup"}, env: map[string]string{"CLUSTER_VAR": "1"}},
		{name: "the default needs the workspace", def: record, wantErr: "host_setup (runners.yaml) runs runners/srt-slurm/hooks/c1/setup.sh from the InferenceX checkout: set paths.workspace"},
		{name: "no block, no default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td := testdataDir(t)
			r, err := recipe.Parse(filepath.Join(td, "recipes", "mock-2p1d-v2.yaml"), []byte(mockV2+tc.block))
			if err != nil {
				t.Fatal(err)
			}
			p := loadProfile(t, filepath.Join(td, "profiles", "mock4.toml"))
			p.Env.Set = map[string]string{"CLUSTER_VAR": "1"}
			p.HostSetup = tc.def
			if tc.def != nil {
				p.Sources = map[string]profile.Source{"host_setup": {File: "runners.yaml"}}
			}
			in := inputs(p, r)
			in.Workspace = tc.workspace
			pl, err := Build(in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, pl)
			var got []string
			var first *plan.Process
			prev := ""
			for i, proc := range pl.Processes {
				if proc.Role != plan.RoleHostSetup && proc.Role != plan.RoleHostTeardown {
					continue
				}
				if first == nil {
					first = &pl.Processes[i]
				}
				if proc.Container || proc.Log != filepath.Join(pl.Layout.Logs, proc.Name+".log") {
					t.Errorf("%s: container %v, log %s", proc.Name, proc.Container, proc.Log)
				}
				argv := strings.Replace(strings.Join(proc.Argv, "|"), filepath.Join(pl.RunDir, "host_setup.sh"), "RUN/host_setup.sh", 1)
				argv = strings.Replace(argv, "|", " ", 1)
				line := fmt.Sprintf("%s@%d %s", proc.Name, proc.Nodes[0], argv)
				if argv == prev {
					line = fmt.Sprintf("%s@%d …", proc.Name, proc.Nodes[0])
				}
				prev = argv
				got = append(got, line)
				if script, ok := proc.Files[filepath.Join(pl.RunDir, "host_setup.sh")]; strings.Contains(argv, "RUN/") && (!ok || script != hostsetup.CommandsScript) {
					t.Errorf("%s: the commands script is not among its files: %v", proc.Name, proc.Files)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("host steps\n got %q\nwant %q", got, tc.want)
			}
			if !reflect.DeepEqual(pl.HostSetup, tc.setting) {
				t.Errorf("host_setup %+v, want %+v", pl.HostSetup, tc.setting)
			}
			if first != nil && !reflect.DeepEqual(first.Env, tc.env) {
				t.Errorf("env %v, want %v", first.Env, tc.env)
			}
			var human strings.Builder
			if err := pl.WriteHuman(&human); err != nil {
				t.Fatal(err)
			}
			if said := strings.Contains(human.String(), "\nHost setup ("); said != (tc.setting != nil) ||
				tc.setting != nil && !strings.Contains(human.String(), fmt.Sprintf("at most %ds per node", tc.setting.TimeoutSeconds)) {
				t.Errorf("the rendered plan says of host_setup:\n%s", human.String())
			}
		})
	}
}

// TestHostSetupNodes: "all" is head, infra and the worker nodes, "workers"
// the worker nodes only: with etcd and NATS on a dedicated node, that node
// is set up for "all" and not for "workers".
func TestHostSetupNodes(t *testing.T) {
	const text = `schema: 2
name: sg
model: {path: /models/dsr1, container: "lmsysorg/sglang:v0.5.5", precision: fp8}
resources: {gpu_type: b200, gpus_per_node: 8}
engine: sglang
roles:
  prefill: {nodes: 1, workers: 1, gpus: 8, args: {tensor-parallel-size: 8}}
  decode: {nodes: 2, workers: 1, gpus: 16, args: {tensor-parallel-size: 16}}
services:
  - {name: etcd, type: etcd, placement: {node: dedicated}}
  - {name: nats, type: nats, placement: {node: dedicated}}
benchmark: {type: sa-bench, isl: 1024, osl: 128, concurrencies: "8", req_rate: inf}
`
	for _, c := range []struct{ nodes, want string }{
		{"all", "[1 0 2 3]"}, // srtctl's order: head (the first worker node here), infra, workers
		{"workers", "[1 2 3]"},
	} {
		pl := buildText(t, "b200.toml", text+"host_setup: {nodes: "+c.nodes+", commands: [a]}\n")
		checkInvariants(t, pl)
		var nodes []int
		for _, p := range pl.HostSteps(plan.RoleHostSetup) {
			nodes = append(nodes, p.Nodes[0])
		}
		if fmt.Sprint(nodes) != c.want || pl.Nodes != 4 {
			t.Errorf("nodes %s: host_setup on %v of %d nodes, want %s", c.nodes, nodes, pl.Nodes, c.want)
		}
	}
}
