package workflow

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
)

// TestLaunchEdits: the health-check floor and default, and dist-timeout
// after each role's watchdog-timeout, on recipes built per case.
func TestLaunchEdits(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    LaunchEdits
		in   string
		want string
	}{
		{"multi-node: a low max_attempts is raised, interval kept", LaunchEdits{MultiNode: true},
			"health_check: {max_attempts: 10, interval_seconds: 5}\n",
			"health_check: {max_attempts: 720, interval_seconds: 5}\n"},
		{"multi-node: a higher one is kept", LaunchEdits{MultiNode: true},
			"health_check: {max_attempts: 900}\n",
			"health_check: {max_attempts: 900}\n"},
		{"multi-node: nested health_check blocks are raised too", LaunchEdits{MultiNode: true},
			"frontend: {health_check: {max_attempts: 3}}\nbenchmark: {max_attempts: 3}\n",
			"frontend: {health_check: {max_attempts: 720}}\nbenchmark: {max_attempts: 3}\nhealth_check: {max_attempts: 720, interval_seconds: 10}\n"},
		{"single-node: no floor, the recipe's block as it is", LaunchEdits{},
			"health_check: {max_attempts: 10}\n",
			"health_check: {max_attempts: 10}\n"},
		{"a block without max_attempts keeps the schema default, not the cluster's", LaunchEdits{},
			"health_check: {interval_seconds: 5}\n",
			"health_check: {interval_seconds: 5}\n"},
		{"a null health_check is none: the cluster default", LaunchEdits{},
			"health_check: ~\n",
			"health_check: {max_attempts: 720, interval_seconds: 10}\n"},
		{"no health_check: the cluster default", LaunchEdits{},
			"name: x\n",
			"name: x\nhealth_check: {max_attempts: 720, interval_seconds: 10}\n"},
		{"dist-timeout after each role's watchdog-timeout", LaunchEdits{MultiNode: true, DistTimeoutS: 1800},
			"health_check: {max_attempts: 720, interval_seconds: 10}\nroles:\n  prefill: {args: {tp: 4, watchdog-timeout: 600, mem: 0.8}}\n  decode: {args: {tp: 8}}\n",
			"health_check: {max_attempts: 720, interval_seconds: 10}\nroles:\n  prefill: {args: {tp: 4, watchdog-timeout: 600, dist-timeout: 1800, mem: 0.8}}\n  decode: {args: {tp: 8}}\n"},
		{"dist-timeout replaces one the recipe set", LaunchEdits{MultiNode: true, DistTimeoutS: 1800},
			"health_check: {max_attempts: 720, interval_seconds: 10}\nroles: {agg: {args: {dist-timeout: 5, watchdog-timeout: 600}}}\n",
			"health_check: {max_attempts: 720, interval_seconds: 10}\nroles: {agg: {args: {watchdog-timeout: 600, dist-timeout: 1800}}}\n"},
		{"single-node: no dist-timeout", LaunchEdits{DistTimeoutS: 1800},
			"health_check: {max_attempts: 720, interval_seconds: 10}\nroles: {agg: {args: {watchdog-timeout: 600}}}\n",
			"health_check: {max_attempts: 720, interval_seconds: 10}\nroles: {agg: {args: {watchdog-timeout: 600}}}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc, want yaml.Node
			if err := yaml.Unmarshal([]byte(tc.in), &doc); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			tc.e.Apply(doc.Content[0])
			if got, w := flow(t, doc.Content[0]), flow(t, want.Content[0]); got != w {
				t.Errorf("got\n%s\nwant\n%s", got, w)
			}
		})
	}
}

// flow renders n in one style, so documents compare by content and order.
func flow(t *testing.T, n *yaml.Node) string {
	t.Helper()
	var clear func(*yaml.Node)
	clear = func(n *yaml.Node) {
		n.Style, n.Line, n.Column = 0, 0, 0
		for _, c := range n.Content {
			clear(c)
		}
	}
	clear(n)
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestJobTagsAndPreflight: the tags InferenceX gives a job from the
// record's job-tag, and when the record asks to skip the preflight.
func TestJobTagsAndPreflight(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.Local)
	multi, err := ParseRequest(with(multinodeEnv(), "GITHUB_WORKSPACE", "/ws"))
	if err != nil {
		t.Fatal(err)
	}
	agentic, err := ParseRequest(with(multinodeEnv(), "GITHUB_WORKSPACE", "/ws", "IS_AGENTIC", "1", "SCENARIO_TYPE", "agentic-coding", "KV_OFFLOADING", "none"))
	if err != nil {
		t.Fatal(err)
	}
	single, err := ParseRequest(with(singleNodeEnv(), "GITHUB_WORKSPACE", "/ws"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tag  string
		req  *Request
		want string
	}{
		{"gb300", multi, "gb300,dsv4,fp4,8192x1024,infmax-20261206"},
		{"gb300", agentic, "gb300,dsv4,fp4,agentic,infmax-20261206"},
		{"", multi, ""},
		{"h200", single, ""},
	} {
		if got := JobTags(tc.tag, tc.req, now); got != tc.want {
			t.Errorf("JobTags(%q, multinode %v agentic %v) = %q, want %q", tc.tag, tc.req.Multinode, tc.req.Agentic, got, tc.want)
		}
	}
	model := multi.Model[strings.LastIndex(multi.Model, "/")+1:]
	for _, tc := range []struct {
		name      string
		preflight bool
		vis       runners.Visibility
		req       *Request
		want      string // substring of the reason; "" runs the preflight
	}{
		{"preflight on, shared checkpoint", true, runners.Shared, multi, ""},
		{"preflight: false", false, runners.Shared, multi, "preflight is false"},
		{"node-local checkpoint, multi-node", true, runners.NodeLocal, multi, "node-local volume models"},
		{"node-local checkpoint, single-node", true, runners.NodeLocal, single, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &runners.Cluster{ID: "c", Models: runners.Models{Entries: map[string]runners.ModelEntry{model: {Root: "models", Dir: model}}, EntryOrder: []string{model}},
				Slurm: runners.Slurm{Volumes: map[string]runners.Volume{"models": {Path: "/m", Visibility: tc.vis}},
					SrtSlurm: &runners.SrtSlurm{Preflight: tc.preflight}}}
			got := noPreflight("runners.yaml", c, tc.req)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("noPreflight = %q, want %q", got, tc.want)
			}
		})
	}
}
