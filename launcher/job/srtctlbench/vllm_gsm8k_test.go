package srtctlbench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
)

// TestAnswerValue: the last run of digits once commas are dropped, read as
// a Python integer literal.
func TestAnswerValue(t *testing.T) {
	for in, want := range map[string]string{
		"#### 72": "72", "so 1,234 apples": "1234", "3.5": "5", "0": "0", "00": "0", "it is 007": invalid,
		"no number": invalid, "": invalid, "12 then 30\n": "30",
	} {
		if got := answerValue(in); got != want {
			t.Errorf("answerValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVLLMGSM8K: the eval sends few-shot completions with the stop words,
// seed and model, scores the last number of each answer, and writes one
// results file per repeat with the eval's keys in its order.
func TestVLLMGSM8K(t *testing.T) {
	test, _, err := gsm8k.LoadDir("")
	if err != nil {
		t.Fatal(err)
	}
	label := map[string]string{}
	for _, d := range test {
		label[d.Question] = answerValue(d.Answer)
	}
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/completions" || json.Unmarshal(b, &body) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		prompt := body["prompt"].(string)
		q := prompt[strings.LastIndex(prompt, "Question: ")+len("Question: ") : strings.LastIndex(prompt, "\nAnswer:")]
		text := " I do not know."
		switch ans := label[q]; {
		case strings.HasPrefix(q, "J"): // questions starting with J: wrong number
			text = " It is 1,000,001."
		case len(q)%2 == 0:
			text = " 2 + 2 = 4, so the answer is " + ans + "."
		}
		_, _ = io.WriteString(w, `{"choices":[{"text":`+quote(text)+`}],"usage":{"completion_tokens":7}}`)
	}))
	defer srv.Close()
	h := newHarness(t)
	err = Run(context.Background(), Options{Type: "gsm8k-vllm", Args: []string{"http://127.0.0.1", srv.URL[strings.LastIndex(srv.URL, ":")+1:], "served", "20", "256", "3", "0.0", "2"},
		Logs: h.logs, Tmp: h.tmp, Environ: []string{}, Now: func() time.Time { return time.Unix(1700000000, 500000000) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 40 {
		t.Fatalf("%d requests, want 20 per repeat", len(bodies))
	}
	b0 := bodies[0]
	if b0["model"] != "served" || b0["seed"] != 42.0 || b0["max_tokens"] != 256.0 || b0["temperature"] != 0.0 ||
		strings.Count(b0["prompt"].(string), "Question: ") != 4 || !strings.HasSuffix(b0["prompt"].(string), "\nAnswer:") {
		t.Errorf("request %v", b0)
	}
	if stop, _ := json.Marshal(b0["stop"]); string(stop) != `["Question","Assistant:","\u003c|separator|\u003e"]` {
		t.Errorf("stop %s", stop)
	}
	// Expected scores from the same rule over the first 20 questions.
	correct, bad := 0, 0
	for _, d := range test[:20] {
		switch {
		case strings.HasPrefix(d.Question, "J"):
		case len(d.Question)%2 == 0:
			correct++
		default:
			bad++
		}
	}
	if correct == 0 || bad == 0 || correct+bad == 20 {
		t.Fatalf("the fake server's answers score %d right, %d invalid: the test needs right, wrong and invalid ones", correct, bad)
	}
	for _, run := range []string{"gsm8k_run1.json", "gsm8k_run2.json"} {
		b, err := os.ReadFile(filepath.Join(h.logs, "accuracy", run))
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, line := range strings.Split(string(b), "\n") {
			if k, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				keys = append(keys, strings.Trim(k, `"`))
			}
		}
		want := "accuracy invalid_rate latency questions_per_second total_output_tokens tokens_per_second num_questions num_shots max_tokens timestamp model temperature seed"
		if strings.Join(keys, " ") != want || !strings.HasPrefix(string(b), "{\n  \"accuracy\": ") {
			t.Errorf("%s keys %q:\n%s", run, keys, b)
		}
		var res map[string]any
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if res["accuracy"] != float64(correct)/20 || res["invalid_rate"] != float64(bad)/20 || res["num_questions"] != 20.0 ||
			res["num_shots"] != 3.0 || res["total_output_tokens"] != 140.0 || res["model"] != "served" || res["timestamp"] != 1700000000.5 ||
			!strings.Contains(string(b), `"temperature": 0.0,`) {
			t.Errorf("%s: %s (want accuracy %d/20, invalid %d/20)", run, b, correct, bad)
		}
	}
	for _, bad := range [][]string{{"http://h", "8000"}, {"http://h", "port", "m"}, {"http://h", "8000", "m", "many"}} {
		if err := Run(context.Background(), Options{Type: "gsm8k-vllm", Args: bad, Logs: h.logs, Tmp: h.tmp, Environ: []string{}}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
