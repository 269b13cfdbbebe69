package gsm8k

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// Files are the artifacts a native run leaves in its output directory, named
// as lm-eval's EvaluationTracker names them and flattened the way InferenceX
// stages them (results*.json, sample*.jsonl, meta_env.json side by side).
type Files struct {
	Results string // results_<date>.json
	Samples string // samples_gsm8k_<date>.jsonl; empty when not written
	MetaEnv string // meta_env.json; empty when not written
}

// WriteOptions choose what Write produces besides the results file.
type WriteOptions struct {
	LogSamples bool     // also write the per-document samples file
	MetaEnv    *MetaEnv // also write meta_env.json when set
	Now        time.Time
}

// Write stores the report's result (and optionally samples and
// meta_env.json) in dir, each file written atomically.
func (r *Report) Write(dir string, o WriteOptions) (Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("creating eval output directory: %w", err)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	stamp := DateID(now)
	var files Files

	data, err := marshalIndent(r.Result())
	if err != nil {
		return files, fmt.Errorf("encoding eval result: %w", err)
	}
	files.Results = filepath.Join(dir, "results_"+stamp+".json")
	if err := atomicfile.WriteFile(files.Results, data, overwrite); err != nil {
		return files, err
	}
	if o.LogSamples {
		data, err := r.SamplesJSONL()
		if err != nil {
			return files, err
		}
		files.Samples = filepath.Join(dir, "samples_"+r.Task.Name+"_"+stamp+".jsonl")
		if err := atomicfile.WriteFile(files.Samples, data, overwrite); err != nil {
			return files, err
		}
	}
	if o.MetaEnv != nil {
		files.MetaEnv = filepath.Join(dir, "meta_env.json")
		if err := WriteMetaEnv(files.MetaEnv, *o.MetaEnv); err != nil {
			return files, err
		}
	}
	return files, nil
}

// DateID is lm-eval's file stamp: datetime.now().isoformat() with ":"
// replaced by "-" (microseconds shown only when non-zero, as in Python).
func DateID(t time.Time) string {
	s := t.Format("2006-01-02T15-04-05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

type sampleArgs struct {
	Arg0 []string         `json:"arg_0"` // JsonChatStr, a one-field NamedTuple
	Arg1 GenerationKwargs `json:"arg_1"`
}

type sampleLine struct {
	DocID         int                   `json:"doc_id"`
	Doc           Doc                   `json:"doc"`
	Target        string                `json:"target"`
	Arguments     map[string]sampleArgs `json:"arguments"`
	Resps         [][]string            `json:"resps"`
	FilteredResps []string              `json:"filtered_resps"`
	Filter        string                `json:"filter"`
	Metrics       []string              `json:"metrics"`
	DocHash       string                `json:"doc_hash"`
	PromptHash    string                `json:"prompt_hash"`
	TargetHash    string                `json:"target_hash"`
	ExactMatch    PyFloat               `json:"exact_match"`
}

// SamplesJSONL renders --log_samples output: one line per document and
// filter, filters in task order, documents in order within each filter.
func (r *Report) SamplesJSONL() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	gen := GenerationKwargs{Until: r.Task.Until, MaxTokens: r.MaxTokens, TopP: 1}
	for f, name := range Filters() {
		for _, s := range r.Samples {
			prompt := ChatPrompt(s.Request.Messages)
			line := sampleLine{
				DocID:         s.DocID,
				Doc:           s.Doc,
				Target:        s.Target,
				Arguments:     map[string]sampleArgs{"gen_args_0": {Arg0: []string{prompt}, Arg1: gen}},
				Resps:         [][]string{{s.Response}},
				FilteredResps: []string{s.Filtered[f]},
				Filter:        name,
				Metrics:       []string{"exact_match"},
				DocHash:       hashString(docJSONIndented(s.Doc)),
				PromptHash:    hashString(prompt),
				TargetHash:    hashString(s.Target),
				ExactMatch:    PyFloat(s.ExactMatch[f]),
			}
			if err := enc.Encode(line); err != nil {
				return nil, fmt.Errorf("encoding sample %d: %w", s.DocID, err)
			}
		}
	}
	return buf.Bytes(), nil
}

// docJSONIndented is json.dumps(doc, indent=2, ensure_ascii=False), the text
// lm-eval hashes into doc_hash.
func docJSONIndented(d Doc) string {
	var b strings.Builder
	b.WriteString("{\n  \"question\": ")
	pyJSONString(&b, d.Question)
	b.WriteString(",\n  \"answer\": ")
	pyJSONString(&b, d.Answer)
	b.WriteString("\n}")
	return b.String()
}

func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// overwrite is how the eval's files are written: a rerun into the same
// directory replaces them, as lm-eval does.
var overwrite = atomicfile.Options{Overwrite: true}
