package gsm8k

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/mockengine"
	"github.com/slurmbench/slurmbench/results"
)

// keyServer is an httptest fake of an OpenAI chat endpoint answering from an
// answer key, checking every request body on the way.
func keyServer(t *testing.T, entries []AnswerEntry, model string, maxTokens int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	key := map[string]string{}
	for _, e := range entries {
		key[e.Question] = e.Completion
	}
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != ChatCompletionsPath || r.Method != http.MethodPost {
			http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer EMPTY" {
			http.Error(w, "authorization "+got, http.StatusUnauthorized)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// Exactly the fields lm-eval's payload has, with its values.
		want := map[string]string{
			"model": fmt.Sprintf("%q", model), "max_tokens": fmt.Sprint(maxTokens), "temperature": "0",
			"stop": `["</s>","<|im_end|>"]`, "seed": "1234", "top_p": "1",
		}
		for k, v := range want {
			if got := string(fields[k]); got != v {
				http.Error(w, fmt.Sprintf("%s = %s, want %s", k, got, v), http.StatusBadRequest)
				return
			}
		}
		if len(fields) != len(want)+1 {
			http.Error(w, fmt.Sprintf("%d fields, want %d", len(fields), len(want)+1), http.StatusBadRequest)
			return
		}
		var req ChatRequest
		json.Unmarshal(raw, &req)
		if len(req.Messages) != 1 || req.Messages[0].Role != "user" || strings.Count(req.Messages[0].Content, "Question: ") != 6 {
			http.Error(w, "want one user message with 5 shots and the question", http.StatusBadRequest)
			return
		}
		content := req.Messages[0].Content
		q := content[strings.LastIndex(content, "Question: ")+len("Question: "):]
		q = q[:strings.Index(q, "\nEnd your response")]
		completion, ok := key[q]
		if !ok {
			completion = "I don't know."
		}
		served.Add(1)
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": completion}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &served
}

// Python's mean_stderr over the per-document values when the correct
// documents are random.Random(7).sample(range(1319), 1253) (see
// TestMeanStderrMatchesPython).
const stderr95seed7 = 0.006005442354577737

func TestRunEndToEndScoresTheAnswerKeyAccuracy(t *testing.T) {
	test, train := splits(t)
	entries, err := MakeAnswerKey(test, 0.95, 7)
	if err != nil {
		t.Fatal(err)
	}
	srv, served := keyServer(t, entries, "dsr1-fp4", 5376)
	var progress atomic.Int64
	rep, err := Run(context.Background(), Options{
		BaseURL: srv.URL, Model: "dsr1-fp4", Concurrency: 64, MaxTokens: 5376, ContextLength: 9472,
		Progress: func(done, total int) { progress.Add(1) },
	}, test, train)
	if err != nil {
		t.Fatal(err)
	}
	if served.Load() != TestDocs || progress.Load() != TestDocs {
		t.Errorf("served %d requests, %d progress calls; want %d", served.Load(), progress.Load(), TestDocs)
	}
	want := 1253.0 / 1319.0
	for _, s := range rep.Scores() {
		if s.Mean != want || s.N != TestDocs {
			t.Errorf("%s: mean %v over %d, want %v over %d", s.Filter, s.Mean, s.N, want, TestDocs)
		}
		if s.Stderr != stderr95seed7 {
			t.Errorf("%s: stderr %v, want %v", s.Filter, s.Stderr, stderr95seed7)
		}
	}
	res := rep.Score()
	if err := CheckThresholds(res, "dsr1"); err != nil {
		t.Errorf("0.9499 against dsr1's 0.91: %v", err)
	}
	var te *ThresholdError
	strict := Thresholds{Default: map[string]float64{"gsm8k": 0.95}}
	if err := strict.Check(res, "dsr1"); !errors.As(err, &te) || len(te.Failures) != 2 {
		t.Errorf("0.9499 against 0.95 = %v, want both filters failing", err)
	}
}

func TestRunAgainstMockEngine(t *testing.T) {
	test, train := splits(t)
	entries, err := MakeAnswerKey(test, 0.95, 7)
	if err != nil {
		t.Fatal(err)
	}
	mockEntries := make([]mockengine.AnswerEntry, len(entries))
	for i, e := range entries {
		mockEntries[i] = mockengine.AnswerEntry{Question: e.Question, Completion: e.Completion}
	}
	url := mockengine.StartTest(t, mockengine.Options{
		Model: "dsr1-fp4", AnswerKey: mockengine.NewAnswerKey(mockEntries), Log: io.Discard,
	})
	for _, task := range []Task{InferenceXTask(), UpstreamTask(), func() Task { t := InferenceXTask(); t.FewshotAsMultiturn = true; return t }()} {
		rep, err := Run(context.Background(), Options{
			BaseURL: url, Model: "dsr1-fp4", Concurrency: 64, MaxTokens: 5376, Task: task,
		}, test, train)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rep.Scores() {
			if s.Mean != 1253.0/1319.0 || s.Stderr != stderr95seed7 {
				t.Errorf("multiturn=%v %q: %s = %v ± %v, want %v ± %v", task.FewshotAsMultiturn, task.DocToText,
					s.Filter, s.Mean, s.Stderr, 1253.0/1319.0, stderr95seed7)
			}
		}
	}
}

func TestRunLimitAndWrite(t *testing.T) {
	test, train := splits(t)
	entries, _ := MakeAnswerKey(test, 1, 0)
	srv, served := keyServer(t, entries, "m", 100)
	rep, err := Run(context.Background(), Options{BaseURL: srv.URL + "/v1/chat/completions/", Model: "m", Concurrency: 3, MaxTokens: 100, Limit: 10}, test, train)
	if err != nil {
		t.Fatal(err)
	}
	if served.Load() != 10 || len(rep.Samples) != 10 {
		t.Fatalf("served %d, %d samples; want 10", served.Load(), len(rep.Samples))
	}
	dir := filepath.Join(t.TempDir(), "eval")
	now := time.Date(2026, 12, 2, 15, 4, 5, 123456000, time.UTC)
	files, err := rep.Write(dir, WriteOptions{LogSamples: true, MetaEnv: &MetaEnv{Model: "m", InfmaxModelPrefix: "dsr1", Conc: 3}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "results_2026-12-02T15-04-05.123456.json"); files.Results != want {
		t.Errorf("results file %s, want %s", files.Results, want)
	}
	score, err := results.ReadGSM8K(files.Results)
	if err != nil {
		t.Fatal(err)
	}
	if score.StrictMatch == nil || *score.StrictMatch != 1 || score.Samples != 10 {
		t.Errorf("read back %+v", score)
	}
	if !reflect.DeepEqual(score, rep.Score()) {
		t.Errorf("the file reads back as %+v, the report says %+v", score, rep.Score())
	}
	raw, _ := os.ReadFile(files.Results)
	for _, want := range []string{`"exact_match,strict-match": 1.0,`, `"exact_match_stderr,strict-match": 0.0,`, `"limit": 10,`,
		`"model_args": "model=m,base_url=` + srv.URL + `/v1/chat/completions,api_key=EMPTY,eos_string=</s>,max_retries=5,num_concurrent=3,timeout=1800,tokenized_requests=False"`,
		`"versions": {` + "\n" + `    "gsm8k": 3.0`, `"n-shot": {` + "\n" + `    "gsm8k": 5`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("results file lacks %s", want)
		}
	}
	samples, _ := os.ReadFile(files.Samples)
	lines := strings.Split(strings.TrimSpace(string(samples)), "\n")
	if len(lines) != 20 || filepath.Base(files.Samples) != "samples_gsm8k_2026-12-02T15-04-05.123456.jsonl" {
		t.Fatalf("%s has %d lines, want 20 (10 documents × 2 filters)", files.Samples, len(lines))
	}
	var first struct {
		DocID         int      `json:"doc_id"`
		Filter        string   `json:"filter"`
		FilteredResps []string `json:"filtered_resps"`
		ExactMatch    float64  `json:"exact_match"`
		PromptHash    string   `json:"prompt_hash"`
		Arguments     map[string]struct {
			Arg0 []string `json:"arg_0"`
		} `json:"arguments"`
	}
	json.Unmarshal([]byte(lines[0]), &first)
	if first.DocID != 0 || first.Filter != FilterStrict || !slices.Equal(first.FilteredResps, []string{"18"}) || first.ExactMatch != 1 ||
		first.PromptHash != hashString(first.Arguments["gen_args_0"].Arg0[0]) {
		t.Errorf("first sample line %+v", first)
	}
	meta, err := ReadMetaEnv(files.MetaEnv)
	if err != nil || meta.InfmaxModelPrefix != "dsr1" || meta.Framework != "unknown" || meta.TP != 1 || meta.ISL != "0" {
		t.Errorf("meta_env %+v, %v", meta, err)
	}
}

func TestRunRetriesThenFails(t *testing.T) {
	test, train := splits(t)
	var calls atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first two attempts of every request fail; reasoning_content stands in for empty content.
		if calls.Add(1)%3 != 0 {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"content":null,"reasoning_content":"so #### 18"}}]}`)
	}))
	defer flaky.Close()
	noWait := func(int) time.Duration { return 0 }
	rep, err := Run(context.Background(), Options{BaseURL: flaky.URL, Model: "m", Concurrency: 1, MaxTokens: 10, Limit: 1, RetryWait: noWait}, test, train)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Samples[0].Response != "so #### 18" || rep.Samples[0].ExactMatch != [2]float64{1, 1} || calls.Load() != 3 {
		t.Errorf("sample %+v after %d calls", rep.Samples[0], calls.Load())
	}

	var attempts atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		http.Error(w, "model not loaded", http.StatusInternalServerError)
	}))
	defer down.Close()
	_, err = Run(context.Background(), Options{BaseURL: down.URL, Model: "m", Concurrency: 1, MaxTokens: 10, Limit: 1, RetryWait: noWait}, test, train)
	if err == nil || !strings.Contains(err.Error(), "document 0") || !strings.Contains(err.Error(), "model not loaded") || attempts.Load() != DefaultMaxRetries {
		t.Errorf("error %v after %d attempts, want one naming document 0 and the server's message after %d", err, attempts.Load(), DefaultMaxRetries)
	}
}

func TestRunHonoursCancellation(t *testing.T) {
	test, train := splits(t)
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, Options{BaseURL: srv.URL, Model: "m", Concurrency: 4, MaxTokens: 10, RetryWait: func(int) time.Duration { return 0 }}, test, train)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run under an expired context = %v, want context.DeadlineExceeded", err)
	}
}

func TestRunValidatesOptions(t *testing.T) {
	docs := []Doc{{Question: "q", Answer: "#### 1"}}
	_, err := Run(context.Background(), Options{}, docs, docs)
	for _, want := range []string{"base URL", "model name", "concurrency", "max tokens", "5 shots"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run with zero options = %v, want it to mention %q", err, want)
		}
	}
}

func TestTenacityWait(t *testing.T) {
	want := []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := TenacityWait(i + 1); got != w {
			t.Errorf("TenacityWait(%d) = %v, want %v", i+1, got, w)
		}
	}
}

// TestRunRefusesAHugeAnswer: an answer past 16 MiB fails naming the limit;
// it was read whole, however large.
func TestRunRefusesAHugeAnswer(t *testing.T) {
	test, train := splits(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"content":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 17 {
			fmt.Fprint(w, chunk)
		}
		fmt.Fprint(w, ` #### 18"}}]}`)
	}))
	defer srv.Close()
	noWait := func(int) time.Duration { return 0 }
	_, err := Run(context.Background(), Options{BaseURL: srv.URL, Model: "m", Concurrency: 1, MaxTokens: 10, Limit: 1, RetryWait: noWait, MaxRetries: 1}, test, train)
	if err == nil || !strings.Contains(err.Error(), "16 MiB") {
		t.Fatalf("err = %v, want the 16 MiB limit named", err)
	}
}
