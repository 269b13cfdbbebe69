package gsm8k

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/results"
)

// EmulatedLMEvalVersion is the lm-eval release the pinned commit reports
// (InferenceX pins b315ef3b, version 0.4.9.2). InferenceX's collector only
// accepts result files that carry lm_eval_version, so native results record
// the version whose behaviour they reproduce and say so in "native_evaluator".
const EmulatedLMEvalVersion = "0.4.9.2"

// Result is lm-eval's results_<date>.json. Fields keep lm-eval's order; the
// ones InferenceX reads are results, n-samples, configs, config and
// lm_eval_version. It also decodes files lm-eval itself wrote, which is why
// the free-form blocks (configs, versions, config) are typed any: written
// results hold *TaskConfig, PyFloat and *RunConfig there, decoded ones hold
// whatever JSON the file had.
type Result struct {
	Results                    map[string]*Metrics        `json:"results"`
	GroupSubtasks              map[string][]string        `json:"group_subtasks"`
	Configs                    map[string]any             `json:"configs"`
	Versions                   map[string]any             `json:"versions"`
	NShot                      map[string]int             `json:"n-shot"`
	HigherIsBetter             map[string]map[string]bool `json:"higher_is_better"`
	NSamples                   map[string]NSamples        `json:"n-samples"`
	Config                     any                        `json:"config"`
	GitHash                    *string                    `json:"git_hash"`
	Date                       PyFloat                    `json:"date"`
	LMEvalVersion              string                     `json:"lm_eval_version"`
	TaskHashes                 map[string]string          `json:"task_hashes"`
	ModelSource                string                     `json:"model_source"`
	ModelName                  string                     `json:"model_name"`
	ModelNameSanitized         string                     `json:"model_name_sanitized"`
	SystemInstruction          *string                    `json:"system_instruction"`
	SystemInstructionSha       *string                    `json:"system_instruction_sha"`
	FewshotAsMultiturn         bool                       `json:"fewshot_as_multiturn"`
	ChatTemplate               *string                    `json:"chat_template"`
	ChatTemplateSha            *string                    `json:"chat_template_sha"`
	StartTime                  PyFloat                    `json:"start_time"`
	EndTime                    PyFloat                    `json:"end_time"`
	TotalEvaluationTimeSeconds string                     `json:"total_evaluation_time_seconds"`
	Native                     *NativeInfo                `json:"native_evaluator,omitempty"`
}

// NativeInfo marks a result produced by this package rather than lm-eval.
type NativeInfo struct {
	Implementation string `json:"implementation"`
	Endpoint       string `json:"endpoint"`
	Concurrency    int    `json:"concurrency"`
}

// NSamples is n-samples.<task>: documents in the split and documents scored.
type NSamples struct {
	Original  int `json:"original"`
	Effective int `json:"effective"`
}

// RunConfig is the top-level "config" block lm-eval writes.
type RunConfig struct {
	Model          string         `json:"model"`
	ModelArgs      string         `json:"model_args"`
	BatchSize      int            `json:"batch_size"`
	BatchSizes     []int          `json:"batch_sizes"`
	Device         *string        `json:"device"`
	UseCache       *string        `json:"use_cache"`
	Limit          *int           `json:"limit"`
	BootstrapIters int            `json:"bootstrap_iters"`
	GenKwargs      map[string]int `json:"gen_kwargs"`
	RandomSeed     int            `json:"random_seed"`
	NumpySeed      int            `json:"numpy_seed"`
	TorchSeed      int            `json:"torch_seed"`
	FewshotSeed    int            `json:"fewshot_seed"`
}

// TaskConfig is configs.<task>, the task definition as run.
type TaskConfig struct {
	Task                string             `json:"task"`
	Tag                 []string           `json:"tag"`
	DatasetPath         string             `json:"dataset_path"`
	DatasetName         string             `json:"dataset_name"`
	TrainingSplit       string             `json:"training_split"`
	TestSplit           string             `json:"test_split"`
	FewshotSplit        string             `json:"fewshot_split"`
	DocToText           string             `json:"doc_to_text"`
	DocToTarget         string             `json:"doc_to_target"`
	Description         string             `json:"description"`
	TargetDelimiter     string             `json:"target_delimiter"`
	FewshotDelimiter    string             `json:"fewshot_delimiter"`
	NumFewshot          int                `json:"num_fewshot"`
	MetricList          []MetricConfig     `json:"metric_list"`
	OutputType          string             `json:"output_type"`
	GenerationKwargs    GenerationKwargs   `json:"generation_kwargs"`
	Repeats             int                `json:"repeats"`
	FilterList          []FilterConfig     `json:"filter_list"`
	ShouldDecontaminate bool               `json:"should_decontaminate"`
	Metadata            map[string]PyFloat `json:"metadata"`
}

