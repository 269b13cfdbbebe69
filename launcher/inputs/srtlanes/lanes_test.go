package srtlanes

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFnmatchCase(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"*", "", true},
		{"deepseek-ai/*", "deepseek-ai/DeepSeek-V4-Pro", true},
		{"deepseek-ai/*", "Deepseek-ai/DeepSeek-V4-Pro", false}, // case-sensitive
		{"*V4*", "org/x/DeepSeek-V4-Pro", true},                 // * crosses '/'
		{"recipes/*/trtllm/*", "recipes/dsv4/trtllm/gb300/1k1k.yaml", true},
		{"recipes/*/trtllm/*", "recipes/a/b/trtllm/c.yaml", true},
		{"recipes/*/trtllm/*", "recipes/dsv4/sglang/trtllm.yaml", false},
		{"model-?", "model-1", true},
		{"model-?", "model-12", false},
		{"v[0-9]", "v7", true},
		{"v[!0-9]", "v7", false},
		{"v[!0-9]", "vx", true},
		{"a[", "a[", true}, // an unclosed bracket is literal
		{"a.b", "axb", false},
		{"[]]x", "]x", true},
		{"exact", "exactly", false},
	} {
		if got := FnmatchCase(tc.pat, tc.name); got != tc.want {
			t.Errorf("FnmatchCase(%q, %q) = %v, want %v", tc.pat, tc.name, got, tc.want)
		}
	}
}

