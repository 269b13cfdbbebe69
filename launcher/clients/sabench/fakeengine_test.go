package sabench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEngine streams OpenAI completions like vLLM does: one chunk per token
// at request arrival + TTFT + k·ITL (absolute deadlines, so server-side
// lateness never accumulates), then a usage chunk with empty choices, then
// [DONE].
type fakeEngine struct {
	ttft, itl      time.Duration
	tokensPerChunk int  // > 1 packs several tokens into one chunk
	omitUsage      bool // no usage chunk
	noChoices      bool // only the usage chunk
	badChunk       bool // a chunk that is not JSON
	status         int  // answer every request with this status instead

	requests atomic.Int64
	mu       sync.Mutex
	bodies   [][]byte
}

func (f *fakeEngine) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

type fakeRequest struct {
	Model     string  `json:"model"`
	Prompt    []int64 `json:"prompt"`
	MaxTokens int     `json:"max_tokens"`
	Stream    bool    `json:"stream"`
	IgnoreEOS bool    `json:"ignore_eos"`
}

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	f.requests.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	if f.status != 0 {
		http.Error(w, `{"error":"overloaded"}`, f.status)
		return
	}
	var req fakeRequest
	if err := json.Unmarshal(body, &req); err != nil || r.URL.Path != "/v1/completions" || !req.Stream {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	per := max(f.tokensPerChunk, 1)
	chunks := (req.MaxTokens + per - 1) / per
	if f.noChoices {
		chunks = 0
	}
	for k := range chunks {
		due := arrived.Add(f.ttft + time.Duration(k)*f.itl)
		select {
		case <-time.After(time.Until(due)):
		case <-r.Context().Done():
			return
		}
		if f.badChunk && k == 1 {
			fmt.Fprint(w, "data: {not json\n\n")
		} else {
			fmt.Fprintf(w, "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":%q,\"choices\":[{\"index\":0,\"text\":\" t%d\",\"logprobs\":null,\"finish_reason\":null}]}\n\n", req.Model, k)
		}
		flusher.Flush()
	}
	if !f.omitUsage {
		fmt.Fprintf(w, "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n",
			req.Model, len(req.Prompt), req.MaxTokens, len(req.Prompt)+req.MaxTokens)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
}

func (f *fakeEngine) body(i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

func mkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }
