package planner

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// mockV2 is testdata's mock-2p1d topology (2 one-node prefill workers, 1
// decode worker) as a schema-2 recipe, the form services: come in.
const mockV2 = `schema: 2
name: mock-2p1d
model: {path: mock, container: mock-image, precision: fp8}
resources: {gpu_type: mock, gpus_per_node: 4}
engine: mock
roles:
  prefill:
    nodes: 2
    workers: 2
    gpus: 4
    args: {served-model-name: mock/DeepSeek-R1, ttft: 50ms}
  decode:
    nodes: 1
    workers: 1
    gpus: 4
    args: {served-model-name: mock/DeepSeek-R1, ttft: 50ms, itl: 10ms}
frontend: {type: dynamo, enable_multiple_frontends: false}
health_check: {max_attempts: 60, interval_seconds: 1}
benchmark: {type: sa-bench, isl: 1024, osl: 128, concurrencies: "8x32", req_rate: inf}
`

// mockPlan plans mockV2 with extra appended to it.
func mockPlan(t *testing.T, extra string) (*plan.Plan, error) {
	t.Helper()
	td := testdataDir(t)
	r, err := recipe.Parse(filepath.Join(td, "recipes", "mock-2p1d-v2.yaml"), []byte(mockV2+extra))
	if err != nil {
		return nil, err
	}
	return Build(inputs(loadProfile(t, filepath.Join(td, "profiles", "mock4.toml")), r))
}

func servicesOf(pl *plan.Plan) map[string]plan.Process {
	out := map[string]plan.Process{}
	for _, p := range pl.Processes {
		if p.Role == plan.RoleService {
			out[p.Name] = p
		}
	}
	return out
}

// TestServicesPlan: each placement lands where srtctl's services stage puts
// it (one instance per distinct node), with the start phase, readiness
// probe, placeholders, environment layers and preamble script it asked for.
func TestServicesPlan(t *testing.T) {
	cases := []struct {
		name  string
		entry string
		nodes map[string][]int // process name → nodes
		check func(t *testing.T, pl *plan.Plan, procs map[string]plan.Process)
	}{
		{name: "generic defaults: head, after_frontend, no probe", entry: "  - name: side\n    command: [side, --port, \"9000\"]\n",
			nodes: map[string][]int{"service_side": {0}},
			check: func(t *testing.T, _ *plan.Plan, procs map[string]plan.Process) {
				p := procs["service_side"]
				if p.Start != plan.StartAfterFrontend || p.Ready != nil || p.Critical || !reflect.DeepEqual(p.Argv, []string{"side", "--port", "9000"}) {
					t.Errorf("process %+v", p)
				}
			}},
		{name: "prefill, before workers, log readiness, preamble", entry: `  - name: umbp
    placement: {node: prefill}
    start: before_workers
    critical: true
    command: [/opt/umbp, "unix:///logs/umbp-{node_id}.sock"]
    args: [--index, "{index}"]
    env: {WHERE: "{node}", HEAD: "{head_ip}"}
    preamble: |
      ulimit -n 1048576
    readiness:
      log: {pattern: 'registered for GPU'}
      timeout_seconds: 5400
      interval_seconds: 1
`,
			nodes: map[string][]int{"service_umbp_0": {0}, "service_umbp_1": {1}},
			check: func(t *testing.T, pl *plan.Plan, procs map[string]plan.Process) {
				p := procs["service_umbp_1"]
				script := filepath.Join(pl.Layout.Logs, "service_umbp_1.preamble.sh")
				want := []string{"bash", script, "/opt/umbp", "unix:///logs/umbp-1.sock", "--index", "1"}
				if !reflect.DeepEqual(p.Argv, want) {
					t.Errorf("argv %q, want %q", p.Argv, want)
				}
				if body := p.Files[script]; !strings.Contains(body, "ulimit -n 1048576\n") || !strings.HasSuffix(body, "exec \"$@\"\n") {
					t.Errorf("preamble script %q", body)
				}
				if p.Start != plan.StartBeforeWorkers || !p.Critical {
					t.Errorf("start %q critical %v", p.Start, p.Critical)
				}
				if r := p.Ready; r == nil || r.Pattern != "registered for GPU" || r.TimeoutSeconds != 5400 || r.IntervalSeconds != 1 || r.Port != 0 {
					t.Errorf("ready %+v", r)
				}
				if p.Env["WHERE"] != "{host:1}" || p.Env["HEAD"] != "{ip:0}" {
					t.Errorf("env %v: placeholders not filled", p.Env)
				}
			}},
		{name: "decode, tcp readiness owns its port", entry: "  - name: d\n    placement: {node: decode}\n    command: [d]\n    readiness: {port: 9100}\n",
			nodes: map[string][]int{"service_d": {2}},
			check: func(t *testing.T, _ *plan.Plan, procs map[string]plan.Process) {
				p := procs["service_d"]
				if r := p.Ready; r == nil || r.Port != 9100 || r.Node != 2 || r.TimeoutSeconds != 120 || r.IntervalSeconds != 2 || p.Ports["service"] != 9100 {
					t.Errorf("ready %+v ports %v", r, p.Ports)
				}
			}},
		{name: "workers: every worker node", entry: "  - name: mon\n    placement: {node: workers}\n    command: [mon]\n    readiness: {http: {port: 9200, path: /ready}}\n",
			nodes: map[string][]int{"service_mon_0": {0}, "service_mon_1": {1}, "service_mon_2": {2}},
			check: func(t *testing.T, _ *plan.Plan, procs map[string]plan.Process) {
				if r := procs["service_mon_2"].Ready; r == nil || r.Path != "/ready" || r.Status != 200 || r.Node != 2 {
					t.Errorf("ready %+v", r)
				}
			}},
		{name: "disabled entry plans nothing", entry: "  - name: off\n    enabled: false\n    command: [x]\n", nodes: map[string][]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := mockPlan(t, "services:\n"+tc.entry)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, pl)
			procs := servicesOf(pl)
			got := map[string][]int{}
			for n, p := range procs {
				got[n] = p.Nodes
			}
			if !reflect.DeepEqual(got, tc.nodes) {
				t.Errorf("services on %v, want %v", got, tc.nodes)
			}
			if tc.check != nil {
				tc.check(t, pl, procs)
			}
			var human bytes.Buffer
			if err := pl.WriteHuman(&human); err != nil {
				t.Fatal(err)
			}
			if len(tc.nodes) > 0 && !strings.Contains(human.String(), "    start ") {
				t.Errorf("render does not show the service's start phase:\n%s", human.String())
			}
		})
	}
}

