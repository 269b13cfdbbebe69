package mockengine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseChunk is the union of the chunk shapes the mock sends.
type sseChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int    `json:"index"`
		Text  string `json:"text"`
		Delta struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
	Sent  *int64 `json:"mock_sent_unix_ns"`
}

type streamResult struct {
	chunks  []sseChunk
	done    bool // saw data: [DONE]
	arrival []time.Time
}

func postJSON(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readStream parses an SSE body strictly: every event is "data: ...\n\n".
func readStream(t *testing.T, r io.Reader) streamResult {
	t.Helper()
	var res streamResult
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF && line == "" {
			return res
		}
		if err != nil {
			t.Fatalf("reading stream: %v", err)
		}
		if line == "\n" {
			continue
		}
		payload, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("stream line %q does not start with data: ", line)
		}
		if blank, _ := br.ReadString('\n'); blank != "\n" {
			t.Fatalf("event %q not followed by a blank line (got %q)", line, blank)
		}
		payload = strings.TrimSuffix(payload, "\n")
		if res.done {
			t.Fatalf("event after [DONE]: %q", payload)
		}
		if payload == "[DONE]" {
			res.done = true
			continue
		}
		var c sseChunk
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			t.Fatalf("chunk %q: %v", payload, err)
		}
		res.chunks = append(res.chunks, c)
		res.arrival = append(res.arrival, time.Now())
	}
}

func TestStreamingCompletionsIgnoreEOS(t *testing.T) {
	url := StartTest(t, Options{Model: "dsr1", EOSAfter: 3})
	for _, maxTokens := range []int{1, 7, 64} {
		body := `{"model":"dsr1","prompt":[1,2,3,4,5,6,7,8,9,10],"max_tokens":` + itoa(maxTokens) +
			`,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true,"temperature":0.0}`
		resp := postJSON(t, url+"/v1/completions", body)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		res := readStream(t, resp.Body)
		if !res.done {
			t.Fatal("stream did not end with [DONE]")
		}
		tokenChunks := res.chunks[:len(res.chunks)-1]
		if len(tokenChunks) != maxTokens {
			t.Fatalf("max_tokens %d: got %d token chunks", maxTokens, len(tokenChunks))
		}
		for i, c := range tokenChunks {
			if len(c.Choices) != 1 || c.Choices[0].Text != fillerToken || c.Object != "text_completion" || c.Model != "dsr1" {
				t.Fatalf("chunk %d = %+v", i, c)
			}
			fr := c.Choices[0].FinishReason
			if last := i == len(tokenChunks)-1; last != (fr != nil) || (last && *fr != "length") {
				t.Fatalf("chunk %d finish_reason %v", i, fr)
			}
			if c.Usage != nil {
				t.Fatalf("chunk %d carries usage", i)
			}
		}
		final := res.chunks[len(res.chunks)-1]
		if len(final.Choices) != 0 || final.Usage == nil {
			t.Fatalf("final chunk %+v is not a usage chunk", final)
		}
		if want := (usage{PromptTokens: 10, CompletionTokens: maxTokens, TotalTokens: 10 + maxTokens}); *final.Usage != want {
			t.Errorf("usage %+v, want %+v", *final.Usage, want)
		}
		if final.ID != tokenChunks[0].ID {
			t.Errorf("usage chunk id %q differs from %q", final.ID, tokenChunks[0].ID)
		}
	}
}

func TestEOSAfterWithoutIgnoreEOS(t *testing.T) {
	url := StartTest(t, Options{EOSAfter: 3})
	resp := postJSON(t, url+"/v1/completions", `{"prompt":"hello","max_tokens":10,"stream":true}`)
	res := readStream(t, resp.Body)
	if len(res.chunks) != 3 {
		t.Fatalf("got %d chunks, want 3 (EOS after 3, no usage chunk requested)", len(res.chunks))
	}
	if fr := res.chunks[2].Choices[0].FinishReason; fr == nil || *fr != "stop" {
		t.Errorf("finish_reason %v, want stop", fr)
	}
}

