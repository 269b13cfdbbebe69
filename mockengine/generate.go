package mockengine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// quotedFiller is fillerToken as a JSON string, encoded once.
var quotedFiller = mustQuote(fillerToken)

func mustQuote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// choicePlan is what one choice will generate: the answer's pieces (one token
// each) followed by filler tokens up to total.
type choicePlan struct {
	index  int
	pieces []string // raw token texts from an answer
	quoted []string // the same, JSON-encoded
	total  int      // tokens to generate, >= len(pieces) unless truncated by ignore_eos
	finish string   // "length" or "stop"
}

func (c *choicePlan) quotedToken(i int) string {
	if i < len(c.quoted) {
		return c.quoted[i]
	}
	return quotedFiller
}

func (c *choicePlan) text() string {
	var b strings.Builder
	for i := range c.total {
		if i < len(c.pieces) {
			b.WriteString(c.pieces[i])
		} else {
			b.WriteString(fillerToken)
		}
	}
	return b.String()
}

// planChoices decides, before the first token, what every choice generates.
//
// Without an answer key: max_tokens filler tokens, or EOSAfter tokens with
// finish_reason "stop" when that is smaller and ignore_eos is false.
//
// With an answer key: the key's completion for the prompt (or DefaultAnswer),
// cut at the first stop string, split into whitespace-led words, one token
// each. Without ignore_eos the whole text is returned even when max_tokens
// is smaller, so a gsm8k score never depends on the client's max_tokens;
// with ignore_eos the count is exactly max_tokens (text truncated or padded
// with filler), as SA-Bench expects.
func (s *Server) planChoices(req *genRequest) []*choicePlan {
	plans := make([]*choicePlan, 0, len(req.prompts)*req.n)
	for _, p := range req.prompts {
		for range req.n {
			c := &choicePlan{index: len(plans)}
			if s.opts.AnswerKey != nil {
				answer := s.opts.AnswerKey.answerFor(p.text, s.opts.DefaultAnswer)
				c.pieces = splitPieces(cutAtStop(answer, req.stop))
				c.total, c.finish = len(c.pieces), "stop"
				if req.ignoreEOS {
					if len(c.pieces) > req.maxTokens {
						c.pieces = c.pieces[:req.maxTokens]
					}
					c.total, c.finish = req.maxTokens, "length"
				}
				c.quoted = make([]string, len(c.pieces))
				for i, piece := range c.pieces {
					c.quoted[i] = mustQuote(piece)
				}
			} else {
				c.total, c.finish = req.maxTokens, "length"
				if !req.ignoreEOS && s.opts.EOSAfter > 0 && s.opts.EOSAfter < req.maxTokens {
					c.total, c.finish = s.opts.EOSAfter, "stop"
				}
			}
			plans = append(plans, c)
		}
	}
	return plans
}

// cutAtStop truncates text before the earliest occurrence of any stop string.
func cutAtStop(text string, stop []string) string {
	cut := len(text)
	for _, s := range stop {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && i < cut {
			cut = i
		}
	}
	return text[:cut]
}