// TestMatch checks every field of a Match on its own and together: a set
// field must hold, an unset one matches anything.
func TestMatch(t *testing.T) {
	base := Request{ModelPrefix: "dsv4", Precision: "fp4", Framework: "dynamo-sglang", SpecDecoding: "mtp",
		Model: "deepseek-ai/DeepSeek-V4-Pro", Agentic: true, MultiNode: true}
	with := func(f func(*Request)) Request { r := base; f(&r); return r }
	for _, tc := range []struct {
		name string
		m    Match
		r    Request
		want bool
	}{
		{"empty matches all", Always, Request{}, true},
		{"model prefix in set", Match{Prefixes: anyOf("kimik3", "dsv4")}, base, true},
		{"model prefix not in set", Match{Prefixes: anyOf("kimik3")}, base, false},
		{"empty prefix set matches nothing", Match{Prefixes: []string{}}, base, false},
		{"precision", Match{Precisions: anyOf("fp8")}, base, false},
		{"precision in set", Match{Precisions: anyOf("fp8", "fp4")}, base, true},
		{"framework", Match{Frameworks: anyOf("dynamo-trt")}, base, false},
		{"framework in set", Match{Frameworks: anyOf("dynamo-sglang")}, base, true},
		{"spec decoding", Match{Specs: anyOf("none")}, base, false},
		{"spec decoding unset in the request", Match{Specs: anyOf("none")}, with(func(r *Request) { r.SpecDecoding = "" }), false},
		{"agentic wanted, agentic", Match{Agentic: yes()}, base, true},
		{"agentic wanted, fixed-sequence", Match{Agentic: yes()}, with(func(r *Request) { r.Agentic = false }), false},
		{"fixed-sequence wanted", Match{Agentic: no()}, with(func(r *Request) { r.Agentic = false }), true},
		{"single-node wanted, multi-node", Match{MultiNode: no()}, base, false},
		{"multi-node wanted", Match{MultiNode: yes()}, base, true},
		{"model glob", Match{ModelGlob: "deepseek-ai/*"}, base, true},
		{"model glob misses", Match{ModelGlob: "moonshotai/*"}, base, false},
		{"all fields hold", Match{Prefixes: anyOf("dsv4"), Precisions: anyOf("fp4"), Frameworks: anyOf("dynamo-sglang"),
			Specs: anyOf("mtp"), Agentic: yes(), MultiNode: yes(), ModelGlob: "*V4*"}, base, true},
		{"one field of many fails", Match{Prefixes: anyOf("dsv4"), Precisions: anyOf("fp4"), Frameworks: anyOf("dynamo-vllm"), Agentic: yes()}, base, false},
	} {
		if got := tc.m.Matches(tc.r); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// built is a table made for the tests: its rows are not InferenceX's.
var built = Table{
	Lanes: map[Key]Lane{
		{"c1", SrtMulti}: {
			Frameworks: anyOf("fw-b", "fw-a"),
			Rejects: []Reject{
				{When: Match{Prefixes: anyOf("m1"), Frameworks: anyOf("fw-b")}, Message: "m1 runs only on fw-a"},
				{When: Match{Agentic: yes()}, Message: "no AgentX here"},
			},
			SetupScripts:  map[string]string{"fw-a": "a-setup.sh"},
			Mounts:        []Mount{{When: Always, Volume: "v1", Target: "/v1"}, {When: Match{Precisions: anyOf("fp8")}, Volume: "v2", WorldWritable: true}},
			SharedRunRoot: []Match{{Prefixes: anyOf("m2")}, {Frameworks: anyOf("fw-b"), Agentic: no()}},
			EvalUnsets:    []string{"roles.decode.args.x", "roles.prefill.args.x"},
			TimeLimit:     "2:00:00", LongTimeLimit: "9:00:00", LongTime: &Match{Prefixes: anyOf("m2")},
		},
		{"c1", SrtNative}: {AgenticResultDir: "/native"},
		{"c2", SrtMulti}: {
			RealVerification: &Match{Frameworks: anyOf("fw-t")},
			HeadFrontend:     &Match{Prefixes: anyOf("m3")},
			WriteEvalMeta:    true,
			LongTimeLimit:    "7:00:00", // without LongTime it never applies
		},
	},
	Native: map[string][]Match{"c1": {{Prefixes: anyOf("m9"), Specs: anyOf("mtp")}}},
	Bumps:  map[string]TimeBump{"c3": {When: Match{Frameworks: anyOf("fw-s"), MultiNode: no()}, MinConc: 32, Minutes: 900}},
}

func TestOfAndPath(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cluster  string
		r        Request
		wantPath Path
		wantLane bool
	}{
		{"single-node has no lane", "c1", Request{Framework: "fw-a"}, SrtSingle, false},
		{"multi-node srt-multi row", "c1", Request{MultiNode: true, Framework: "fw-a"}, SrtMulti, true},
		{"native match takes srt-native", "c1", Request{MultiNode: true, ModelPrefix: "m9", SpecDecoding: "mtp"}, SrtNative, true},
		{"native match needs every field", "c1", Request{MultiNode: true, ModelPrefix: "m9", SpecDecoding: "none"}, SrtMulti, true},
		{"a cluster without rows runs with no lane", "mine", Request{MultiNode: true}, SrtMulti, false},
		{"a native path without a row", "c9", Request{MultiNode: true}, SrtMulti, false},
	} {
		l, p := built.Of(tc.cluster, tc.r)
		if p != tc.wantPath || (l != nil) != tc.wantLane {
			t.Errorf("%s: Of = %v, %s; want lane %v, %s", tc.name, l, p, tc.wantLane, tc.wantPath)
		}
		if l != nil && (l.Cluster != tc.cluster || l.Path != p) {
			t.Errorf("%s: lane says %s/%s", tc.name, l.Cluster, l.Path)
		}
	}
}

func TestCheck(t *testing.T) {
	c1, _ := built.Of("c1", Request{MultiNode: true})
	c2, _ := built.Of("c2", Request{MultiNode: true})
	for _, tc := range []struct {
		name string
		l    *Lane
		r    Request
		want string // "" : accepted
	}{
		{"no lane accepts anything", nil, Request{Framework: "x"}, ""},
		{"a lane without frameworks accepts any", c2, Request{Framework: "anything"}, ""},
		{"listed framework", c1, Request{Framework: "fw-a"}, ""},
		{"framework outside the list, sorted in the message", c1, Request{Framework: "fw-z"},
			"cluster c1, srt-multi lane (InferenceX's lanes.py SRT_LANES), FRAMEWORK=fw-z: Unsupported framework: fw-z. Supported frameworks are: fw-a, fw-b"},
		{"empty framework is outside the list", c1, Request{},
			"Unsupported framework: . Supported frameworks are: fw-a, fw-b"},
		{"reject matches", c1, Request{ModelPrefix: "m1", Framework: "fw-b"}, "m1 runs only on fw-a (FRAMEWORK=fw-b)"},
		{"reject needs all its fields", c1, Request{ModelPrefix: "m1", Framework: "fw-a"}, ""},
		{"the first matching reject", c1, Request{ModelPrefix: "m1", Framework: "fw-b", Agentic: true}, "m1 runs only on fw-a (FRAMEWORK=fw-b)"},
		{"a later reject", c1, Request{Framework: "fw-a", Agentic: true}, "no AgentX here (FRAMEWORK=fw-a)"},
	} {
		err := tc.l.Check(tc.r)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.name, err, tc.want)
			continue
		}
		if re.Framework != tc.r.Framework || re.Cluster != tc.l.Cluster {
			t.Errorf("%s: refusal names %s on %s", tc.name, re.Framework, re.Cluster)
		}
	}
}