func TestBatchedPromptsStream(t *testing.T) {
	url := StartTest(t, Options{})
	resp := postJSON(t, url+"/v1/completions", `{"prompt":[[1,2],[3,4,5]],"n":2,"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`)
	res := readStream(t, resp.Body)
	perIndex := map[int]int{}
	for _, c := range res.chunks {
		for _, ch := range c.Choices {
			perIndex[ch.Index]++
		}
	}
	if len(perIndex) != 4 {
		t.Fatalf("choices seen %v, want indexes 0..3", perIndex)
	}
	for i, n := range perIndex {
		if n != 4 {
			t.Errorf("choice %d got %d tokens, want 4", i, n)
		}
	}
	u := res.chunks[len(res.chunks)-1].Usage
	if u == nil || *u != (usage{PromptTokens: 2*2 + 3*2, CompletionTokens: 16, TotalTokens: 26}) {
		t.Errorf("usage %+v", u)
	}
}

func TestChatStreamingAndNonStreaming(t *testing.T) {
	url := StartTest(t, Options{})
	resp := postJSON(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Hello"}],"max_completion_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`)
	res := readStream(t, resp.Body)
	if len(res.chunks) != 4 {
		t.Fatalf("got %d chunks, want 3 tokens + usage", len(res.chunks))
	}
	for i, c := range res.chunks[:3] {
		if c.Object != "chat.completion.chunk" || c.Choices[0].Delta.Content != fillerToken {
			t.Errorf("chunk %d = %+v", i, c)
		}
		if (i == 0) != (c.Choices[0].Delta.Role == "assistant") {
			t.Errorf("chunk %d role %q: want role only on the first chunk", i, c.Choices[0].Delta.Role)
		}
	}
	if u := res.chunks[3].Usage; u == nil || *u != (usage{PromptTokens: 2, CompletionTokens: 3, TotalTokens: 5}) {
		t.Errorf("usage %+v", u)
	}

	resp = postJSON(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Hello"}],"max_tokens":2}`)
	var body completionResponseBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Object != "chat.completion" || len(body.Choices) != 1 || body.Choices[0].Message == nil ||
		body.Choices[0].Message.Content != " tok tok" || body.Choices[0].FinishReason != "length" ||
		body.Usage != (usage{PromptTokens: 2, CompletionTokens: 2, TotalTokens: 4}) {
		t.Errorf("response %+v", body)
	}
}

