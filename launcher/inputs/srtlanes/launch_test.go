package srtlanes

import (
	"strings"
	"testing"
)

// TestLaunchEdits: the edits a launch's lane makes, in InferenceX's
// submission order (real verification's --set, the eval --unsets, the
// setup script), on InferenceX's rows and on a built row that has all
// three.
func TestLaunchEdits(t *testing.T) {
	all := Table{Lanes: map[Key]Lane{{"x", SrtMulti}: {
		SetupScripts:     map[string]string{"f": "s.sh"},
		EvalUnsets:       []string{"a.b", "c"},
		RealVerification: &Always, HeadFrontend: &Match{Prefixes: anyOf("p")},
	}}}
	multi := func(prefix, fw string, agentic, evalOnly, runEval bool) Request {
		return Request{ModelPrefix: prefix, Framework: fw, Agentic: agentic, MultiNode: true, EvalOnly: evalOnly, RunEval: runEval}
	}
	for _, tc := range []struct {
		name    string
		t       Table
		cluster string
		r       Request
		path    Path
		want    string
	}{
		{"every kind, in order", all, "x", multi("p", "f", false, true, false), SrtMulti,
			"--set frontend.placement.node=head --unset a.b --unset c --set setup_script=s.sh"},
		{"a benchmark: the setup script only", all, "x", multi("p", "f", false, false, false), SrtMulti, "--set setup_script=s.sh"},
		{"run-eval: the unsets, no real verification", all, "x", multi("p", "g", false, false, true), SrtMulti, "--unset a.b --unset c"},
		{"gb200-nv dynamo-sglang: torchao", InferenceX, "gb200-nv", multi("dsr1", "dynamo-sglang", false, false, false), SrtMulti,
			"--set setup_script=install-torchao.sh"},
		{"gb200-nv dynamo-trt: nothing", InferenceX, "gb200-nv", multi("dsr1", "dynamo-trt", false, false, false), SrtMulti, ""},
		{"gb300-nv dsv4 trt AgentX eval: head frontend", InferenceX, "gb300-nv", multi("dsv4", "dynamo-trt", true, true, false), SrtMulti,
			"--set frontend.placement.node=head"},
		{"gb300-nv glm5.2 trt AgentX eval: stripped, no set", InferenceX, "gb300-nv", multi("glm5.2", "dynamo-trt", true, true, false), SrtMulti, ""},
		{"mi355x-amds eval: the dispatch unsets", InferenceX, "mi355x-amds", multi("dsr1", "sglang", false, false, true), SrtMulti,
			"--unset roles.prefill.args.ep-dispatch-algorithm --unset roles.decode.args.ep-dispatch-algorithm"},
		{"b200-nscale native lane: none", InferenceX, "b200-nscale",
			Request{ModelPrefix: "dsv4", Precision: "fp4", Framework: "dynamo-vllm", MultiNode: true}, SrtNative, ""},
		{"single-node: no lane", InferenceX, "gb200-nv", Request{Framework: "dynamo-sglang"}, SrtSingle, ""},
		{"a cluster without a row", InferenceX, "mine", multi("dsr1", "dynamo-sglang", false, true, true), SrtMulti, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.t.Decide(tc.cluster, tc.r)
			if l.Path != tc.path || l.Cluster != tc.cluster || l.Request != tc.r {
				t.Errorf("Decide = %s on %s (%+v), want %s on %s", l.Path, l.Cluster, l.Request, tc.path, tc.cluster)
			}
			var got []string
			for _, e := range l.Edits() {
				got = append(got, e.Flag())
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("Edits = %q, want %q", g, tc.want)
			}
		})
	}
}
