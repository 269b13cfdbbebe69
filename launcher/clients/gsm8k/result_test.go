package gsm8k

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
	"github.com/slurmbench/slurmbench/results"
)

// Values from CPython 3.11 (whose sum() is a plain left-to-right float sum,
// like numpy float64 items get on any version):
//
//	import math, random
//	mean = lambda a: sum(a) / len(a)
//	def mean_stderr(a):
//	    mu = mean(a)
//	    return math.sqrt(sum([(x - mu) ** 2 for x in a]) / (len(a) - 1)) / math.sqrt(len(a))
//	a = [1.0] * 1253 + [0.0] * 66
//	sel = set(random.Random(7).sample(range(1319), 1253))
//	b = [1.0 if i in sel else 0.0 for i in range(1319)]
//	for v in (a, b, [1.0, 0.0, 1.0]): print(repr(mean(v)), repr(mean_stderr(v)))
func TestMeanStderrMatchesPython(t *testing.T) {
	ones := func(n, of int) []float64 {
		v := make([]float64, of)
		for i := range n {
			v[i] = 1
		}
		return v
	}
	idx, _ := NewPyRandom(7).SampleIndices(1319, 1253)
	b := make([]float64, 1319)
	for _, i := range idx {
		b[i] = 1
	}
	tests := []struct {
		name         string
		vals         []float64
		mean, stderr float64
	}{
		{"ones first", ones(1253, 1319), 0.9499620924943138, 0.006005442354577776},
		{"seed 7 order", b, 0.9499620924943138, 0.006005442354577737},
		{"three", []float64{1, 0, 1}, 0.6666666666666666, 0.33333333333333337},
	}
	for _, tt := range tests {
		mean, stderr := meanStderr(tt.vals)
		if mean != tt.mean || stderr != tt.stderr {
			t.Errorf("%s: mean %v stderr %v, want %v %v", tt.name, mean, stderr, tt.mean, tt.stderr)
		}
	}
	if _, stderr := meanStderr([]float64{1}); !math.IsNaN(stderr) {
		t.Errorf("stderr of one value = %v, want NaN (written as N/A)", stderr)
	}
}

func TestPyFloatReprMatchesPython(t *testing.T) {
	// repr(f) in Python for each f.
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {0.95, "0.95"}, {1253.0 / 1319.0, "0.9499620924943138"},
		{1e-05, "1e-05"}, {0.0001, "0.0001"}, {123456789012345678, "1.2345678901234568e+17"},
		{1e16, "1e+16"}, {9999999999999998, "9999999999999998.0"}, {-0.5, "-0.5"},
		{1.5e-7, "1.5e-07"}, {5e-324, "5e-324"}, {1e22, "1e+22"}, {100, "100.0"},
	}
	for _, tt := range tests {
		if got := pyfloat.JSON(tt.f); got != tt.want {
			t.Errorf("repr(%v) = %s, want %s", tt.f, got, tt.want)
		}
		var back PyFloat
		if err := json.Unmarshal([]byte(tt.want), &back); err != nil || float64(back) != tt.f {
			t.Errorf("PyFloat(%s) decodes to %v, %v", tt.want, back, err)
		}
	}
}

