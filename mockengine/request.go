package mockengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ApproxTokens is the prompt-token count the mock reports for text: one
// token per 4 bytes of UTF-8, rounded up (0 for ""). Token-id prompts are
// counted exactly (one per id). Clients that want their input_lens to agree
// with the server's usage can call this.
func ApproxTokens(text string) int { return (len(text) + 3) / 4 }

// endpoint tells the two OpenAI generation APIs apart; they differ only in
// request parsing and chunk shape.
type endpoint int

const (
	endpointCompletions endpoint = iota
	endpointChat
)

// genRequest is a completions or chat request reduced to what the mock needs.
type genRequest struct {
	endpoint     endpoint
	model        string
	prompts      []prompt // one per prompt of a batched completions request; one for chat
	n            int      // choices per prompt
	maxTokens    int
	stream       bool
	includeUsage bool
	ignoreEOS    bool
	stop         []string
}

// prompt is one input: its text (empty for token ids) and its token count.
type prompt struct {
	text   string
	tokens int
}

// requestError is a client error, answered with 400.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &requestError{msg: fmt.Sprintf(format, args...)}
}

// commonFields are the request fields both APIs share. Unknown fields
// (best_of, logprobs, top_p, ...) are accepted and ignored; temperature and
// seed are parsed only so that a wrong type is refused like a real server would.
type commonFields struct {
	Model         string          `json:"model"`
	MaxTokens     *int            `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	IgnoreEOS     bool            `json:"ignore_eos"`
	Temperature   *float64        `json:"temperature"`
	Seed          *int64          `json:"seed"`
	Stop          json.RawMessage `json:"stop"`
	N             *int            `json:"n"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type completionBody struct {
	commonFields
	Prompt json.RawMessage `json:"prompt"`
}

type chatBody struct {
	commonFields
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	Messages            []chatMessage `json:"messages"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// parseCompletionRequest parses a POST /v1/completions body.
func parseCompletionRequest(body []byte, defaultMax int) (*genRequest, error) {
	var b completionBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, badRequest("invalid JSON body: %v", err)
	}
	prompts, err := parsePrompt(b.Prompt)
	if err != nil {
		return nil, err
	}
	req := &genRequest{endpoint: endpointCompletions, prompts: prompts}
	return req, req.fillCommon(&b.commonFields, defaultMax)
}

// parseChatRequest parses a POST /v1/chat/completions body. The prompt text
// is the content of the last user message (what the answer key is matched
// against); prompt tokens are counted over every message's content.
func parseChatRequest(body []byte, defaultMax int) (*genRequest, error) {
	var b chatBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, badRequest("invalid JSON body: %v", err)
	}
	if len(b.Messages) == 0 {
		return nil, badRequest("messages must be a non-empty list")
	}
	var p prompt
	for i, m := range b.Messages {
		text, err := messageText(m.Content)
		if err != nil {
			return nil, badRequest("messages[%d].content: %v", i, err)
		}
		p.tokens += ApproxTokens(text)
		if m.Role == "user" {
			p.text = text
		}
	}
	req := &genRequest{endpoint: endpointChat, prompts: []prompt{p}}
	// max_completion_tokens is the newer name; it wins when both are given, as in vLLM.
	if b.MaxCompletionTokens != nil {
		b.MaxTokens = b.MaxCompletionTokens
	}
	return req, req.fillCommon(&b.commonFields, defaultMax)
}

func (req *genRequest) fillCommon(c *commonFields, defaultMax int) error {
	req.model = c.Model
	req.maxTokens = defaultMax
	if c.MaxTokens != nil {
		if *c.MaxTokens < 0 {
			return badRequest("max_tokens must be at least 0, got %d", *c.MaxTokens)
		}
		req.maxTokens = *c.MaxTokens
	}
	req.n = 1
	if c.N != nil {
		if *c.N < 1 || *c.N > 128 {
			return badRequest("n must be between 1 and 128, got %d", *c.N)
		}
		req.n = *c.N
	}
	req.stream = c.Stream
	req.includeUsage = c.Stream && c.StreamOptions != nil && c.StreamOptions.IncludeUsage
	req.ignoreEOS = c.IgnoreEOS
	stop, err := parseStop(c.Stop)
	if err != nil {
		return err
	}
	req.stop = stop
	return nil
}

// parsePrompt accepts every prompt form of the completions API: a string, a
// list of strings, a list of token ids, or a list of token-id lists.
func parsePrompt(raw json.RawMessage) ([]prompt, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, badRequest("prompt is required")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badRequest("prompt: %v", err)
		}
		return []prompt{{text: s, tokens: ApproxTokens(s)}}, nil
	case '[':
	default:
		return nil, badRequest("prompt must be a string, a list of strings, a list of token ids or a list of token-id lists")
	}
	if prompts, ok := scanTokenIDPrompts(raw); ok {
		return prompts, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("prompt: %v", err)
	}
	if len(items) == 0 {
		return nil, badRequest("prompt must not be empty")
	}
	first := bytes.TrimSpace(items[0])
	switch {
	case len(first) > 0 && first[0] == '"':
		prompts := make([]prompt, len(items))
		for i, it := range items {
			var s string
			if err := json.Unmarshal(it, &s); err != nil {
				return nil, badRequest("prompt[%d]: want a string like prompt[0]: %v", i, err)
			}
			prompts[i] = prompt{text: s, tokens: ApproxTokens(s)}
		}
		return prompts, nil
	case len(first) > 0 && first[0] == '[':
		prompts := make([]prompt, len(items))
		for i, it := range items {
			n, err := countTokenIDs(it)
			if err != nil {
				return nil, badRequest("prompt[%d]: %v", i, err)
			}
			prompts[i] = prompt{tokens: n}
		}
		return prompts, nil
	default:
		n, err := countTokenIDs(raw)
		if err != nil {
			return nil, badRequest("prompt: %v", err)
		}
		return []prompt{{tokens: n}}, nil
	}
}

// scanTokenIDPrompts is the fast path for what SA-Bench sends: a list of
// non-negative integers, or a list of such lists. Decoding 8k token ids
// through encoding/json's reflection costs more than streaming the answer,
// so they are counted by a byte scan. ok is false for anything else
// (strings, signs, fractions, exponents, empty lists), which then takes the
// general path and its error messages.
func scanTokenIDPrompts(raw []byte) (prompts []prompt, ok bool) {
	i := skipSpace(raw, 1) // raw[0] == '['
	if i < len(raw) && raw[i] == '[' {
		for {
			n, next, ok := scanIDList(raw, i)
			if !ok {
				return nil, false
			}
			prompts = append(prompts, prompt{tokens: n})
			i = skipSpace(raw, next)
			if i >= len(raw) {
				return nil, false
			}
			if raw[i] == ']' {
				return prompts, skipSpace(raw, i+1) == len(raw)
			}
			if raw[i] != ',' {
				return nil, false
			}
			i = skipSpace(raw, i+1)
		}
	}
	n, next, ok := scanIDList(raw, 0)
	if !ok || skipSpace(raw, next) != len(raw) {
		return nil, false
	}
	return []prompt{{tokens: n}}, true
}

// scanIDList scans a non-empty list of non-negative integers starting at
// raw[i] == '[' and returns its length and the index after its ']'.
func scanIDList(raw []byte, i int) (count, next int, ok bool) {
	if i >= len(raw) || raw[i] != '[' {
		return 0, 0, false
	}
	i = skipSpace(raw, i+1)
	for {
		start := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		if i == start || i-start > 18 || (raw[start] == '0' && i-start > 1) {
			return 0, 0, false
		}
		count++
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return 0, 0, false
		}
		switch raw[i] {
		case ']':
			return count, i + 1, true
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return 0, 0, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// countTokenIDs checks that raw is a non-empty list of non-negative integers
// and returns its length.
func countTokenIDs(raw json.RawMessage) (int, error) {
	var ids []int64
	if err := json.Unmarshal(raw, &ids); err != nil {
		return 0, fmt.Errorf("want a list of token ids: %w", err)
	}
	if len(ids) == 0 {
		return 0, errors.New("token-id list must not be empty")
	}
	for i, id := range ids {
		if id < 0 {
			return 0, fmt.Errorf("token id %d at position %d is negative", id, i)
		}
	}
	return len(ids), nil
}

// parseStop accepts null, a string or a list of strings.
func parseStop(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badRequest("stop: %v", err)
		}
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequest("stop must be a string or a list of strings: %v", err)
	}
	return list, nil
}

// messageText returns a chat message's text: a string content as is, or the
// text parts of a content list joined with newlines (null → "").
func messageText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of content parts")
	}
	var buf bytes.Buffer
	for _, p := range parts {
		if p.Type != "text" {
			continue
		}
		if buf.Len() > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString(p.Text)
	}
	return buf.String(), nil
}