// MetricConfig is one metric_list entry.
type MetricConfig struct {
	Metric            string   `json:"metric"`
	Aggregation       string   `json:"aggregation"`
	HigherIsBetter    bool     `json:"higher_is_better"`
	IgnoreCase        bool     `json:"ignore_case"`
	IgnorePunctuation bool     `json:"ignore_punctuation"`
	RegexesToIgnore   []string `json:"regexes_to_ignore"`
}

// GenerationKwargs is the task's generation_kwargs after --gen_kwargs merged
// into it (the CLI values are ints: "temperature=0" parses to 0).
type GenerationKwargs struct {
	Until       []string `json:"until"`
	DoSample    bool     `json:"do_sample"`
	Temperature int      `json:"temperature"`
	MaxTokens   int      `json:"max_tokens"`
	TopP        int      `json:"top_p"`
}

// FilterConfig is one filter_list entry.
type FilterConfig struct {
	Name   string       `json:"name"`
	Filter []FilterStep `json:"filter"`
}

// FilterStep is one function of a filter pipeline.
type FilterStep struct {
	Function     string `json:"function"`
	GroupSelect  *int   `json:"group_select,omitempty"`
	RegexPattern string `json:"regex_pattern,omitempty"`
}

// Metrics is results.<task>: "alias" first, then each metric in the order
// lm-eval writes it. Values are numbers, or strings such as "N/A".
type Metrics struct {
	Alias  string
	Keys   []string
	Values map[string]any
}

// MetricKey is the results key of a metric under a filter, e.g.
// "exact_match,strict-match".
func MetricKey(metric, filter string) string { return metric + "," + filter }

// StderrKey is the key of its standard error, "exact_match_stderr,strict-match".
func StderrKey(metric, filter string) string { return metric + "_stderr," + filter }

// Set adds or replaces a metric, keeping first-insertion order.
func (m *Metrics) Set(key string, v any) {
	if m.Values == nil {
		m.Values = map[string]any{}
	}
	if _, ok := m.Values[key]; !ok {
		m.Keys = append(m.Keys, key)
	}
	m.Values[key] = v
}