// A results file the way lm-eval writes it (trimmed), including a
// non-numeric stderr, decodes and is gated.
func TestReadLMEvalResultFile(t *testing.T) {
	const file = `{
  "results": {
    "gsm8k": {
      "alias": "gsm8k",
      "exact_match,strict-match": 0.9401061410159212,
      "exact_match_stderr,strict-match": 0.0065,
      "exact_match,flexible-extract": 0.9090219863532980,
      "exact_match_stderr,flexible-extract": "N/A"
    }
  },
  "group_subtasks": {"gsm8k": []},
  "configs": {"gsm8k": {"task": "gsm8k", "generation_kwargs": {"until": ["</s>"], "temperature": 0.0}, "metadata": {"version": 3.0, "model": "x"}}},
  "versions": {"gsm8k": 3.0},
  "n-shot": {"gsm8k": 5},
  "higher_is_better": {"gsm8k": {"exact_match": true}},
  "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}},
  "config": {"model": "local-chat-completions", "gen_kwargs": {"max_tokens": 12288, "temperature": 0, "top_p": 1}, "device": null},
  "git_hash": null,
  "date": 1764633600.5,
  "lm_eval_version": "0.4.9.2",
  "total_evaluation_time_seconds": "812.3"
}`
	path := filepath.Join(t.TempDir(), "results_x.json")
	os.WriteFile(path, []byte(file), 0o644)
	res, err := results.ReadGSM8K(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.FlexibleExtract == nil || *res.FlexibleExtract != 0.909021986353298 {
		t.Errorf("flexible = %v", res.FlexibleExtract)
	}
	if res.FlexibleExtractStderr != nil {
		t.Error(`"N/A" read as a number`)
	}
	err = CheckThresholds(res, "glm5.1") // 0.93: strict passes, flexible fails
	if err == nil || err.Error() != "eval scores below threshold: gsm8k exact_match,flexible-extract = 0.9090 (< 0.93 from models.glm5.1)" {
		t.Errorf("CheckThresholds = %v", err)
	}
	if _, err := results.ReadGSM8K(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestMetricsJSONKeepsOrder(t *testing.T) {
	m := &Metrics{Alias: "gsm8k"}
	m.Set("b", 1.0)
	m.Set("a", "N/A")
	m.Set("b", 0.5) // replacing keeps the position
	got, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"alias":"gsm8k","b":0.5,"a":"N/A"}`; string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
}

func TestResultNamesAndStamps(t *testing.T) {
	for in, want := range map[string]string{
		"deepseek-ai/DeepSeek-R1": "deepseek-ai__DeepSeek-R1",
		`a:b|c?d*e[f]"g<h>i\j`:    "a__b__c__d__e__f__g__h__i__j",
		"plain":                   "plain",
	} {
		if got := SanitizeModelName(in); got != want {
			t.Errorf("SanitizeModelName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := DateID(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); got != "2026-01-02T03-04-05" {
		t.Errorf("DateID without microseconds = %s", got)
	}
	if got := DateID(time.Date(2026, 1, 2, 3, 4, 5, 7000, time.UTC)); got != "2026-01-02T03-04-05.000007" {
		t.Errorf("DateID = %s", got)
	}
}

func TestWriteMetaEnvShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta_env.json")
	m := MetaEnv{IsMultinode: true, Framework: "dynamo-sglang", Precision: "fp4", Model: "dsr1", InfmaxModelPrefix: "dsr1",
		HW: "gb200", ISL: "8192", OSL: "1024", PrefillTP: 4, PrefillEP: 4, PrefillDPAttention: true, PrefillNumWorkers: 4,
		DecodeTP: 8, DecodeEP: 8, DecodeDPAttention: true, DecodeNumWorkers: 1}
	m.SetBatch([]int{2048, 1024}, []int{2048}, []int{1024})
	if err := WriteMetaEnv(path, m); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token()
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want := []string{"is_multinode", "framework", "precision", "spec_decoding", "recipe_fingerprint", "tp", "pp", "dcp_size", "pcp_size", "conc",
		"eval_concs", "completed_eval_concs", "failed_eval_concs", "ep", "dp_attention",
		"prefill_tp", "prefill_pp", "prefill_dcp_size", "prefill_pcp_size", "prefill_ep", "prefill_dp_attention", "prefill_num_workers",
		"decode_tp", "decode_pp", "decode_dcp_size", "decode_pcp_size", "decode_ep", "decode_dp_attention", "decode_num_workers",
		"model", "infmax_model_prefix", "hw", "isl", "osl"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys\n got %q\nwant %q", keys, want)
	}
	var generic map[string]any
	json.Unmarshal(raw, &generic)
	if generic["conc"] != 2048.0 || generic["isl"] != "8192" || generic["prefill_dp_attention"] != true || generic["pp"] != 1.0 {
		t.Errorf("values %v", generic)
	}
	if fl, ok := generic["failed_eval_concs"].([]any); !ok || len(fl) != 1 {
		t.Errorf("failed_eval_concs = %v", generic["failed_eval_concs"])
	}

	// Without a batch the three lists are absent.
	if err := WriteMetaEnv(path, MetaEnv{}); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(path)
	generic = nil
	json.Unmarshal(raw, &generic)
	if _, ok := generic["eval_concs"]; ok || generic["framework"] != "unknown" || generic["osl"] != "0" {
		t.Errorf("unbatched meta_env %v", generic)
	}
}

// The whole results file for a two-document report, pinned so any change to
// lm-eval's shape is deliberate.
func TestResultFileGolden(t *testing.T) {
	task := InferenceXTask()
	s, _ := NewScorer(task)
	docs := []Doc{{Question: "A?", Answer: "x\n#### 18"}, {Question: "B?", Answer: "y\n#### 1,000"}}
	resps := []string{"so $18.\n#### 18", "I get 999"}
	rep := &Report{
		Task: task, Model: "deepseek-ai/DeepSeek-R1", Endpoint: "http://10.1.2.3:8000/v1/chat/completions", APIKey: "EMPTY",
		Concurrency: 64, MaxTokens: 5376, ContextLength: 9472, Original: 1319,
		Start: time.Unix(1764633600, 250000000), End: time.Unix(1764633700, 750000000),
	}
	for i, d := range docs {
		smp := Sample{DocID: i, Doc: d, Target: task.Target(d), Response: resps[i],
			Request: ChatRequest{Messages: task.Messages(d, nil), Model: rep.Model, MaxTokens: 5376, Stop: task.StopSequences(), Seed: 1234, TopP: 1}}
		for f, name := range Filters() {
			smp.Filtered[f] = s.Filter(name, smp.Response)
			smp.ExactMatch[f] = s.ExactMatch(smp.Filtered[f], smp.Target)
		}
		rep.Samples = append(rep.Samples, smp)
	}
	dir := t.TempDir()
	files, err := rep.Write(dir, WriteOptions{LogSamples: true, Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	results, _ := os.ReadFile(files.Results)
	golden(t, "results_two_docs.json", results)
	samples, _ := os.ReadFile(files.Samples)
	golden(t, "samples_two_docs.jsonl", samples)
	body, _ := EncodeRequest(rep.Samples[0].Request)
	golden(t, "request_doc0.json", body)
}

func TestModelArgsRedactsRealKeys(t *testing.T) {
	r := &Report{Model: "m", Endpoint: "http://h:1/v1/chat/completions", APIKey: "sk-secret", Concurrency: 8}
	if got, want := r.ModelArgs(), "model=m,base_url=http://h:1/v1/chat/completions,api_key=<redacted>,eos_string=</s>,max_retries=5,num_concurrent=8,timeout=1800,tokenized_requests=False"; got != want {
		t.Errorf("ModelArgs = %s, want %s", got, want)
	}
}
