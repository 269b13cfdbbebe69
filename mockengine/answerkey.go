package mockengine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// AnswerEntry is one line of an answer-key file:
//
//	{"question": "<gsm8k question text>", "completion": "<text to return>"}
type AnswerEntry struct {
	Question   string `json:"question"`
	Completion string `json:"completion"`
}

// AnswerKey maps a question (trimmed) to the completion the mock returns.
type AnswerKey struct {
	byQuestion map[string]string
}

// NewAnswerKey builds a key from entries; a later entry for the same
// question replaces an earlier one.
func NewAnswerKey(entries []AnswerEntry) *AnswerKey {
	k := &AnswerKey{byQuestion: make(map[string]string, len(entries))}
	for _, e := range entries {
		k.byQuestion[strings.TrimSpace(e.Question)] = e.Completion
	}
	return k
}

// Len is the number of distinct questions.
func (k *AnswerKey) Len() int { return len(k.byQuestion) }

// Lookup returns the completion for a question (compared after trimming).
func (k *AnswerKey) Lookup(question string) (string, bool) {
	c, ok := k.byQuestion[strings.TrimSpace(question)]
	return c, ok
}

// ReadAnswerKey parses answer-key JSONL: one AnswerEntry per line; blank
// lines are skipped; any other line that is not such an object is an error
// naming the line.
func ReadAnswerKey(r io.Reader) (*AnswerKey, error) {
	var entries []AnswerEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var e AnswerEntry
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("answer key line %d: %w", line, err)
		}
		if strings.TrimSpace(e.Question) == "" {
			return nil, fmt.Errorf("answer key line %d: empty question", line)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading answer key: %w", err)
	}
	return NewAnswerKey(entries), nil
}

// LoadAnswerKey reads an answer-key file (see ReadAnswerKey).
func LoadAnswerKey(path string) (*AnswerKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening answer key: %w", err)
	}
	defer f.Close()
	k, err := ReadAnswerKey(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ExtractQuestion returns the question a gsm8k prompt asks: the text after
// the last "Question:" up to the next "\nAnswer:" (or the end), trimmed.
// Few-shot prompts repeat "Question: ...\nAnswer: ..." for the examples, so
// the last one is the real question. ok is false when the prompt has no
// "Question:".
func ExtractQuestion(promptText string) (question string, ok bool) {
	i := strings.LastIndex(promptText, "Question:")
	if i < 0 {
		return "", false
	}
	rest := promptText[i+len("Question:"):]
	if j := strings.Index(rest, "\nAnswer:"); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest), true
}

// answerFor picks the text the mock returns for a prompt when a key is
// loaded. The extracted question is looked up as is first; failing that, with
// its trailing lines dropped one at a time, because prompt templates append
// instructions after the question (InferenceX's gsm8k task puts "End your
// response with the answer on the last line, ..." between the question and
// "Answer:").
func (k *AnswerKey) answerFor(promptText, fallback string) string {
	q, ok := ExtractQuestion(promptText)
	if !ok {
		return fallback
	}
	for {
		if c, ok := k.Lookup(q); ok {
			return c
		}
		i := strings.LastIndexByte(q, '\n')
		if i < 0 {
			return fallback
		}
		q = q[:i]
	}
}
