package sabench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/mockengine"
	"github.com/slurmbench/slurmbench/results"
)

func TestProbe(t *testing.T) {
	jsonReply := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"cmpl-1","choices":[{"index":0,"text":" a b"}],"usage":{"completion_tokens":2}}`)
	}))
	t.Cleanup(jsonReply.Close)
	for _, tc := range []struct {
		name string
		url  string
		want string // substring of the *ProbeError; "" = accepted
	}{
		{"streams with usage", (&fakeEngine{}).start(t), ""},
		{"several tokens per chunk", (&fakeEngine{tokensPerChunk: 4}).start(t), ""},
		{"no usage", (&fakeEngine{omitUsage: true}).start(t), "no usage.completion_tokens"},
		{"no choices", (&fakeEngine{noChoices: true}).start(t), "no chunk with choices"},
		{"refused", (&fakeEngine{status: http.StatusServiceUnavailable}).start(t), "HTTP 503 Service Unavailable: {\"error\":\"overloaded\"}"},
		{"not streaming", jsonReply.URL, `does not stream (Content-Type "application/json"`},
		{"bad chunk", (&fakeEngine{badChunk: true}).start(t), "not a completions stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Probe(context.Background(), NewConfig(tc.url, "m", 16, 8, 1))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Probe: %v", err)
				}
				return
			}
			var pe *ProbeError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Probe = %v, want a *ProbeError containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestProbeUnknownModel: the mock engine refuses another model with 404,
// and the probe passes its message on.
func TestProbeUnknownModel(t *testing.T) {
	url := mockengine.StartTest(t, mockengine.Options{Model: "served"})
	err := Probe(context.Background(), NewConfig(url, "other", 16, 8, 1))
	var pe *ProbeError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("Probe = %v, want HTTP 404", err)
	}
	if err := Probe(context.Background(), NewConfig(url, "served", 16, 8, 1)); err != nil {
		t.Fatalf("Probe of the served model: %v", err)
	}
}

// TestChatAgainstMockEngine: with Chat the client posts the openai-chat
// body to /v1/chat/completions, the mock counts the text prompt as exactly
// the drawn input length, and every output token is measured.
func TestChatAgainstMockEngine(t *testing.T) {
	url := mockengine.StartTest(t, mockengine.Options{Model: "m", TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	cfg := NewConfig(url, "m", 64, 16, 4)
	cfg.Chat = true
	cfg.WarmupPrompts = -1
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.ValidateSABench(res, cfg.NumPrompts); err != nil {
		t.Fatal(err)
	}
	if res.Backend != ChatBackend {
		t.Errorf("backend %q, want %q", res.Backend, ChatBackend)
	}
	sum := 0
	for _, n := range res.OutputLens {
		sum += n
	}
	if res.TotalOutputTokens != sum || sum == 0 {
		t.Errorf("total_output_tokens %d, Σ output_lens %d", res.TotalOutputTokens, sum)
	}
}

func TestChatRequestBody(t *testing.T) {
	cfg, err := NewConfig("http://x:1", "m", 8, 4, 1).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Chat = true
	ds, _ := NewDataset(cfg.datasetOptions())
	r := newRunner(cfg, ds)
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
		MaxCompletionTokens int  `json:"max_completion_tokens"`
		Stream              bool `json:"stream"`
		IgnoreEOS           bool `json:"ignore_eos"`
	}
	raw := r.requestBody(0, 4)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(body.Messages) != 1 || body.Messages[0].Role != "user" || !body.Stream || !body.IgnoreEOS || body.MaxCompletionTokens != 4 {
		t.Fatalf("chat body %s", raw)
	}
	words := strings.Fields(body.Messages[0].Content)
	if len(words) != ds.InputLens[0] || len(body.Messages[0].Content) != 4*ds.InputLens[0]-1 {
		t.Errorf("prompt %q: %d words, %d bytes; want %d words of 4 bytes with their space", body.Messages[0].Content, len(words), len(body.Messages[0].Content), ds.InputLens[0])
	}
}