// TestServicesRefused: srtctl's ServiceConfig refusals (and the features
// slurmbench does not run), each naming the entry's field.
func TestServicesRefused(t *testing.T) {
	cases := []struct{ name, entry, want string }{
		{"generic without command", "  - name: a\n", "services[a].command: required for type generic"},
		{"duplicate name", "  - name: a\n    command: [x]\n  - name: a\n    command: [y]\n", "services[1].name"},
		{"dedicated generic", "  - name: a\n    command: [x]\n    placement: {node: dedicated}\n", "services[a].placement.node: dedicated is only for etcd, nats and mooncake-master"},
		{"unknown placement", "  - name: a\n    command: [x]\n    placement: {node: moon}\n", "services[a].placement.node"},
		{"unknown start", "  - name: a\n    command: [x]\n    start: with_workers\n", "services[a].start"},
		{"two probes", "  - name: a\n    command: [x]\n    readiness: {port: 1, log: {pattern: x}}\n", "services[a].readiness: needs exactly one probe"},
		{"bad pattern", "  - name: a\n    command: [x]\n    readiness: {log: {pattern: '('}}\n", "services[a].readiness.log.pattern"},
		{"empty argument", "  - name: a\n    command: [x, \"\"]\n", "services[a].command: command/args must not contain empty arguments"},
		{"shell string", "  - name: a\n    command: [bash, -c, \"a && b\"]\n", "services[a].command"},
		{"pool", "  - name: a\n    command: [x]\n    nodes: 2\n    placement: {node: workers}\n", "services[a].nodes"},
		{"typed kind as an entry", "  - name: a\n    type: mooncake-store\n", "services[a].type"},
		{"generic in the infra phase", "  - name: a\n    command: [x]\n    start: infra\n", "services[a].start: a generic service in the infra phase"},
		{"metrics", "  - name: a\n    command: [x]\n    metrics: {port: 9000}\n", "services[a].metrics"},
		{"no decode", "  - name: a\n    command: [x]\n    placement: {node: agg}\n", "services[a].placement.node"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mockPlan(t, "services:\n"+tc.entry)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}