// splitPieces splits text into tokens that concatenate back to it exactly:
// each piece is a run of whitespace followed by a run of non-whitespace
// (" sold", "\n####"); trailing whitespace joins the last piece.
func splitPieces(text string) []string {
	var pieces []string
	start, inWord := 0, false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if space && inWord {
			pieces = append(pieces, text[start:i])
			start = i
		}
		inWord = !space
	}
	if start < len(text) {
		if inWord || len(pieces) == 0 {
			pieces = append(pieces, text[start:])
		} else {
			pieces[len(pieces)-1] += text[start:]
		}
	}
	return pieces
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (req *genRequest) usage(plans []*choicePlan) usage {
	var u usage
	for _, p := range req.prompts {
		u.PromptTokens += p.tokens * req.n
	}
	for _, c := range plans {
		u.CompletionTokens += c.total
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func newID(prefix string) string {
	return prefix + strconv.FormatUint(rand.Uint64(), 16) //nolint:gosec // a mock response id, not a secret
}

// chunkEncoder renders SSE chunks by appending bytes: at 2048 streams a
// json.Marshal per token would cost more than the rest of the server.
type chunkEncoder struct {
	head []byte // `data: {"id":...,"model":...,"choices":[`
	chat bool
}

func newChunkEncoder(req *genRequest, id string, created int64, model string) *chunkEncoder {
	object := "text_completion"
	if req.endpoint == endpointChat {
		object = "chat.completion.chunk"
	}
	head := fmt.Appendf(nil, `data: {"id":%q,"object":%q,"created":%d,"model":%s,"choices":[`,
		id, object, created, mustQuote(model))
	return &chunkEncoder{head: head, chat: req.endpoint == endpointChat}
}

// SentStampKey is the member every streamed token chunk ends with: the
// Unix time in nanoseconds at which the mock handed the chunk to the
// kernel (taken just before the chunk is encoded and written, at the flush
// that sends it). A client on the same host subtracts it from the time it
// gave the chunk and gets the latency it added itself, apart from the
// mock's own lateness. OpenAI clients ignore members they do not know
// (benchmark_serving.py reads only "choices" and "usage"), so the chunk
// stays a valid completion chunk; an SSE comment line would not be, since
// benchmark_serving.py's completions reader json.loads every non-empty line.
const SentStampKey = "mock_sent_unix_ns"

// appendToken renders one token's chunk, stamped with sent (SentStampKey).
func (e *chunkEncoder) appendToken(dst []byte, index int, quoted string, first bool, finish string, sent int64) []byte {
	dst = append(dst, e.head...)
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if e.chat {
		dst = append(dst, `,"delta":{`...)
		if first {
			dst = append(dst, `"role":"assistant",`...)
		}
		dst = append(dst, `"content":`...)
		dst = append(dst, quoted...)
		dst = append(dst, '}')
	} else {
		dst = append(dst, `,"text":`...)
		dst = append(dst, quoted...)
	}
	dst = append(dst, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendQuote(dst, finish)
	}
	dst = append(dst, `}],"`+SentStampKey+`":`...)
	dst = strconv.AppendInt(dst, sent, 10)
	return append(dst, "}\n\n"...)
}

// appendUsage renders OpenAI's final usage chunk: empty choices plus usage.
func (e *chunkEncoder) appendUsage(dst []byte, u usage) []byte {
	dst = append(dst, e.head...)
	return fmt.Appendf(dst, `],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
		u.PromptTokens, u.CompletionTokens, u.TotalTokens)
}

var sseDone = []byte("data: [DONE]\n\n")

// generate answers a parsed request: token i of every choice is due at
// start + TTFT + i×ITL. Deadlines are computed from start, so a late wake-up
// never shifts later tokens; one timer per request is reused for every wait.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, req *genRequest, start time.Time) {
	plans := s.planChoices(req)
	steps := 0
	for _, c := range plans {
		steps = max(steps, c.total)
	}
	model := req.model
	if model == "" {
		model = s.opts.Model
	}
	prefix := "cmpl-"
	if req.endpoint == endpointChat {
		prefix = "chatcmpl-"
	}
	id := newID(prefix)
	u := req.usage(plans)

	s.running.Add(1)
	defer s.running.Add(-1)
	// SGLang's /slow_down sleeps this long per forward: every token.
	itl := s.opts.ITL + time.Duration(s.forwardSleep.Load())
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	done := r.Context().Done()

	if !req.stream {
		last := start.Add(s.opts.TTFT)
		if steps > 1 {
			last = last.Add(time.Duration(steps-1) * itl)
		}
		if !s.sleepUntil(timer, last, done) {
			return
		}
		s.tokens.Add(int64(u.CompletionTokens))
		writeJSON(w, http.StatusOK, completionResponse(req, id, start.Unix(), model, plans, u))
		return
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := newChunkEncoder(req, id, start.Unix(), model)
	buf := make([]byte, 0, 512)
	written := 0 // steps whose chunks have been sent
	// send writes the chunks of steps [written, upto) in one write and
	// flushes them, stamped with one reading of the clock taken right
	// before: when the server is behind schedule the overdue chunks leave
	// in one syscall, and their stamp is when they left, not when they
	// were due (the client's added latency excludes the mock's lateness).
	// tail goes after them in the same write.
	send := func(upto int, tail func([]byte) []byte) bool {
		sent := time.Now().UnixNano()
		buf = buf[:0]
		n := 0
		for ; written < upto; written++ {
			for _, c := range plans {
				if written >= c.total {
					continue
				}
				finish := ""
				if written == c.total-1 {
					finish = c.finish
				}
				buf = enc.appendToken(buf, c.index, c.quotedToken(written), written == 0, finish, sent)
				n++
			}
		}
		if tail != nil {
			buf = tail(buf)
		}
		if len(buf) == 0 {
			return true
		}
		if _, err := w.Write(buf); err != nil {
			return false
		}
		s.tokens.Add(int64(n))
		return rc.Flush() == nil
	}
	for step := range steps {
		due := start.Add(s.opts.TTFT + time.Duration(step)*itl)
		// Send only before waiting (see send).
		if time.Until(due) > 0 {
			if !send(step, nil) || !s.sleepUntil(timer, due, done) {
				return
			}
		}
	}
	send(steps, func(b []byte) []byte {
		if req.includeUsage {
			b = enc.appendUsage(b, u)
		}
		return append(b, sseDone...)
	})
}

// sleepUntil waits for t on timer; false when the request or server ends first.
func (s *Server) sleepUntil(timer *time.Timer, t time.Time, done <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-done:
	case <-s.stopping:
	}
	return false
}

type completionChoice struct {
	Index        int              `json:"index"`
	Text         *string          `json:"text,omitempty"`
	Message      *responseMessage `json:"message,omitempty"`
	Logprobs     any              `json:"logprobs"`
	FinishReason string           `json:"finish_reason"`
}

type responseMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type completionResponseBody struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   usage              `json:"usage"`
}

func completionResponse(req *genRequest, id string, created int64, model string, plans []*choicePlan, u usage) completionResponseBody {
	body := completionResponseBody{ID: id, Object: "text_completion", Created: created, Model: model, Usage: u}
	if req.endpoint == endpointChat {
		body.Object = "chat.completion"
	}
	for _, c := range plans {
		text := c.text()
		choice := completionChoice{Index: c.index, FinishReason: c.finish}
		if req.endpoint == endpointChat {
			choice.Message = &responseMessage{Role: "assistant", Content: text}
		} else {
			choice.Text = &text
		}
		body.Choices = append(body.Choices, choice)
	}
	return body
}
