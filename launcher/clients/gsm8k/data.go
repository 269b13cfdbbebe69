package gsm8k

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/gsm8kdata"
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
	TestFile  = gsm8kdata.Test
	TrainFile = gsm8kdata.Train
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
	return readJSONL(f, path)
}

func readJSONL(r io.Reader, name string) ([]Doc, error) {
	var docs []Doc
	sc := bufio.NewScanner(r)
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
			return nil, fmt.Errorf("reading %s line %d: %w", name, line, err)
		}
		if d.Question == "" || d.Answer == "" {
			return nil, fmt.Errorf("reading %s line %d: question or answer missing", name, line)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("reading %s: no documents", name)
	}
	return docs, nil
}

// LoadDir reads test.jsonl and train.jsonl from dir; dir "" is the copy
// built into the binary (internal/gsm8kdata).
func LoadDir(dir string) (test, train []Doc, err error) {
	load := func(name string) ([]Doc, error) { return LoadJSONL(filepath.Join(dir, name)) }
	if dir == "" {
		load = loadEmbedded
	}
	if test, err = load(TestFile); err != nil {
		return nil, nil, err
	}
	if train, err = load(TrainFile); err != nil {
		return nil, nil, err
	}
	return test, train, nil
}

func loadEmbedded(name string) ([]Doc, error) {
	r, err := gsm8kdata.Open(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readJSONL(r, "built-in "+name)
}
