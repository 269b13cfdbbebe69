package gsm8k

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// AnswerEntry is one line of a mock-engine answer key (the format
// mockengine reads): the exact question text and the completion the
// mock returns for it.
type AnswerEntry struct {
	Question   string `json:"question"`
	Completion string `json:"completion"`
}

// MakeAnswerKey returns one entry per document, in document order, such that
// exactly round(accuracy·n) completions are correct under both the
// strict-match and flexible-extract filters and the rest are wrong under
// both. A correct completion is the document's own worked solution, ending in
// "#### <answer>"; a wrong one keeps the reasoning but ends in a different
// number. Which documents are answered correctly is
// random.Random(seed).sample(range(n), k), so it is reproducible and can be
// checked from Python.
func MakeAnswerKey(docs []Doc, accuracy float64, seed int64) ([]AnswerEntry, error) {
	if math.IsNaN(accuracy) || accuracy < 0 || accuracy > 1 {
		return nil, fmt.Errorf("answer key accuracy %v is not in [0, 1]", accuracy)
	}
	n := len(docs)
	k := int(math.Round(accuracy * float64(n)))
	correctIdx, err := NewPyRandom(seed).SampleIndices(n, k)
	if err != nil {
		return nil, err
	}
	correct := make([]bool, n)
	for _, i := range correctIdx {
		correct[i] = true
	}
	entries := make([]AnswerEntry, n)
	for i, d := range docs {
		reasoning, answer, err := splitAnswer(d.Answer)
		if err != nil {
			return nil, fmt.Errorf("answer key document %d: %w", i, err)
		}
		final := answer
		if !correct[i] {
			final = wrongAnswer(answer)
		}
		completion := "#### " + final
		if reasoning != "" {
			completion = reasoning + "\n" + completion
		}
		entries[i] = AnswerEntry{Question: d.Question, Completion: completion}
	}
	return entries, nil
}

// splitAnswer separates a gold answer into its worked solution and the final
// answer after the last "#### ".
func splitAnswer(gold string) (reasoning, answer string, err error) {
	i := strings.LastIndex(gold, "#### ")
	if i < 0 {
		return "", "", fmt.Errorf("gold answer has no \"#### \" line")
	}
	answer = strings.TrimSpace(gold[i+len("#### "):])
	if answer == "" {
		return "", "", fmt.Errorf("gold answer is empty after \"#### \"")
	}
	return strings.TrimRight(gold[:i], "\n "), answer, nil
}

// wrongAnswer is a different number: the integer plus one when the answer
// is an integer (commas allowed), otherwise the answer with a digit appended.
// Either way it normalises differently and both filters extract it whole.
func wrongAnswer(answer string) string {
	if v, err := strconv.ParseInt(strings.ReplaceAll(answer, ",", ""), 10, 64); err == nil {
		return strconv.FormatInt(v+1, 10)
	}
	return answer + "1"
}

// WriteAnswerKey writes entries as JSONL, atomically.
func WriteAnswerKey(path string, entries []AnswerEntry) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("encoding answer key: %w", err)
		}
	}
	return atomicfile.WriteFile(path, buf.Bytes(), overwrite)
}

// AnswerKeyOptions are `mock-answer-key`'s: the GSM8K directory ("" is
// the built-in copy), the accuracy and seed of MakeAnswerKey, the key file
// to write, and where to say so.
type AnswerKeyOptions struct {
	Dir      string
	Accuracy float64
	Seed     int64
	Out      string
	Log      io.Writer
}

// AnswerKeyCommand is `mock-answer-key`: it writes an answer key of the
// test split so a mock eval scores o.Accuracy exactly. Unreadable data or
// an accuracy outside [0, 1] is bad input (exit 2).
func AnswerKeyCommand(o AnswerKeyOptions) error {
	test, _, err := LoadDir(o.Dir)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	key, err := MakeAnswerKey(test, o.Accuracy, o.Seed)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	if err := WriteAnswerKey(o.Out, key); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "wrote %d answers to %s\n", len(key), o.Out)
	return nil
}
