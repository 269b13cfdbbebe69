package gsm8k

import (
	_ "embed"
	"fmt"
	"math"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
	"github.com/slurmbench/slurmbench/results"
)

//go:embed thresholds.yaml
var defaultThresholdsYAML []byte

// DefaultMinScore is validate_scores.py's --min-score, used when neither the
// model nor the default table names the task.
const DefaultMinScore = 0.85

// GatedMetricPrefix selects the metrics that are checked: every
// "exact_match,<filter>" (stderr entries are skipped).
const GatedMetricPrefix = "exact_match,"

// Thresholds are minimum scores per task, with per-model overrides keyed by
// InferenceX's model prefix (dsr1, glm5, ...).
type Thresholds struct {
	Default  map[string]float64            `yaml:"default"`
	Models   map[string]map[string]float64 `yaml:"models"`
	MinScore float64                       `yaml:"-"` // DefaultMinScore when 0
}

// DefaultThresholds are the embedded InferenceX thresholds.
func DefaultThresholds() Thresholds {
	t, err := ParseThresholds(defaultThresholdsYAML)
	if err != nil {
		panic("gsm8k: embedded thresholds.yaml: " + err.Error())
	}
	return t
}

// ParseThresholds reads a thresholds.yaml (or .json, which YAML accepts). A
// flat {task: score} document without default/models keys is the legacy
// format and becomes the default table, as in validate_scores.py.
func ParseThresholds(data []byte) (Thresholds, error) {
	var probe map[string]any
	if err := yaml.Unmarshal(data, &probe); err != nil {
		return Thresholds{}, fmt.Errorf("parsing thresholds: %w", err)
	}
	var t Thresholds
	_, hasDefault := probe["default"]
	_, hasModels := probe["models"]
	if !hasDefault && !hasModels && len(probe) > 0 {
		if err := yaml.Unmarshal(data, &t.Default); err != nil {
			return Thresholds{}, fmt.Errorf("parsing flat thresholds: %w", err)
		}
	} else if err := yaml.Unmarshal(data, &t); err != nil {
		return Thresholds{}, fmt.Errorf("parsing thresholds: %w", err)
	}
	for task, v := range t.Default {
		if v < 0 || v > 1 || math.IsNaN(v) {
			return Thresholds{}, fmt.Errorf("thresholds: default.%s = %v is not in [0, 1]", task, v)
		}
	}
	for model, tasks := range t.Models {
		for task, v := range tasks {
			if v < 0 || v > 1 || math.IsNaN(v) {
				return Thresholds{}, fmt.Errorf("thresholds: models.%s.%s = %v is not in [0, 1]", model, task, v)
			}
		}
	}
	return t, nil
}

// LoadThresholds reads a thresholds file.
func LoadThresholds(path string) (Thresholds, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Thresholds{}, fmt.Errorf("reading thresholds: %w", err)
	}
	t, err := ParseThresholds(data)
	if err != nil {
		return Thresholds{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Resolve returns the minimum for task and where it came from
// ("models.<prefix>", "default" or "min-score"). An empty or "unknown"
// prefix has no per-model entry.
func (t Thresholds) Resolve(modelPrefix, task string) (float64, string) {
	if modelPrefix != "" && modelPrefix != "unknown" {
		if v, ok := t.Models[modelPrefix][task]; ok {
			return v, "models." + modelPrefix
		}
	}
	if v, ok := t.Default[task]; ok {
		return v, "default"
	}
	if t.MinScore > 0 {
		return t.MinScore, "min-score"
	}
	return DefaultMinScore, "min-score"
}

// ThresholdFailure is one metric below its minimum.
type ThresholdFailure struct {
	Task   string
	Metric string // e.g. "exact_match,strict-match"
	Score  float64
	Min    float64
	Source string
}

func (f ThresholdFailure) String() string {
	return fmt.Sprintf("%s %s = %.4f (< %s from %s)", f.Task, f.Metric, f.Score, pyfloat.JSON(f.Min), f.Source)
}

// ThresholdError lists every metric that missed its threshold, or says that
// no metric could be checked at all.
type ThresholdError struct {
	Failures  []ThresholdFailure
	NoMetrics bool
}

func (e *ThresholdError) Error() string {
	if e.NoMetrics {
		return "eval scores: no metric matched prefix '" + GatedMetricPrefix + "'"
	}
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = f.String()
	}
	return "eval scores below threshold: " + strings.Join(parts, "; ")
}

// Check gates both gsm8k filters of score (a filter without a score is
// skipped). It returns nil when all pass, and a *ThresholdError naming each
// failing filter, its score and threshold otherwise (or when no filter had
// a score to check).
func (t Thresholds) Check(score *results.GSM8KScore, modelPrefix string) error {
	if score == nil {
		return &ThresholdError{NoMetrics: true}
	}
	min, source := t.Resolve(modelPrefix, gsm8kTask)
	var failures []ThresholdFailure
	checked := 0
	for _, f := range score.Filters() {
		if f.Score == nil {
			continue
		}
		checked++
		// NaN compares false either way; treat it as failing.
		if !(*f.Score >= min) {
			failures = append(failures, ThresholdFailure{Task: gsm8kTask, Metric: MetricKey("exact_match", f.Name), Score: *f.Score, Min: min, Source: source})
		}
	}
	if checked == 0 {
		return &ThresholdError{NoMetrics: true}
	}
	if len(failures) > 0 {
		return &ThresholdError{Failures: failures}
	}
	return nil
}

// gsm8kTask is the task name lm-eval files the scores under.
const gsm8kTask = "gsm8k"

// CheckThresholds checks score against the embedded InferenceX thresholds
// for the model prefix (dsr1 0.91 for gsm8k, 0.90 by default; both filters).
func CheckThresholds(score *results.GSM8KScore, modelPrefix string) error {
	return DefaultThresholds().Check(score, modelPrefix)
}
