package mockengine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

const (
	qJanet = "Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her friends every day with four. She sells the remainder at the farmers' market daily for $2 per fresh duck egg. How much in dollars does she make every day at the farmers' market?"
	qRobe  = "A robe takes 2 bolts of blue fiber and half that much white fiber.  How many bolts in total does it take?"
	aJanet = "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day.\n#### 18"
	aRobe  = "It takes 2/2=1 bolt of white fiber.\n#### 3"
)

// lmEvalPrompt renders InferenceX's gsm8k task (utils/evals/gsm8k.yaml
// doc_to_text) for few-shot examples followed by the question.
func lmEvalPrompt(shots [][2]string, question string) string {
	const instr = "\nEnd your response with the answer on the last line, formatted as: #### [number]\nAnswer:"
	var b strings.Builder
	for _, s := range shots {
		b.WriteString("Question: " + s[0] + instr + " " + s[1] + "\n\n")
	}
	b.WriteString("Question: " + question + instr)
	return b.String()
}

// vllmPrompt renders the vendored vLLM gsm8k_eval.py prompt.
func vllmPrompt(shots [][2]string, question string) string {
	var b strings.Builder
	for _, s := range shots {
		b.WriteString("Question: " + s[0] + "\nAnswer: " + s[1] + "\n\n")
	}
	b.WriteString("Question: " + question + "\nAnswer:")
	return b.String()
}

