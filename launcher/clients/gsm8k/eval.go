package gsm8k

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Defaults of lm-eval's local-chat-completions as InferenceX configures it
// (model_args max_retries=5,timeout=1800; TemplateAPI seed 1234).
const (
	DefaultMaxRetries     = 5
	DefaultRequestTimeout = 1800 * time.Second
	DefaultAPIKey         = "EMPTY"
	DefaultRequestSeed    = 1234
	ChatCompletionsPath   = "/v1/chat/completions"
)

// Options configure a native run.
type Options struct {
	// BaseURL is the frontend, e.g. "http://10.0.0.1:8000"; requests go to
	// BaseURL + /v1/chat/completions. A URL already ending in that path is
	// used as is.
	BaseURL string
	Model   string // served model name, the "model" field of every request
	APIKey  string // sent as a bearer token; DefaultAPIKey when empty

	Concurrency int // requests in flight (lm-eval num_concurrent); at least 1
	MaxTokens   int // gen_kwargs max_tokens; see MaxOutputTokens
	Limit       int // evaluate only the first Limit test documents; 0 = all

	// ContextLength is only recorded (model_args max_length); 0 omits it.
	ContextLength int

	Task Task // InferenceXTask() when zero

	Client         *http.Client                    // a pooled client sized to Concurrency when nil
	MaxRetries     int                             // attempts per request; DefaultMaxRetries when 0
	RequestTimeout time.Duration                   // per attempt; DefaultRequestTimeout when 0
	RetryWait      func(attempt int) time.Duration // pause after failed attempt n (1-based)

	// Progress, when set, is called after every finished document, from the
	// worker goroutines (so it must be safe for concurrent use).
	Progress func(done, total int)
}

// ChatRequest is the body lm-eval's LocalChatCompletion._create_payload sends,
// in its field order: the task's generation_kwargs merged with --gen_kwargs,
// do_sample dropped, until cut to four stop strings, the remaining kwargs
// (top_p) appended.
type ChatRequest struct {
	Messages    []Message `json:"messages"`
	Model       string    `json:"model"`
	MaxTokens   int       `json:"max_tokens"`
	Temperature int       `json:"temperature"`
	Stop        []string  `json:"stop"`
	Seed        int       `json:"seed"`
	TopP        int       `json:"top_p"`
}

// EncodeRequest is the request body as sent: JSON without HTML escaping, so
// stop strings like "</s>" read as written (Python's json does not escape them).
func EncodeRequest(req ChatRequest) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

