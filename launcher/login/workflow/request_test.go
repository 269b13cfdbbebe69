package workflow

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// multinodeEnv is benchmark-multinode-tmpl.yml's environment for one
// fixed-sequence row, after the launch step's exports.
func multinodeEnv() Env {
	return Env{
		"RUNNER_NAME": "gb300-nv_07", "GITHUB_WORKSPACE": "/ws/inferencex-e2e",
		"IMAGE": "lmsysorg/sglang:v0.5.13", "MODEL": "deepseek-ai/DeepSeek-V4-Pro", "MODEL_PREFIX": "dsv4",
		"FRAMEWORK": "dynamo-sglang", "PRECISION": "fp4", "SPEC_DECODING": "none",
		"RESULT_FILENAME": "dsv4_8k1k_fp4_recipe-abc", "IS_MULTINODE": "true", "IS_AGENTIC": "0",
		"RUN_EVAL": "false", "EVAL_ONLY": "false", "CONC_LIST": "4 64 512", "EVAL_CONC": "512",
		"REQUIRE_POWER": "0", "THINKING_MODE": "thinking_on", "ISL": "8192", "OSL": "1024",
		"SRT_RECIPE": "recipes/dsv4/sglang/gb300-fp4/8k1k/disagg.yaml:override_mtp",
		"EXP_NAME":   "dsv4_8k1k", "RECIPE_FINGERPRINT": "abc", "SCENARIO_TYPE": "fixed-seq-len",
	}
}

// singleNodeEnv is a single-node row's (request.py's SingleNodeRequest).
func singleNodeEnv() Env {
	env := multinodeEnv()
	delete(env, "IS_MULTINODE")
	maps.Copy(env, Env{"SRT_RECIPE": "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/h200-fp8/1k1k.yaml:zip_override_concurrency[0]",
		"TP": "8", "PP_SIZE": "1", "DCP_SIZE": "1", "PCP_SIZE": "1", "EP_SIZE": "1", "DP_ATTENTION": "false",
		"GPU_COUNT": "8", "CONC": "4", "RANDOM_RANGE_RATIO": "0.8", "GPU_MONITOR_INTERVAL": "1",
		"HF_HUB_CACHE": "/hf", "SALLOC_TIME_LIMIT": "480"})
	return env
}