func TestExtractQuestion(t *testing.T) {
	shots := [][2]string{{"What is 1+1?", "1+1=2\n#### 2"}, {qRobe, aRobe}}
	tests := []struct {
		name, prompt, want string
		ok                 bool
	}{
		{"vllm few-shot", vllmPrompt(shots, qJanet), qJanet, true},
		{"lm-eval few-shot keeps the instruction line", lmEvalPrompt(shots, qJanet), qJanet + "\nEnd your response with the answer on the last line, formatted as: #### [number]", true},
		{"zero-shot without Answer:", "Question:   " + qRobe + "  ", qRobe, true},
		{"no question", "Hello", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ExtractQuestion(tt.prompt)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ExtractQuestion = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestReadAnswerKey(t *testing.T) {
	key, err := ReadAnswerKey(strings.NewReader(
		`{"question": "  ` + qRobe + `\n", "completion": "` + strings.ReplaceAll(aRobe, "\n", `\n`) + `"}` + "\n\n" +
			`{"question": "Q2", "completion": "old"}` + "\n" +
			`{"question": "Q2", "completion": "new"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if key.Len() != 2 {
		t.Errorf("Len = %d, want 2", key.Len())
	}
	if c, ok := key.Lookup(qRobe); !ok || c != aRobe {
		t.Errorf("Lookup(robe) = %q, %v", c, ok)
	}
	if c, _ := key.Lookup(" Q2 "); c != "new" {
		t.Errorf("Lookup(Q2) = %q, want the later entry", c)
	}
	for _, bad := range []string{
		`{"question": "x", "completion": "y", "extra": 1}`,
		`{"question": "", "completion": "y"}`,
		`not json`,
	} {
		if _, err := ReadAnswerKey(strings.NewReader(bad + "\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ReadAnswerKey(%s) error = %v, want one naming line 1", bad, err)
		}
	}
	if _, err := LoadAnswerKey(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil {
		t.Error("LoadAnswerKey of a missing file succeeded")
	}
}

func writeKey(t *testing.T, entries ...AnswerEntry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAnswerKeyServing(t *testing.T) {
	key, err := LoadAnswerKey(writeKey(t, AnswerEntry{qJanet, aJanet}, AnswerEntry{qRobe, aRobe}))
	if err != nil {
		t.Fatal(err)
	}
	url := StartTest(t, Options{AnswerKey: key, DefaultAnswer: "No idea.\n#### 0"})
	shots := [][2]string{{"What is 1+1?", "1+1=2\n#### 2"}}
	chat := func(content string, extra string) string {
		b, _ := json.Marshal(content)
		return `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"Question: decoy\nAnswer:"},{"role":"assistant","content":"x"},{"role":"user","content":` + string(b) + `}]` + extra + `}`
	}
	completion := func(prompt string, extra string) string {
		b, _ := json.Marshal(prompt)
		return `{"prompt":` + string(b) + extra + `}`
	}
	tests := []struct {
		name, path, body, want string
		stream                 bool
		wantFinish             string
	}{
		{"chat lm-eval prompt, max_tokens smaller than the answer", "/v1/chat/completions", chat(lmEvalPrompt(shots, qJanet), `,"max_tokens":2,"temperature":0`), aJanet, false, "stop"},
		{"chat streamed", "/v1/chat/completions", chat(lmEvalPrompt(shots, qRobe), `,"stream":true`), aRobe, true, "stop"},
		{"completions vllm prompt streamed", "/v1/completions", completion(vllmPrompt(shots, qRobe), `,"stream":true,"max_tokens":256,"stop":["Question","Assistant:","<|separator|>"],"seed":42`), aRobe, true, "stop"},
		{"completions non-streamed", "/v1/completions", completion(vllmPrompt(shots, qJanet), `,"max_tokens":256`), aJanet, false, "stop"},
		{"unknown question gets the default", "/v1/completions", completion("Question: what?\nAnswer:", ``), "No idea.\n#### 0", false, "stop"},
		{"stop string cuts the answer", "/v1/completions", completion(vllmPrompt(nil, qJanet), `,"stop":["####"]`), "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day.\n", false, "stop"},
		{"ignore_eos truncates to max_tokens", "/v1/completions", completion(vllmPrompt(nil, qRobe), `,"max_tokens":3,"ignore_eos":true`), "It takes 2/2=1", false, "length"},
		{"ignore_eos pads to max_tokens", "/v1/completions", completion(vllmPrompt(nil, qRobe), `,"max_tokens":10,"ignore_eos":true,"stream":true`), aRobe + " tok", true, "length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postJSON(t, url+tt.path, tt.body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var got, finish string
			var n int
			if tt.stream {
				res := readStream(t, resp.Body)
				for _, c := range res.chunks {
					for _, ch := range c.Choices {
						got += ch.Text + ch.Delta.Content
						n++
						if ch.FinishReason != nil {
							finish = *ch.FinishReason
						}
					}
				}
				if n != len(splitPieces(tt.want)) {
					t.Errorf("%d chunks for %d words", n, len(splitPieces(tt.want)))
				}
			} else {
				var body completionResponseBody
				if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
					t.Fatal(err)
				}
				c := body.Choices[0]
				if c.Message != nil {
					got = c.Message.Content
				} else {
					got = *c.Text
				}
				finish = c.FinishReason
				if body.Usage.CompletionTokens != len(splitPieces(tt.want)) {
					t.Errorf("completion_tokens %d for %d words", body.Usage.CompletionTokens, len(splitPieces(tt.want)))
				}
			}
			if got != tt.want || finish != tt.wantFinish {
				t.Errorf("got %q (finish %q), want %q (finish %q)", got, finish, tt.want, tt.wantFinish)
			}
		})
	}
}

// TestAnswerKeyWholeGSM8K checks, over the real test split, that every
// question is found again through both prompt templates: no question text
// defeats the extraction.
func TestAnswerKeyWholeGSM8K(t *testing.T) {
	path := shareddata.Path(t, "data", "gsm8k", "test.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []AnswerEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct{ Question, Answer string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, AnswerEntry{Question: row.Question, Completion: fmt.Sprintf("answer %d", len(entries))})
	}
	if len(entries) != 1319 {
		t.Fatalf("read %d questions, want 1319", len(entries))
	}
	key := NewAnswerKey(entries)
	shots := [][2]string{{entries[1].Question, "x\n#### 1"}, {entries[2].Question, "y\n#### 2"}}
	for i, e := range entries {
		want := key.byQuestion[strings.TrimSpace(e.Question)] // duplicates map to the last entry
		for name, p := range map[string]string{"lm-eval": lmEvalPrompt(shots, e.Question), "vllm": vllmPrompt(shots, e.Question)} {
			if got := key.answerFor(p, "MISS"); got != want {
				t.Fatalf("question %d via %s prompt: got %q, want %q", i, name, got, want)
			}
		}
	}
}