type chatResponse struct {
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"message"`
	} `json:"choices"`
}

// Sample is one evaluated document, everything --log_samples records.
type Sample struct {
	DocID    int
	Doc      Doc
	Target   string
	Request  ChatRequest
	Response string
	// Filtered and ExactMatch are indexed like Filters(): strict, flexible.
	Filtered   [2]string
	ExactMatch [2]float64
}

// Report is the outcome of a native run, ready to be written in lm-eval's
// shapes by Write.
type Report struct {
	Task          Task
	Model         string
	Endpoint      string
	APIKey        string
	Concurrency   int
	MaxTokens     int
	ContextLength int
	Limit         int
	Original      int // documents in the test split
	Samples       []Sample
	Start, End    time.Time
}

// Run evaluates the test documents against an OpenAI-compatible chat
// endpoint. Like lm-eval it fails as a whole when a request still fails after
// its retries; ctx cancels everything in flight.
func Run(ctx context.Context, opts Options, test, train []Doc) (*Report, error) {
	if opts.Task.Name == "" {
		opts.Task = InferenceXTask()
	}
	ownClient := opts.Client == nil
	if err := validateOptions(&opts, test, train); err != nil {
		return nil, err
	}
	if ownClient {
		defer opts.Client.CloseIdleConnections()
	}
	scorer, err := NewScorer(opts.Task)
	if err != nil {
		return nil, err
	}
	n := len(test)
	if opts.Limit > 0 && opts.Limit < n {
		n = opts.Limit
	}
	pl, err := FewshotPlan(n, len(train), opts.Task.NumFewshot, opts.Task.FewshotSeed)
	if err != nil {
		return nil, err
	}
	endpoint := chatEndpoint(opts.BaseURL)
	rep := &Report{
		Task: opts.Task, Model: opts.Model, Endpoint: endpoint, APIKey: opts.APIKey,
		Concurrency: opts.Concurrency, MaxTokens: opts.MaxTokens, ContextLength: opts.ContextLength,
		Limit: opts.Limit, Original: len(test), Samples: make([]Sample, n), Start: time.Now(),
	}
	for i := range rep.Samples {
		shots := make([]Doc, len(pl[i]))
		for j, idx := range pl[i] {
			shots[j] = train[idx]
		}
		rep.Samples[i] = Sample{
			DocID:  i,
			Doc:    test[i],
			Target: opts.Task.Target(test[i]),
			Request: ChatRequest{
				Messages:  opts.Task.Messages(test[i], shots),
				Model:     opts.Model,
				MaxTokens: opts.MaxTokens,
				Stop:      opts.Task.StopSequences(),
				Seed:      DefaultRequestSeed,
				TopP:      1,
			},
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		done     int
	)
	c := &client{opts: opts, endpoint: endpoint}
	for w := 0; w < min(opts.Concurrency, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s := &rep.Samples[i]
				resp, err := c.complete(ctx, s.Request)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("gsm8k document %d: %w", i, err)
						cancel()
					}
					mu.Unlock()
					continue
				}
				done++
				d := done
				mu.Unlock()
				s.Response = resp
				for f, name := range Filters() {
					s.Filtered[f] = scorer.Filter(name, resp)
					s.ExactMatch[f] = scorer.ExactMatch(s.Filtered[f], s.Target)
				}
				if opts.Progress != nil {
					opts.Progress(d, n)
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	rep.End = time.Now()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gsm8k eval: %w", err)
	}
	return rep, nil
}

func validateOptions(opts *Options, test, train []Doc) error {
	var problems []string
	if opts.BaseURL == "" {
		problems = append(problems, "base URL is empty")
	}
	if opts.Model == "" {
		problems = append(problems, "model name is empty")
	}
	if opts.Concurrency < 1 {
		problems = append(problems, fmt.Sprintf("concurrency %d < 1", opts.Concurrency))
	}
	if opts.MaxTokens < 1 {
		problems = append(problems, fmt.Sprintf("max tokens %d < 1", opts.MaxTokens))
	}
	if opts.Limit < 0 {
		problems = append(problems, fmt.Sprintf("limit %d < 0", opts.Limit))
	}
	if len(test) == 0 {
		problems = append(problems, "no test documents")
	}
	if len(train) < opts.Task.NumFewshot {
		problems = append(problems, fmt.Sprintf("%d train documents for %d shots", len(train), opts.Task.NumFewshot))
	}
	if len(problems) > 0 {
		return fmt.Errorf("gsm8k options: %s", strings.Join(problems, "; "))
	}
	if opts.APIKey == "" {
		opts.APIKey = DefaultAPIKey
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.RetryWait == nil {
		opts.RetryWait = TenacityWait
	}
	if opts.Client == nil {
		// Keep one idle connection per worker: the default transport keeps two
		// per host and would reopen connections for every other request.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = opts.Concurrency
		tr.MaxIdleConnsPerHost = opts.Concurrency
		opts.Client = &http.Client{Transport: tr}
	}
	return nil
}

// TenacityWait is lm-eval's retry pause, tenacity's
// wait_exponential(multiplier=0.5, min=1, max=10): 1s, 1s, 2s, 4s, ... 10s.
func TenacityWait(attempt int) time.Duration {
	wait := 0.5 * float64(uint64(1)<<min(max(attempt-1, 0), 16))
	wait = min(max(wait, 1), 10)
	return time.Duration(wait * float64(time.Second))
}

func chatEndpoint(base string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, ChatCompletionsPath) {
		return base
	}
	return base + ChatCompletionsPath
}

type client struct {
	opts     Options
	endpoint string
}

// complete posts one request with lm-eval's retry policy and returns the
// generated text as InferenceX's patched parse_generations reads it: the
// message content, or reasoning_content when the content is empty.
func (c *client) complete(ctx context.Context, req ChatRequest) (string, error) {
	body, err := EncodeRequest(req)
	if err != nil {
		return "", err
	}
	var lastErr error
	for attempt := 1; attempt <= c.opts.MaxRetries; attempt++ {
		text, err := c.post(ctx, body)
		if err == nil {
			return text, nil
		}
		lastErr = err
		if ctx.Err() != nil || attempt == c.opts.MaxRetries {
			break
		}
		t := time.NewTimer(c.opts.RetryWait(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
	return "", fmt.Errorf("after %d attempts: %w", c.opts.MaxRetries, lastErr)
}

func (c *client) post(ctx context.Context, body []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	resp, err := c.opts.Client.Do(hreq)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return "", fmt.Errorf("reading response: %w", err)
	}
	if len(raw) > maxResponse {
		return "", fmt.Errorf("POST %s: response larger than the %d MiB an answer may have", c.endpoint, maxResponse>>20)
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("POST %s: %s: %s", c.endpoint, resp.Status, snippet(raw))
	}
	var out chatResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("decoding response: %w: %s", err, snippet(raw))
	}
	if len(out.Choices) == 0 {
		return "", errors.New("response has no choices")
	}
	msg := out.Choices[0].Message
	if msg.Content != nil && *msg.Content != "" {
		return *msg.Content, nil
	}
	if msg.ReasoningContent != nil {
		return *msg.ReasoningContent, nil
	}
	return "", nil
}

func snippet(b []byte) string {
	const max = 300
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// maxResponse bounds one chat completion's body: an answer is a few KB.
const maxResponse = 16 << 20