func TestLaneFields(t *testing.T) {
	c1, _ := built.Of("c1", Request{MultiNode: true})
	native, _ := built.Of("c1", Request{MultiNode: true, ModelPrefix: "m9", SpecDecoding: "mtp"})
	var none *Lane
	vols := func(ms []Mount) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.Volume)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"setup script of the framework", c1.SetupScript(Request{Framework: "fw-a"}), "a-setup.sh"},
		{"no setup script for another framework", c1.SetupScript(Request{Framework: "fw-b"}), ""},
		{"no lane, no setup script", none.SetupScript(Request{Framework: "fw-a"}), ""},
		{"mount for every request", vols(c1.MountsFor(Request{Precision: "fp4"})), "v1"},
		{"conditional mount joins, in table order", vols(c1.MountsFor(Request{Precision: "fp8"})), "v1,v2"},
		{"no lane, no mounts", vols(none.MountsFor(Request{})), ""},
		{"shared run root by prefix", c1.OnSharedRunRoot(Request{ModelPrefix: "m2"}), true},
		{"shared run root by framework and not agentic", c1.OnSharedRunRoot(Request{Framework: "fw-b"}), true},
		{"no shared run root for agentic fw-b", c1.OnSharedRunRoot(Request{Framework: "fw-b", Agentic: true}), false},
		{"no lane, no shared run root", none.OnSharedRunRoot(Request{ModelPrefix: "m2"}), false},
		{"default result dir", c1.ResultDir(), DefaultAgenticResultDir},
		{"the lane's result dir", native.ResultDir(), "/native"},
		{"no lane: default result dir", none.ResultDir(), DefaultAgenticResultDir},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestEvalEdits(t *testing.T) {
	c1, _ := built.Of("c1", Request{MultiNode: true})
	c2, _ := built.Of("c2", Request{MultiNode: true})
	unsets := []string{"roles.decode.args.x", "roles.prefill.args.x"}
	for _, tc := range []struct {
		name string
		l    *Lane
		r    Request
		want EvalEdits
	}{
		{"throughput run: nothing", c1, Request{}, EvalEdits{}},
		{"RUN_EVAL unsets", c1, Request{RunEval: true}, EvalEdits{Unsets: unsets}},
		{"EVAL_ONLY unsets", c1, Request{EvalOnly: true}, EvalEdits{Unsets: unsets}},
		{"real verification without head frontend", c2, Request{EvalOnly: true, Framework: "fw-t"}, EvalEdits{StripForcedAcceptance: true}},
		{"real verification with head frontend", c2, Request{EvalOnly: true, Framework: "fw-t", ModelPrefix: "m3"},
			EvalEdits{StripForcedAcceptance: true, Sets: []string{HeadFrontendSet}}},
		{"real verification only on eval-only runs", c2, Request{RunEval: true, Framework: "fw-t", ModelPrefix: "m3"}, EvalEdits{}},
		{"head frontend only under real verification", c2, Request{EvalOnly: true, Framework: "fw-x", ModelPrefix: "m3"}, EvalEdits{}},
		{"no lane", nil, Request{EvalOnly: true, RunEval: true}, EvalEdits{}},
	} {
		if got := tc.l.EvalEdits(tc.r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestJobTimeLimit(t *testing.T) {
	multi := func(r Request) Request { r.MultiNode = true; return r }
	for _, tc := range []struct {
		name    string
		cluster string
		r       Request
		rec     Record
		want    string // "" : none
	}{
		{"fixed default wins over the lane", "c1", multi(Request{ModelPrefix: "m2", SallocTimeLimit: 480}), Record{DefaultTimeLimit: "6:00:00"}, "6:00:00"},
		{"long limit where LongTime matches", "c1", multi(Request{ModelPrefix: "m2", SallocTimeLimit: 480}), Record{}, "9:00:00"},
		{"lane limit otherwise", "c1", multi(Request{ModelPrefix: "m1", SallocTimeLimit: 480}), Record{}, "2:00:00"},
		{"long limit without LongTime is never used", "c2", multi(Request{SallocTimeLimit: 480}), Record{}, "480"},
		{"a lane without limits: SALLOC_TIME_LIMIT", "c1", multi(Request{ModelPrefix: "m9", SpecDecoding: "mtp", SallocTimeLimit: 300}), Record{}, "300"},
		{"no lane, no SALLOC_TIME_LIMIT: none", "c2", multi(Request{}), Record{}, ""},
		{"a cluster without rows: SALLOC_TIME_LIMIT", "mine", multi(Request{SallocTimeLimit: 90}), Record{}, "90"},
		{"a cluster without rows: its fixed default", "mine", multi(Request{SallocTimeLimit: 90}), Record{DefaultTimeLimit: "2:30:00"}, "2:30:00"},
		{"single-node on a cluster without rows: SALLOC_TIME_LIMIT", "mine", Request{Conc: 999, SallocTimeLimit: 30}, Record{}, "30"},
		{"single-node: the record's single-node limit", "c3", Request{Framework: "fw-s", Conc: 64, SallocTimeLimit: 60}, Record{SingleNodeTimeLimit: 500}, "500"},
		{"single-node: the bump at its concurrency", "c3", Request{Framework: "fw-s", Conc: 32, SallocTimeLimit: 60}, Record{}, "900"},
		{"single-node: below the bump's concurrency", "c3", Request{Framework: "fw-s", Conc: 31, SallocTimeLimit: 60}, Record{}, "60"},
		{"single-node: no bump for an eval-only run", "c3", Request{Framework: "fw-s", Conc: 64, EvalOnly: true, SallocTimeLimit: 60}, Record{}, "60"},
		{"single-node: the bump's match", "c3", Request{Framework: "fw-x", Conc: 64, SallocTimeLimit: 60}, Record{}, "60"},
		{"single-node: lane limits do not apply", "c1", Request{Framework: "fw-a", SallocTimeLimit: 45}, Record{}, "45"},
		{"single-node: fixed default wins", "c3", Request{Framework: "fw-s", Conc: 64}, Record{DefaultTimeLimit: "1:00:00", SingleNodeTimeLimit: 500}, "1:00:00"},
	} {
		l, _ := built.Of(tc.cluster, tc.r)
		got, ok := built.JobTimeLimit(tc.cluster, l, tc.r, tc.rec)
		if got.Value != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %q (%s), %v; want %q", tc.name, got.Value, got.From, ok, tc.want)
		}
	}
}

func TestStripForcedAcceptance(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a: 1\n", "a: 1\n"},
		{"env:\n  TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: \"3\"\n  X: 1\n", "env:\n  X: 1\n"},
		{"x: 1\n# TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS\n", "x: 1\n"},
		{"x: 1\nTLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: 2", "x: 1\n"}, // last line without its newline
		{"", ""},
	} {
		if got := string(StripForcedAcceptance([]byte(tc.in))); got != tc.want {
			t.Errorf("StripForcedAcceptance(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for rel, want := range map[string]bool{
		"dsv4/trtllm/gb300-fp4/agentx.yaml":  true,
		"kimik3/vllm/gb300/trtllm.yaml":      false,
		"trtllm/x.yaml":                      false, // one directory before trtllm/
		"qwen3.5/a/trtllm/b/c.yaml":          true,
		"/dsv4/trtllm/gb300-fp4/agentx.yaml": true,
	} {
		if got := IsTRTLLMRecipe(rel); got != want {
			t.Errorf("IsTRTLLMRecipe(%q) = %v", rel, got)
		}
	}
}

// TestInferenceXRows checks rows of today's table that the workflow's
// refusals and edits depend on, by their observable effect.
func TestInferenceXRows(t *testing.T) {
	multi := func(prefix, prec, fw, spec string, agentic bool) Request {
		return Request{ModelPrefix: prefix, Precision: prec, Framework: fw, SpecDecoding: spec, Agentic: agentic, MultiNode: true}
	}
	for _, tc := range []struct {
		name, cluster string
		r             Request
		path          Path
		refused       string
	}{
		{"b200-nscale dsv4 fp4 sglang runs native", "b200-nscale", multi("dsv4", "fp4", "dynamo-sglang", "none", false), SrtNative, ""},
		{"b200-nscale dsv4 fp8 sglang is refused", "b200-nscale", multi("dsv4", "fp8", "dynamo-sglang", "none", false), SrtMulti,
			"multinode dsv4 supports only dynamo-vllm (FRAMEWORK=dynamo-sglang)"},
		{"b200-nscale vllm is not a dynamo framework", "b200-nscale", multi("qwen3.5", "fp8", "vllm", "none", false), SrtMulti,
			"Unsupported framework: vllm. Supported frameworks are: dynamo-sglang, dynamo-trt, dynamo-vllm"},
		{"h200-dgxc takes vllm", "h200-dgxc", multi("dsv4", "fp8", "vllm", "none", false), SrtMulti, ""},
		{"gb300-nv takes any framework", "gb300-nv", multi("dsv4", "fp4", "sglang", "none", false), SrtMulti, ""},
	} {
		l, p := InferenceX.Of(tc.cluster, tc.r)
		err := l.Check(tc.r)
		if p != tc.path || (tc.refused == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.refused) {
			t.Errorf("%s: path %s, err %v; want %s, %q", tc.name, p, err, tc.path, tc.refused)
		}
	}
	gb200, _ := InferenceX.Of("gb200-nv", multi("glm5.2", "fp4", "dynamo-sglang", "mtp", true))
	if got := gb200.SetupScript(Request{Framework: "dynamo-sglang"}); got != "install-torchao.sh" {
		t.Errorf("gb200-nv dynamo-sglang setup script %q", got)
	}
	if m := gb200.MountsFor(multi("glm5.2", "fp4", "dynamo-sglang", "mtp", true)); len(m) != 1 || m[0].Target != "/configs/dynamo-wheels" || !m[0].WorldWritable {
		t.Errorf("gb200-nv glm5.2 AgentX mounts %+v", m)
	}
	gb300, _ := InferenceX.Of("gb300-nv", multi("dsv4", "fp4", "dynamo-trt", "mtp", true))
	if tl, _ := InferenceX.JobTimeLimit("gb300-nv", gb300, multi("dsv4", "fp4", "dynamo-trt", "mtp", true), Record{}); tl.Value != "8:00:00" {
		t.Errorf("gb300-nv dsv4 AgentX limit %q", tl.Value)
	}
}