// MarshalJSON implements json.Marshaler.
func (m *Metrics) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"alias":`)
	alias, _ := json.Marshal(m.Alias)
	b.Write(alias)
	for _, k := range m.Keys {
		key, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(key)
		b.WriteByte(':')
		v := m.Values[k]
		if f, ok := v.(float64); ok {
			v = PyFloat(f)
		}
		val, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", k, err)
		}
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Score is one filter's aggregate.
type Score struct {
	Filter string
	Mean   float64
	Stderr float64
	N      int
}

// Scores aggregates the samples per filter as lm-eval does: the mean of the
// per-document exact_match values and mean_stderr, sqrt(Σ(x-μ)²/(n-1))/√n,
// with plain left-to-right sums in document order (the values are numpy
// float64, so CPython's compensated float sum does not apply).
func (r *Report) Scores() []Score {
	out := make([]Score, 0, 2)
	for f, name := range Filters() {
		vals := make([]float64, len(r.Samples))
		for i, s := range r.Samples {
			vals[i] = s.ExactMatch[f]
		}
		mean, stderr := meanStderr(vals)
		out = append(out, Score{Filter: name, Mean: mean, Stderr: stderr, N: len(vals)})
	}
	return out
}

func meanStderr(vals []float64) (mean, stderr float64) {
	n := len(vals)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	mean = sum / float64(n)
	if n < 2 {
		return mean, math.NaN()
	}
	sq := 0.0
	for _, v := range vals {
		d := v - mean
		sq += d * d
	}
	return mean, math.Sqrt(sq/float64(n-1)) / math.Sqrt(float64(n))
}

// ModelArgs is the --model_args string InferenceX passes, recorded in
// config.model_args. A real API key is not written to disk; the placeholder
// "EMPTY" InferenceX uses is.
func (r *Report) ModelArgs() string {
	key := r.APIKey
	if key != DefaultAPIKey {
		key = "<redacted>"
	}
	args := []string{
		"model=" + r.Model,
		"base_url=" + r.Endpoint,
		"api_key=" + key,
		"eos_string=</s>",
		"max_retries=" + strconv.Itoa(DefaultMaxRetries),
		"num_concurrent=" + strconv.Itoa(r.Concurrency),
		"timeout=" + strconv.Itoa(int(DefaultRequestTimeout/time.Second)),
		"tokenized_requests=False",
	}
	if r.ContextLength > 0 {
		args = append(args, "max_length="+strconv.Itoa(r.ContextLength))
	}
	return strings.Join(args, ",")
}

// Score is the report's scores as a reader of its results file sees them.
func (r *Report) Score() *results.GSM8KScore {
	score := &results.GSM8KScore{Samples: len(r.Samples)}
	for _, s := range r.Scores() {
		mean, stderr := s.Mean, s.Stderr
		var se *float64
		if !math.IsNaN(stderr) {
			se = &stderr
		}
		switch s.Filter {
		case FilterStrict:
			score.StrictMatch, score.StrictMatchStderr = &mean, se
		case FilterFlexible:
			score.FlexibleExtract, score.FlexibleExtractStderr = &mean, se
		}
	}
	return score
}

// Result builds lm-eval's result document from the report.
func (r *Report) Result() *Result {
	t := r.Task
	m := &Metrics{Alias: t.Name}
	for _, s := range r.Scores() {
		m.Set(MetricKey("exact_match", s.Filter), s.Mean)
		if math.IsNaN(s.Stderr) {
			m.Set(StderrKey("exact_match", s.Filter), "N/A")
		} else {
			m.Set(StderrKey("exact_match", s.Filter), s.Stderr)
		}
	}
	minusOne := -1
	filters := []FilterConfig{
		{Name: FilterStrict, Filter: []FilterStep{{Function: "regex", GroupSelect: &minusOne, RegexPattern: t.StrictRegex}, {Function: "take_first"}}},
		{Name: FilterFlexible, Filter: []FilterStep{{Function: "regex", GroupSelect: &minusOne, RegexPattern: t.FlexibleRegex}, {Function: "take_first"}}},
	}
	var limit *int
	if r.Limit > 0 {
		l := r.Limit
		limit = &l
	}
	var hashes []string
	for _, s := range r.Samples {
		hashes = append(hashes, hashString(ChatPrompt(s.Request.Messages)))
	}
	empty := ""
	start, end := unixSeconds(r.Start), unixSeconds(r.End)
	return &Result{
		Results:       map[string]*Metrics{t.Name: m},
		GroupSubtasks: map[string][]string{t.Name: {}},
		Configs: map[string]any{t.Name: &TaskConfig{
			Task: t.Name, Tag: []string{"math_word_problems"},
			DatasetPath: t.DatasetPath, DatasetName: t.DatasetName,
			TrainingSplit: "train", TestSplit: "test", FewshotSplit: "train",
			DocToText: t.DocToText, DocToTarget: t.DocToTarget,
			TargetDelimiter: t.TargetDelimiter, FewshotDelimiter: t.FewshotDelimiter,
			NumFewshot: t.NumFewshot,
			MetricList: []MetricConfig{{
				Metric: "exact_match", Aggregation: "mean", HigherIsBetter: true,
				IgnoreCase: t.IgnoreCase, RegexesToIgnore: t.RegexesToIgnore,
			}},
			OutputType: "generate_until",
			GenerationKwargs: GenerationKwargs{
				Until: t.Until, MaxTokens: r.MaxTokens, TopP: 1,
			},
			Repeats:    1,
			FilterList: filters,
			Metadata:   map[string]PyFloat{"version": PyFloat(t.Version)},
		}},
		Versions:       map[string]any{t.Name: PyFloat(t.Version)},
		NShot:          map[string]int{t.Name: t.NumFewshot},
		HigherIsBetter: map[string]map[string]bool{t.Name: {"exact_match": true}},
		NSamples:       map[string]NSamples{t.Name: {Original: r.Original, Effective: len(r.Samples)}},
		Config: &RunConfig{
			Model: "local-chat-completions", ModelArgs: r.ModelArgs(),
			BatchSize: 1, BatchSizes: []int{}, Limit: limit, BootstrapIters: 100000,
			GenKwargs:  map[string]int{"max_tokens": r.MaxTokens, "temperature": 0, "top_p": 1},
			RandomSeed: 0, NumpySeed: 1234, TorchSeed: 1234, FewshotSeed: int(t.FewshotSeed),
		},
		Date:                       PyFloat(start),
		LMEvalVersion:              EmulatedLMEvalVersion,
		TaskHashes:                 map[string]string{t.Name: hashString(strings.Join(hashes, ""))},
		ModelSource:                "local-chat-completions",
		ModelName:                  r.Model,
		ModelNameSanitized:         SanitizeModelName(r.Model),
		FewshotAsMultiturn:         t.FewshotAsMultiturn,
		ChatTemplate:               &empty,
		StartTime:                  PyFloat(start),
		EndTime:                    PyFloat(end),
		TotalEvaluationTimeSeconds: strconv.FormatFloat(end-start, 'f', -1, 64),
		Native: &NativeInfo{
			Implementation: "slurmbench clients/gsm8k",
			Endpoint:       r.Endpoint,
			Concurrency:    r.Concurrency,
		},
	}
}

var unsafeModelChars = regexp.MustCompile(`[\"<>:/\|\\?\*\[\]]+`)

// SanitizeModelName is lm-eval's sanitize_model_name: the characters
// "<>:/|\?*[] replaced by "__", as in the per-model output directory.
func SanitizeModelName(name string) string {
	return unsafeModelChars.ReplaceAllLiteralString(name, "__")
}

// unixSeconds is time.time()'s float: whole seconds plus the fraction, added
// last so that round fractions stay exact.
func unixSeconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

func hashString(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
