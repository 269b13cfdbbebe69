package gsm8k

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Doc is one GSM8K problem as the data set stores it: the answer holds the
// worked solution and ends with "#### <number>".
type Doc struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// File names of the two splits inside a GSM8K data directory (the
// openai/grade-school-math layout, which is also the row order of the
// openai/gsm8k "main" config lm-eval loads).
const (
	TestFile  = "test.jsonl"
	TrainFile = "train.jsonl"
)

// Split sizes of the public data set.
const (
	TestDocs  = 1319
	TrainDocs = 7473
)

// LoadJSONL reads one split: one JSON object per line with question and
// answer. Blank lines are skipped; anything else malformed is an error that
// names the line.
func LoadJSONL(path string) ([]Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening gsm8k split: %w", err)
	}
	defer f.Close()

	var docs []Doc
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var d Doc
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("reading %s line %d: %w", path, line, err)
		}
		if d.Question == "" || d.Answer == "" {
			return nil, fmt.Errorf("reading %s line %d: question or answer missing", path, line)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("reading %s: no documents", path)
	}
	return docs, nil
}

// LoadDir reads test.jsonl and train.jsonl from dir.
func LoadDir(dir string) (test, train []Doc, err error) {
	test, err = LoadJSONL(filepath.Join(dir, TestFile))
	if err != nil {
		return nil, nil, err
	}
	train, err = LoadJSONL(filepath.Join(dir, TrainFile))
	if err != nil {
		return nil, nil, err
	}
	return test, train, nil
}
