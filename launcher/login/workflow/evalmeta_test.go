package workflow

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// metaKeys reads a meta_env.json's keys in file order.
func metaKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestRefreshEvalMeta builds staged files and environments and checks
// meta.py's build rules: identity and topology from the variables (the
// disaggregated names of a multi-node job), suite, conc and a batch's
// manifest kept in place, the DISAGG topology, the RESULT_FILENAME
// fallback, and the refusals.
func TestRefreshEvalMeta(t *testing.T) {
	base := Env{"FRAMEWORK": "dynamo-trt", "PRECISION": "fp4", "SPEC_DECODING": "mtp", "RECIPE_FINGERPRINT": "fp-1",
		"MODEL": "deepseek-ai/DeepSeek-V4-Pro", "MODEL_PREFIX": "dsv4", "RUNNER_TYPE": "gb300", "ISL": "1024", "OSL": "1024",
		"PREFILL_TP": "4", "PREFILL_EP": "4", "PREFILL_DP_ATTN": "true", "PREFILL_NUM_WORKERS": "2",
		"DECODE_TP": "8", "DECODE_EP": "16", "DECODE_NUM_WORKERS": "1", "PP_SIZE": "1"}
	staged := `{"is_multinode": false, "eval_suite": "gsm8k", "conc": 64, "recipe_fingerprint": "", "tp": 1}`
	batch := `{"eval_suite": "gsm8k", "conc": 8, "eval_concs": [8, 64], "completed_eval_concs": [8], "failed_eval_concs": []}`
	with := func(e Env, kv ...string) Env {
		out := Env{}
		for k, v := range e {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		staged  string
		env     Env
		want    map[string]any // key → JSON value
		order   []string       // a subsequence the keys follow
		absent  []string
		wantErr string
	}{
		{name: "identity and the disaggregated topology from the variables", staged: staged, env: base,
			want: map[string]any{"is_multinode": true, "framework": "dynamo-trt", "precision": "fp4", "recipe_fingerprint": "fp-1",
				"eval_suite": "gsm8k", "conc": 64.0, "tp": 4.0, "ep": 4.0, "dp_attention": true, "prefill_tp": 4.0, "prefill_ep": 4.0,
				"prefill_dp_attention": true, "prefill_num_workers": 2.0, "decode_tp": 8.0, "decode_ep": 16.0, "decode_dp_attention": false,
				"decode_num_workers": 1.0, "pp": 1.0, "dcp_size": 1.0, "model": "deepseek-ai/DeepSeek-V4-Pro", "infmax_model_prefix": "dsv4",
				"hw": "gb300", "isl": "1024", "osl": "1024"},
			order:  []string{"is_multinode", "framework", "precision", "spec_decoding", "eval_suite", "recipe_fingerprint", "tp", "pp", "dcp_size", "pcp_size", "conc", "ep", "dp_attention", "prefill_tp", "decode_num_workers", "model", "infmax_model_prefix", "hw", "isl", "osl"},
			absent: []string{"eval_concs", "disagg", "num_gpus"}},
		{name: "defaults: TP and EP from the single names, workers 1, unknown names", staged: staged,
			env:  Env{"TP": "2", "EP_SIZE": "2"},
			want: map[string]any{"framework": "unknown", "precision": "unknown", "prefill_tp": 2.0, "decode_tp": 2.0, "decode_ep": 2.0, "prefill_num_workers": 1.0, "hw": "unknown", "isl": "0", "model": ""}},
		{name: "MODEL_NAME wins over MODEL", staged: staged, env: with(base, "MODEL_NAME", "served"), want: map[string]any{"model": "served"}},
		{name: "framework and precision from RESULT_FILENAME", staged: staged,
			env:  Env{"RESULT_FILENAME": "dsv4_8k1k_fp8_dynamo-sglang_tp8_ep8"},
			want: map[string]any{"precision": "fp8", "framework": "dynamo-sglang"}},
		{name: "a batch keeps its manifest after conc", staged: batch, env: base,
			want:  map[string]any{"conc": 8.0, "eval_concs": []any{8.0, 64.0}, "completed_eval_concs": []any{8.0}, "failed_eval_concs": []any{}},
			order: []string{"conc", "eval_concs", "completed_eval_concs", "failed_eval_concs", "ep"}},
		{name: "DISAGG=true: per-role GPUs", staged: staged, env: with(base, "DISAGG", "true"),
			want:  map[string]any{"disagg": true, "num_prefill_gpu": 8.0, "num_decode_gpu": 8.0, "num_gpus": 16.0, "prefill_num_workers": 2.0},
			order: []string{"osl", "disagg", "num_prefill_gpu", "num_decode_gpu", "num_gpus"}},
		{name: "DISAGG=false on a multi-node job: the prefill layout, no decode", staged: staged, env: with(base, "DISAGG", "false"),
			want: map[string]any{"disagg": false, "tp": 4.0, "num_gpus": 8.0, "num_prefill_gpu": 8.0, "num_decode_gpu": 0.0,
				"decode_tp": 0.0, "decode_ep": 0.0, "decode_pp": 1.0, "decode_num_workers": 0.0, "prefill_num_workers": 2.0},
			order: []string{"osl", "disagg", "num_gpus", "num_prefill_gpu", "num_decode_gpu"}},
		{name: "a size that is no integer", staged: staged, env: with(base, "DCP_SIZE", "two"), wantErr: "DCP_SIZE must be an integer for meta_env.json dcp_size"},
		{name: "DISAGG neither true nor false", staged: staged, env: with(base, "DISAGG", "yes"), wantErr: "DISAGG must be true or false"},
		{name: "no eval_suite to keep", staged: `{"conc": 1}`, env: base, wantErr: "eval_suite"},
		{name: "a batch without its manifest", staged: `{"conc": 1, "eval_suite": "x", "eval_concs": [1]}`, env: base, wantErr: "completed_eval_concs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), EvalMetaFile)
			if err := os.WriteFile(path, []byte(tc.staged), 0o644); err != nil {
				t.Fatal(err)
			}
			ok, err := RefreshEvalMeta(path, tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if data, _ := os.ReadFile(path); string(data) != tc.staged {
					t.Error("the staged file changed on a refusal")
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("%v, %v", ok, err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), "{\n  \"is_multinode\": true,\n") || !strings.HasSuffix(string(data), "\n}\n") {
				t.Errorf("not json.dumps(indent=2) text:\n%s", data)
			}
			var got map[string]any
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if g, _ := json.Marshal(got[k]); string(g) != mustJSON(t, v) {
					t.Errorf("%s = %s, want %s", k, g, mustJSON(t, v))
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present", k)
				}
			}
			keys, i := metaKeys(t, data), 0
			for _, k := range keys {
				if i < len(tc.order) && k == tc.order[i] {
					i++
				}
			}
			if i < len(tc.order) {
				t.Errorf("keys %v do not follow %v", keys, tc.order)
			}
		})
	}
	if ok, err := RefreshEvalMeta(filepath.Join(t.TempDir(), EvalMetaFile), base); ok || err != nil {
		t.Errorf("no staged file: %v, %v", ok, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