func with(env Env, kv ...string) Env {
	out := maps.Clone(env)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<unset>" {
			delete(out, kv[i])
			continue
		}
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestParseRequest(t *testing.T) {
	tests := []struct {
		name        string
		env         Env
		wantMissing []string
		wantInvalid string
		check       func(t *testing.T, r *Request)
	}{
		{name: "multi-node row", env: multinodeEnv(), check: func(t *testing.T, r *Request) {
			if !r.Multinode || r.Agentic || r.RunEval || r.EvalOnly || r.RequirePower {
				t.Errorf("flags %+v", r)
			}
			if !slices.Equal(r.ConcList, []int{4, 64, 512}) || r.ISL != 8192 || r.Recipe() != r.SrtRecipe {
				t.Errorf("conc %v isl %d recipe %q", r.ConcList, r.ISL, r.Recipe())
			}
			if r.JobName() != "inferencex-gb300-nv_07" {
				t.Errorf("job name %q", r.JobName())
			}
		}},
		{name: "single-node row", env: singleNodeEnv(), check: func(t *testing.T, r *Request) {
			if r.Multinode || r.GPUCount != 8 || r.Conc != 4 {
				t.Errorf("%+v", r)
			}
		}},
		{name: "nothing set names every required variable", env: Env{"IS_MULTINODE": "true"},
			wantMissing: []string{"RUNNER_NAME", "GITHUB_WORKSPACE", "MODEL_PREFIX", "IMAGE", "FRAMEWORK", "PRECISION",
				"SPEC_DECODING", "IS_AGENTIC", "RUN_EVAL", "EVAL_ONLY", "RESULT_FILENAME", "SRT_RECIPE"}},
		{name: "empty is unset", env: with(multinodeEnv(), "IMAGE", "", "RESULT_FILENAME", ""), wantMissing: []string{"IMAGE", "RESULT_FILENAME"}},
		{name: "no recipe", env: with(multinodeEnv(), "SRT_RECIPE", "<unset>"), wantMissing: []string{"SRT_RECIPE"}},
		{name: "single-node needs its topology", env: with(singleNodeEnv(), "TP", "<unset>", "GPU_COUNT", "", "HF_HUB_CACHE", "<unset>"),
			wantMissing: []string{"TP", "GPU_COUNT", "HF_HUB_CACHE"}},
		{name: "single-node TP not a number", env: with(singleNodeEnv(), "TP", "eight"), wantInvalid: `TP: Input should be a valid integer, unable to parse string as an integer`},
		{name: "CONC_LIST repeated", env: with(multinodeEnv(), "CONC_LIST", "4 4"), wantInvalid: "CONC_LIST: concurrencies must be positive unique integers"},
		{name: "CONC_LIST leading zero", env: with(multinodeEnv(), "CONC_LIST", "4 064"), wantInvalid: `CONC_LIST: entries must be canonical positive integers: "064"`},
		{name: "CONC_LIST zero", env: with(multinodeEnv(), "CONC_LIST", "0"), wantInvalid: `"0"`},
		{name: "CONC_LIST comma", env: with(multinodeEnv(), "CONC_LIST", "4,8"), wantInvalid: "CONC_LIST.0: " + intMessage},
		{name: "EVAL_CONC not a number", env: with(multinodeEnv(), "EVAL_CONC", "16 x"), wantInvalid: `EVAL_CONC: each entry must be a positive integer`},
		{name: "speculative AgentX needs THINKING_MODE", env: with(multinodeEnv(), "IS_AGENTIC", "1", "SPEC_DECODING", "mtp", "THINKING_MODE", ""),
			wantInvalid: "THINKING_MODE is required"},
		{name: "speculative AgentX eval-only does not", env: with(multinodeEnv(), "IS_AGENTIC", "1", "SPEC_DECODING", "mtp", "THINKING_MODE", "", "EVAL_ONLY", "true")},
		{name: "flags take one spelling", env: with(multinodeEnv(), "RUN_EVAL", "True", "IS_AGENTIC", "true", "IS_MULTINODE", "true", "REQUIRE_POWER", "yes"),
			check: func(t *testing.T, r *Request) {
				if r.RunEval || r.Agentic || !r.RequirePower {
					t.Errorf("RUN_EVAL=True %v, IS_AGENTIC=true %v, REQUIRE_POWER=yes %v", r.RunEval, r.Agentic, r.RequirePower)
				}
			}},
		{name: "REQUIRE_POWER spellings", env: with(multinodeEnv(), "REQUIRE_POWER", "Yes"), check: func(t *testing.T, r *Request) {
			if r.RequirePower {
				t.Error("REQUIRE_POWER=Yes counted")
			}
		}},
		{name: "eval-only serves the eval recipe", env: with(multinodeEnv(), "EVAL_ONLY", "true", "EVAL_SRT_RECIPE", "recipes/e.yaml"), check: func(t *testing.T, r *Request) {
			if r.Recipe() != "recipes/e.yaml" {
				t.Errorf("recipe %q", r.Recipe())
			}
		}},
		{name: "the eval recipe only on eval-only runs", env: with(multinodeEnv(), "RUN_EVAL", "true", "EVAL_SRT_RECIPE", "recipes/e.yaml"), check: func(t *testing.T, r *Request) {
			if r.Recipe() != r.SrtRecipe {
				t.Errorf("recipe %q", r.Recipe())
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRequest(tt.env)
			if tt.wantMissing == nil && tt.wantInvalid == "" {
				if err != nil {
					t.Fatalf("ParseRequest: %v", err)
				}
				if tt.check != nil {
					tt.check(t, r)
				}
				return
			}
			var re *RequestError
			if !errors.As(err, &re) || exitcode.Of(err) != exitcode.Config {
				t.Fatalf("err %v (code %d), want a RequestError with exit 2", err, exitcode.Of(err))
			}
			if tt.wantMissing != nil && !slices.Equal(re.Missing, tt.wantMissing) {
				t.Errorf("missing %v, want %v", re.Missing, tt.wantMissing)
			}
			if tt.wantInvalid != "" && !strings.Contains(err.Error(), tt.wantInvalid) {
				t.Errorf("error %q does not say %q", err, tt.wantInvalid)
			}
		})
	}
}

func TestParseConcList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"4", []int{4}, true},
		{" 4\t64\n512 ", []int{4, 64, 512}, true},
		{"", nil, false},
		{"   ", nil, false},
		{"4 4", nil, false},
		{"+4", nil, false},
		{"04", nil, false},
		{"-4", nil, false},
		{"0", nil, false},
		{"4.0", nil, false},
		{"99999999999999999999999", nil, false},
	}
	for _, tt := range tests {
		got, err := ParseConcList(tt.in)
		if (err == nil) != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("ParseConcList(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestPassthroughNames(t *testing.T) {
	env := Env{"EVAL_FRAMEWORK": "lm-eval", "EVAL_LIMIT": "", "AIPERF_X": "1", "AGENTIC_Y": "2", "TP": "8",
		"TP_SIZE": "8", "CONC": "4", "CONC_LIST": "4", "OPENAI_API_KEY": "k", "REQUIRE_POWER": "0",
		"MODEL": "m", "EVAL-BAD": "1", "SCENARIO_TYPE": "fixed-seq-len", "HF_TOKEN": "secret"}
	want := []string{"AGENTIC_Y", "AIPERF_X", "CONC", "EVAL_FRAMEWORK", "OPENAI_API_KEY", "REQUIRE_POWER", "SCENARIO_TYPE", "TP"}
	if got := PassthroughNames(env); !slices.Equal(got, want) {
		t.Errorf("PassthroughNames = %v, want %v", got, want)
	}
}

func TestEvalOverrides(t *testing.T) {
	got, err := EvalOverrides(Env{"EVAL_CONC": "16", "TP": "8"}, MultinodeEvalCommand)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, o := range got {
		s = append(s, o.String())
	}
	want := []string{
		`--set post_eval.command=["env","HF_HUB_OFFLINE=0","HF_DATASETS_OFFLINE=0","TRANSFORMERS_OFFLINE=0","MODEL_PATH=/model","bash","{infmax_workspace}/benchmarks/multi_node/srt_eval.sh","{endpoint}","{infmax_workspace}"]`,
		`--set post_eval.passthrough_env=["EVAL_CONC","TP"]`,
	}
	if !slices.Equal(s, want) {
		t.Errorf("overrides\n%q\nwant\n%q", s, want)
	}
	if n := len(got[0].Value.Content); n != len(MultinodeEvalCommand) {
		t.Errorf("post_eval.command parses to %d items, want %d", n, len(MultinodeEvalCommand))
	}
}

func TestRunMode(t *testing.T) {
	tests := []struct {
		fromEnv, namesRecipe bool
		runner               string
		want                 bool
	}{
		{false, false, "gb300-nv_07", true},
		{false, true, "gb300-nv_07", false},
		{false, false, "", false},
		{true, true, "", true},
	}
	for _, tt := range tests {
		if got := RunMode(tt.fromEnv, tt.namesRecipe, Env{"RUNNER_NAME": tt.runner}); got != tt.want {
			t.Errorf("RunMode(%v, %v, %q) = %v", tt.fromEnv, tt.namesRecipe, tt.runner, got)
		}
	}
}

func TestMirrorPath(t *testing.T) {
	tests := []struct {
		recipe    string
		multinode bool
		file, sel string
	}{
		{"recipes/dsv4/a.yaml:override_mtp", true, "/ws/benchmarks/multi_node/srt-slurm-recipes/dsv4/a.yaml", "override_mtp"},
		{"dsv4/a.yaml", true, "/ws/benchmarks/multi_node/srt-slurm-recipes/dsv4/a.yaml", ""},
		{"benchmarks/multi_node/srt-slurm-recipes/dsv4/a.yaml:base", true, "/ws/benchmarks/multi_node/srt-slurm-recipes/dsv4/a.yaml", "base"},
		{"benchmarks/single_node/srt-slurm-recipes/x.yaml:zip_override_c[1]", false, "/ws/benchmarks/single_node/srt-slurm-recipes/x.yaml", "zip_override_c[1]"},
	}
	for _, tt := range tests {
		file, sel := MirrorPath("/ws", tt.recipe, tt.multinode)
		if file != tt.file || sel != tt.sel {
			t.Errorf("MirrorPath(%q) = %q, %q; want %q, %q", tt.recipe, file, sel, tt.file, tt.sel)
		}
	}
}

// TestEvalConcurrency: EVAL_CONC as given; without it a single-node point
// evaluates at its CONC and a multi-node job at the highest of CONC_LIST,
// as InferenceX's single-node eval script and multi-node template do.
func TestEvalConcurrency(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  Env
		want string
	}{
		{"multi-node EVAL_CONC", multinodeEnv(), "512"},
		{"multi-node EVAL_CONC list", with(multinodeEnv(), "EVAL_CONC", "16 4"), "16 4"},
		{"multi-node without EVAL_CONC: max CONC_LIST", with(multinodeEnv(), "EVAL_CONC", "<unset>", "CONC_LIST", "64 512 4"), "512"},
		{"multi-node with neither", with(multinodeEnv(), "EVAL_CONC", "", "CONC_LIST", "<unset>"), ""},
		{"single-node without EVAL_CONC: CONC", with(singleNodeEnv(), "EVAL_CONC", "<unset>", "CONC", "32"), "32"},
		{"single-node EVAL_CONC empty: CONC", with(singleNodeEnv(), "EVAL_CONC", "", "CONC", "8"), "8"},
		{"single-node EVAL_CONC given", with(singleNodeEnv(), "EVAL_CONC", "16"), "16"},
	} {
		r, err := ParseRequest(tc.env)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := r.EvalConcurrency(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
