package gsm8k

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

func TestMakeAnswerKeyScoresExactlyOnBothFilters(t *testing.T) {
	test, _ := splits(t)
	s, err := NewScorer(InferenceXTask())
	if err != nil {
		t.Fatal(err)
	}
	for _, acc := range []float64{0, 0.5, 0.95, 1} {
		entries, err := MakeAnswerKey(test, acc, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(test) {
			t.Fatalf("accuracy %v: %d entries for %d documents", acc, len(entries), len(test))
		}
		var right [2]int
		for i, e := range entries {
			if e.Question != test[i].Question {
				t.Fatalf("entry %d question %q, want %q", i, e.Question, test[i].Question)
			}
			target := InferenceXTask().Target(test[i])
			strict := s.ExactMatch(s.Filter(FilterStrict, e.Completion), target)
			flexible := s.ExactMatch(s.Filter(FilterFlexible, e.Completion), target)
			if strict != flexible {
				t.Fatalf("entry %d: strict %v but flexible %v for %q", i, strict, flexible, e.Completion)
			}
			right[0] += int(strict)
			right[1] += int(flexible)
		}
		want := int(acc*float64(len(test)) + 0.5)
		if right[0] != want || right[1] != want {
			t.Errorf("accuracy %v: %v correct under strict/flexible, want %d", acc, right, want)
		}
	}
}

func TestMakeAnswerKeyIsDeterministicPerSeed(t *testing.T) {
	docs := make([]Doc, 40)
	for i := range docs {
		docs[i] = Doc{Question: "q" + string(rune('A'+i)), Answer: "work\n#### 1,000"}
	}
	a, _ := MakeAnswerKey(docs, 0.5, 3)
	b, _ := MakeAnswerKey(docs, 0.5, 3)
	c, _ := MakeAnswerKey(docs, 0.5, 4)
	if !slices.Equal(a, b) {
		t.Error("same seed gave different keys")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same key")
	}
	// The correct set is random.Random(3).sample(range(40), 20).
	idx, _ := NewPyRandom(3).SampleIndices(40, 20)
	for _, i := range idx {
		if a[i].Completion != "work\n#### 1,000" {
			t.Errorf("document %d should be correct, got %q", i, a[i].Completion)
		}
	}
}

func TestWrongAnswer(t *testing.T) {
	for in, want := range map[string]string{"18": "19", "2,125": "2126", "-1": "0", "3.5": "3.51"} {
		if got := wrongAnswer(in); got != want {
			t.Errorf("wrongAnswer(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMakeAnswerKeyRejectsBadInput(t *testing.T) {
	if _, err := MakeAnswerKey([]Doc{{Question: "q", Answer: "a"}}, 1.2, 0); err == nil {
		t.Error("accuracy 1.2: no error")
	}
	if _, err := MakeAnswerKey([]Doc{{Question: "q", Answer: "no marker"}}, 1, 0); err == nil {
		t.Error("gold answer without ####: no error")
	}
}

func TestWriteAnswerKeyIsJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.jsonl")
	entries := []AnswerEntry{{Question: "a <b> & c", Completion: "x\n#### 1"}, {Question: "d", Completion: "#### 2"}}
	if err := WriteAnswerKey(path, entries); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []AnswerEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e AnswerEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, e)
	}
	if !slices.Equal(got, entries) {
		t.Errorf("read back %q, want %q", got, entries)
	}
}

// TestAnswerKeyCommand: the command writes one entry per test document
// and says so; a bad accuracy or data directory is exit 2 and writes
// nothing.
func TestAnswerKeyCommand(t *testing.T) {
	dir := t.TempDir()
	test, _ := splits(t)
	for _, tt := range []struct {
		name     string
		o        AnswerKeyOptions
		code     exitcode.Code
		wantFile bool
	}{
		{"built-in data", AnswerKeyOptions{Accuracy: 0.9, Seed: 1, Out: filepath.Join(dir, "ok.jsonl")}, 0, true},
		{"accuracy above 1", AnswerKeyOptions{Accuracy: 1.5, Out: filepath.Join(dir, "acc.jsonl")}, exitcode.Config, false},
		{"no such data", AnswerKeyOptions{Dir: filepath.Join(dir, "nope"), Accuracy: 0.9, Out: filepath.Join(dir, "dir.jsonl")}, exitcode.Config, false},
	} {
		var log strings.Builder
		tt.o.Log = &log
		err := AnswerKeyCommand(tt.o)
		if exitcode.Of(err) != tt.code {
			t.Errorf("%s: %v (exit %d), want %d", tt.name, err, exitcode.Of(err), tt.code)
		}
		b, statErr := os.ReadFile(tt.o.Out)
		if (statErr == nil) != tt.wantFile {
			t.Errorf("%s: key file written %v, want %v", tt.name, statErr == nil, tt.wantFile)
		}
		if tt.wantFile {
			if n := strings.Count(string(b), "\n"); n != len(test) {
				t.Errorf("%s: %d entries, want %d", tt.name, n, len(test))
			}
			if want := fmt.Sprintf("wrote %d answers to %s\n", len(test), tt.o.Out); log.String() != want {
				t.Errorf("%s: said %q, want %q", tt.name, log.String(), want)
			}
		}
	}
}