func TestNonStreamingCompletion(t *testing.T) {
	url := StartTest(t, Options{})
	resp := postJSON(t, url+"/v1/completions", `{"prompt":["abcdefgh","x"],"max_tokens":3}`)
	var body struct {
		Object  string `json:"object"`
		Choices []struct {
			Index        int    `json:"index"`
			Text         string `json:"text"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Object != "text_completion" || len(body.Choices) != 2 || body.Choices[1].Index != 1 ||
		body.Choices[0].Text != " tok tok tok" || body.Usage != (usage{PromptTokens: 3, CompletionTokens: 6, TotalTokens: 9}) {
		t.Errorf("response %+v", body)
	}
}

func TestErrorsAndModels(t *testing.T) {
	url := StartTest(t, Options{Model: "served"})
	tests := []struct {
		path, body string
		want       int
	}{
		{"/v1/completions", `{"model":"other","prompt":"x"}`, 404},
		{"/v1/completions", `{"prompt":[]}`, 400},
		{"/v1/chat/completions", `{"messages":"hi"}`, 400},
		{"/v1/completions", `{"model":"served","prompt":"x","max_tokens":1}`, 200},
	}
	for _, tt := range tests {
		resp := postJSON(t, url+tt.path, tt.body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: status %d (%s), want %d", tt.path, tt.body, resp.StatusCode, b, tt.want)
		}
		if tt.want != 200 && !bytes.Contains(b, []byte(`"error"`)) {
			t.Errorf("%s: error body %s lacks an error object", tt.path, b)
		}
	}
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var models struct {
		Data []modelCard `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil {
		t.Fatal(err)
	}
	if len(models.Data) != 1 || models.Data[0].ID != "served" {
		t.Errorf("models %+v", models)
	}
	if resp, err := http.Get(url + "/health"); err != nil || resp.StatusCode != 200 {
		t.Errorf("standalone /health: %v %v", resp, err)
	}
}

func TestAnyModel(t *testing.T) {
	url := StartTest(t, Options{AnyModel: true})
	if resp := postJSON(t, url+"/v1/completions", `{"model":"whatever","prompt":"x","max_tokens":1}`); resp.StatusCode != 200 {
		t.Errorf("status %d with AnyModel", resp.StatusCode)
	}
}

// TestTimingSchedule checks the schedule's shape with latencies large enough
// to measure but loose bounds, so a busy CI machine cannot make it flaky:
// tokens are never early, and the stream as a whole is not late by more than
// a generous margin.
func TestTimingSchedule(t *testing.T) {
	const ttft, itl, n = 60 * time.Millisecond, 15 * time.Millisecond, 8
	url := StartTest(t, Options{TTFT: ttft, ITL: itl})
	start := time.Now()
	resp := postJSON(t, url+"/v1/completions", `{"prompt":"x","max_tokens":8,"stream":true,"ignore_eos":true}`)
	res := readStream(t, resp.Body)
	if len(res.arrival) != n {
		t.Fatalf("%d chunks", len(res.arrival))
	}
	for i, at := range res.arrival {
		if due := ttft + time.Duration(i)*itl; at.Sub(start) < due {
			t.Errorf("token %d arrived after %s, before its due time %s", i, at.Sub(start), due)
		}
	}
	if total := res.arrival[n-1].Sub(start); total > ttft+(n-1)*itl+2*time.Second {
		t.Errorf("stream took %s", total)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestSentStamps: every token chunk, completions and chat, ends with
// mock_sent_unix_ns, an integer that decodes back exactly, taken when the
// chunk was written: not before its due time, not after the client read
// it, never decreasing; the usage chunk carries none.
func TestSentStamps(t *testing.T) {
	const ttft, itl, n = 20 * time.Millisecond, 5 * time.Millisecond, 6
	url := StartTest(t, Options{Model: "m", TTFT: ttft, ITL: itl})
	for _, tc := range []struct{ path, body string }{
		{"/v1/completions", `{"prompt":"x","max_tokens":6,"stream":true,"ignore_eos":true,"stream_options":{"include_usage":true}}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":6,"stream":true,"ignore_eos":true,"stream_options":{"include_usage":true}}`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			start := time.Now()
			resp := postJSON(t, url+tc.path, tc.body)
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			read := time.Now()
			res := readStream(t, bytes.NewReader(raw))
			if len(res.chunks) != n+1 {
				t.Fatalf("%d chunks, want %d tokens and usage", len(res.chunks), n)
			}
			var prev int64
			for i, c := range res.chunks[:n] {
				if c.Sent == nil {
					t.Fatalf("token chunk %d has no %s", i, SentStampKey)
				}
				sent := time.Unix(0, *c.Sent)
				if due := start.Add(ttft + time.Duration(i)*itl); sent.Before(due) {
					t.Errorf("chunk %d stamped %s after the request, before its due time %s", i, sent.Sub(start), due.Sub(start))
				}
				if sent.After(read) || *c.Sent < prev {
					t.Errorf("chunk %d stamped %d: after the read (%d) or before chunk %d's %d", i, *c.Sent, read.UnixNano(), i-1, prev)
				}
				prev = *c.Sent
			}
			if res.chunks[n].Sent != nil || res.chunks[n].Usage == nil {
				t.Errorf("usage chunk %+v: stamped, or without usage", res.chunks[n])
			}
			// The member is the chunk's last and its text is the integer.
			first := raw[:bytes.Index(raw, []byte("\n\n"))]
			want := fmt.Sprintf(`,"%s":%d}`, SentStampKey, *res.chunks[0].Sent)
			if !bytes.HasSuffix(first, []byte(want)) {
				t.Errorf("first chunk %s does not end with %s", first, want)
			}
		})
	}
}
