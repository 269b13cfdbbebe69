// Package report turns a finished run into what people read: a Summary of
// the run (outcome, per-point figures, gsm8k) rendered as a GitHub step
// summary section or a terminal table, and the GitHub Actions workflow
// commands and file appends (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) that carry
// it in CI.
//
// A Summary holds numbers, names and the classified failure only. It never
// holds environment values, so secrets passed to the job cannot leak through
// it.
package report

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// Outcomes of a run, as Summary.Outcome spells them.
const (
	OutcomeSucceeded   = "succeeded"
	OutcomeFailed      = "failed"
	OutcomeCancelled   = "cancelled"
	OutcomeInterrupted = "interrupted"
)

// Summary describes a finished run for people. FromRun fills what the plan
// and the collected files say; the runner sets JobID, ImageDigest and the
// outcome fields.
type Summary struct {
	RunID       string `json:"run_id"`
	JobID       string `json:"job_id,omitempty"`
	RunDir      string `json:"run_dir"`
	Name        string `json:"name"`
	Image       string `json:"image"` // the reference as the recipe or profile named it
	ImageDigest string `json:"image_digest,omitempty"`

	// Outcome is one of the Outcome* constants; empty reads as unknown.
	Outcome string `json:"outcome"`
	// Class is the classified failure (diagnose.Class or the runner's layer).
	Class string `json:"class,omitempty"`
	// Phase and Process say where a failure happened, when known.
	Phase      string `json:"phase,omitempty"`
	Process    string `json:"process,omitempty"`
	Message    string `json:"message,omitempty"`
	FirstError string `json:"first_error,omitempty"`
	// RuntimeLog is the container runtime's own log (enroot's, or the OCI
	// runtime's) of a step whose container did not start (outcome.json
	// runtime_log).
	RuntimeLog []string `json:"runtime_log,omitempty"`
	// LastLines are the failed process's log tail (outcome.json's).
	LastLines []string `json:"last_lines,omitempty"`
	Host      string   `json:"host,omitempty"`
	// ExitCode is the code slurmbench exits with for this run.
	ExitCode int `json:"exit_code"`

	Points []PointRow `json:"points"`
	// EvalExpected is set when the plan ran gsm8k, so that a missing
	// result is reported rather than silently left out.
	EvalExpected bool     `json:"eval_expected,omitempty"`
	GSM8K        *EvalRow `json:"gsm8k,omitempty"`
	// GSM8KBatch is one row per concurrency of a batched eval (an
	// EVAL_CONC list), in the order meta_env.json's eval_concs lists them;
	// GSM8K is then the first one's.
	GSM8KBatch []EvalRow `json:"gsm8k_batch,omitempty"`
	// Benchmark says which client ran (or the custom command); Custom what
	// a custom benchmark produced.
	Benchmark *BenchmarkInfo `json:"benchmark,omitempty"`
	Custom    *CustomRow     `json:"custom,omitempty"`
	// Artifacts are the files of srtctl's other benchmark types and the
	// profiles of a profiled run (artifacts.go).
	Artifacts []ArtifactRow `json:"artifacts,omitempty"`
	// Power is the run's power package, when it collects one.
	Power *PowerRow `json:"power,omitempty"`
	// StagedFiles are the files staged into the workflow's directory, as
	// paths relative to it (the workflow's globs and upload paths start
	// there), in staging order.
	StagedFiles []string `json:"staged_files,omitempty"`

	// topology and order come from the plan, for rows AddMissing adds.
	topology results.PointID
	order    map[int]int // concurrency → index in the plan
	prompts  map[int]int // concurrency → planned prompts
}

// PointRow is one benchmark point. Figures are zero for a point without a
// readable result (Valid false, Note says why).
type PointRow struct {
	Label       string `json:"label"` // results.Point.Label(), e.g. "ctx8/gen4 c32"
	Concurrency int    `json:"concurrency"`
	GPUs        int    `json:"gpus"`
	PrefillGPUs int    `json:"prefill_gpus"`
	DecodeGPUs  int    `json:"decode_gpus"`
	// HasResult tells a measured point from one with no numbers at all.
	HasResult  bool `json:"has_result"`
	Completed  int  `json:"completed"`
	NumPrompts int  `json:"num_prompts"`
	// TputPerGPU and OutputPerGPU are process_result.py's tput_per_gpu and
	// output_tput_per_gpu (results.PerGPUThroughput).
	TputPerGPU   float64 `json:"tput_per_gpu"`
	OutputPerGPU float64 `json:"output_tput_per_gpu"`
	MedianTTFTms float64 `json:"median_ttft_ms"`
	MedianTPOTms float64 `json:"median_tpot_ms"`
	MedianE2Ems  float64 `json:"median_e2el_ms"`
	// Interactivity is 1000 / median TPOT in tok/s per user, 0 when TPOT is 0.
	Interactivity float64 `json:"median_intvty"`
	// Goodput is requests per second that met every --goodput SLO
	// (request_goodput); nil when no SLO was set.
	Goodput *float64 `json:"request_goodput,omitempty"`
	Valid   bool     `json:"valid"`
	Note    string   `json:"note,omitempty"`
}

// EvalRow is the gsm8k result of a run. A nil score or stderr was absent
// (lm-eval writes "N/A" for a stderr it could not compute).
type EvalRow struct {
	Strict       *float64 `json:"strict_match"`
	Flexible     *float64 `json:"flexible_extract"`
	StrictStderr *float64 `json:"strict_match_stderr"`
	FlexStderr   *float64 `json:"flexible_extract_stderr"`
	N            int      `json:"n_samples"`
	// Threshold is the minimum both filters must reach, ThresholdSource
	// where it came from ("models.dsr1", "default", "min-score").
	Threshold       float64 `json:"threshold"`
	ThresholdSource string  `json:"threshold_source"`
	Passed          bool    `json:"passed"`
	// Verdict is the pass/fail text, e.g. "pass (≥ 0.91, models.dsr1)".
	Verdict string `json:"verdict"`
	// Source is the results*.json file the scores were read from.
	Source string `json:"source"`
	// Concurrency is set for a row of a batched eval.
	Concurrency int `json:"concurrency,omitempty"`
}

// FromRun builds the summary of a run from its plan, the points Collect
// returned, and the newest lm-eval results*.json directly under evalDir
// (none, or evalDir "", leaves GSM8K nil). On error the returned Summary
// still holds everything that could be read, so a caller can show it.
func FromRun(pl *plan.Plan, points []results.CollectedPoint, evalDir string) (Summary, error) {
	if pl == nil {
		return Summary{}, errors.New("report: no plan")
	}
	s := Summary{
		RunID:        pl.RunID,
		RunDir:       pl.RunDir,
		Name:         pl.Name,
		Image:        firstNonEmpty(pl.Image.Ref, pl.Image.EnrootURI, pl.Image.Squash),
		EvalExpected: pl.Eval.Enabled,
		Benchmark:    benchmarkInfo(pl),
		topology:     pl.ResultPoint(0),
		order:        map[int]int{},
		prompts:      map[int]int{},
	}
	for i, pt := range pl.Points {
		if _, dup := s.order[pt.Concurrency]; !dup {
			s.order[pt.Concurrency] = i
			s.prompts[pt.Concurrency] = pt.NumPrompts
		}
	}
	var errs []error
	for _, cp := range points {
		row, err := measuredRow(cp.Point, cp.Result)
		if err != nil {
			errs = append(errs, fmt.Errorf("point %s (%s): %w", cp.Point.Label(), cp.Path, err))
			s.putRow(s.missingRow(cp.Point.Concurrency, "unreadable result: "+err.Error()))
			continue
		}
		row.Valid = true
		if v := cp.Result.Valid; v != nil && !*v {
			row.Valid, row.Note = false, firstNonEmpty(cp.Result.InvalidReason, "marked invalid")
		}
		s.putRow(row)
	}
	s.Power = powerSummary(pl, points)
	if evalDir != "" {
		ev, err := ReadEval(evalDir)
		if err != nil {
			errs = append(errs, err)
		}
		s.GSM8K = ev
		batch, err := ReadEvalBatch(evalDir)
		if err != nil {
			errs = append(errs, err)
		}
		if len(batch) > 0 {
			s.GSM8KBatch, s.GSM8K = batch, &batch[0]
		}
	}
	return s, errors.Join(errs...)
}

// AddMissing records a requested concurrency without a usable result, with
// the topology of the plan. It replaces a row of the same concurrency.
func (s *Summary) AddMissing(conc int, note string) {
	s.putRow(s.missingRow(conc, note))
}

// AddIncomplete records every point a *results.IncompleteError names:
// missing ones as AddMissing does, invalid ones with the figures of their
// file when it can still be read (partial results kept and marked).
func (s *Summary) AddIncomplete(e *results.IncompleteError) {
	if e == nil {
		return
	}
	for _, c := range e.Missing {
		s.AddMissing(c, "missing: no result file")
	}
	for _, inv := range e.Invalid {
		note := "invalid: " + strings.Join(inv.Reasons, "; ")
		row, ok := s.invalidRow(inv, note)
		if !ok {
			row = s.missingRow(inv.Concurrency, note)
		}
		s.putRow(row)
	}
}

func (s *Summary) invalidRow(inv results.InvalidPoint, note string) (PointRow, bool) {
	if inv.Path == "" {
		return PointRow{}, false
	}
	data, err := readlimit.ReadFile(inv.Path, results.MaxResultBytes)
	if err != nil {
		return PointRow{}, false
	}
	r, err := results.ParseSABench(data)
	if err != nil {
		return PointRow{}, false
	}
	p := s.topology
	if parsed, err := results.ParseName(filepath.Base(inv.Path)); err == nil {
		p = parsed.PointID
	}
	p.Concurrency = inv.Concurrency
	row, err := measuredRow(p, r)
	if err != nil {
		return PointRow{}, false
	}
	row.Valid, row.Note = false, note
	return row, true
}

func (s *Summary) missingRow(conc int, note string) PointRow {
	p := s.topology
	p.Concurrency = conc
	return PointRow{
		Label:       p.Label(),
		Concurrency: conc,
		GPUs:        p.GPUs,
		PrefillGPUs: p.PrefillGPUs,
		DecodeGPUs:  p.DecodeGPUs,
		NumPrompts:  s.prompts[conc],
		Note:        firstNonEmpty(note, "missing"),
	}
}

// putRow adds or replaces the row of its concurrency and keeps the rows in
// the plan's order (concurrencies the plan does not name go last).
func (s *Summary) putRow(row PointRow) {
	replaced := false
	for i := range s.Points {
		if s.Points[i].Concurrency == row.Concurrency {
			s.Points[i], replaced = row, true
			break
		}
	}
	if !replaced {
		s.Points = append(s.Points, row)
	}
	rank := func(c int) (int, int) {
		if i, ok := s.order[c]; ok {
			return 0, i
		}
		return 1, c
	}
	sort.SliceStable(s.Points, func(i, j int) bool {
		gi, ki := rank(s.Points[i].Concurrency)
		gj, kj := rank(s.Points[j].Concurrency)
		if gi != gj {
			return gi < gj
		}
		return ki < kj
	})
}

func measuredRow(p results.PointID, r *results.SABenchResult) (PointRow, error) {
	if r == nil {
		return PointRow{}, errors.New("no result")
	}
	per, err := results.PerGPUThroughput(p, r.TotalTokenThroughput, r.OutputThroughput)
	if err != nil {
		return PointRow{}, err
	}
	row := PointRow{
		Label:        p.Label(),
		Concurrency:  p.Concurrency,
		GPUs:         per.TotalGPUs,
		PrefillGPUs:  p.PrefillGPUs,
		DecodeGPUs:   p.DecodeGPUs,
		HasResult:    true,
		Completed:    r.Completed,
		NumPrompts:   r.NumPrompts,
		TputPerGPU:   per.TputPerGPU,
		OutputPerGPU: per.OutputTputPerGPU,
		MedianTTFTms: median(r, "ttft"),
		MedianTPOTms: median(r, "tpot"),
		MedianE2Ems:  median(r, "e2el"),
		Goodput:      r.RequestGoodput,
	}
	if tpot := row.MedianTPOTms; tpot > 0 && !math.IsInf(tpot, 0) {
		row.Interactivity = 1000 / tpot
	}
	return row, nil
}

// ReadEval reads the gsm8k scores of the newest lm-eval results*.json
// directly under dir and gates them against InferenceX's thresholds for
// the model prefix meta_env.json names. Newest is the latest modification
// time, then the greatest name (lm-eval's stamps sort by time). Files
// without results.gsm8k are skipped; a newer file that cannot be read is an
// error rather than a reason to report an older score. No file: nil, nil.
func ReadEval(dir string) (*EvalRow, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "results*.json"))
	if err != nil {
		return nil, fmt.Errorf("listing eval results in %s: %w", dir, err)
	}
	type cand struct {
		path  string
		mtime int64
	}
	var cands []cand
	for _, m := range matches {
		fi, err := os.Stat(m)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		cands = append(cands, cand{m, fi.ModTime().UnixNano()})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].mtime != cands[j].mtime {
			return cands[i].mtime > cands[j].mtime
		}
		return cands[i].path > cands[j].path
	})
	for _, c := range cands {
		data, err := readlimit.ReadFile(c.path, results.MaxResultBytes)
		if err != nil {
			return nil, fmt.Errorf("reading eval result: %w", err)
		}
		score, err := results.ParseLMEvalGSM8K(data)
		if errors.Is(err, results.ErrNoGSM8K) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading gsm8k scores from %s: %w", c.path, err)
		}
		prefix := ""
		if meta, err := gsm8k.ReadMetaEnv(filepath.Join(dir, "meta_env.json")); err == nil {
			prefix = meta.InfmaxModelPrefix
		}
		return evalRow(score, c.path, prefix), nil
	}
	return nil, nil
}

// ReadEvalBatch reads a batched eval's rows: for each concurrency
// meta_env.json's eval_concs lists, the newest results*_conc<N>.json
// (validate_scores.py's CONC_SUFFIX_RE names them so) directly under dir,
// gated like ReadEval's. A concurrency without a result has no row (the
// summary's other rows and failed_eval_concs say why). Not a batch: nil.
func ReadEvalBatch(dir string) ([]EvalRow, error) {
	meta, err := gsm8k.ReadMetaEnv(filepath.Join(dir, "meta_env.json"))
	if err != nil || meta.EvalConcs == nil {
		return nil, nil
	}
	matches, err := filepath.Glob(filepath.Join(dir, "results*_conc*.json"))
	if err != nil {
		return nil, fmt.Errorf("listing eval results in %s: %w", dir, err)
	}
	sort.Strings(matches) // lm-eval's stamps sort by time: the newest is last
	var rows []EvalRow
	var errs []error
	for _, c := range *meta.EvalConcs {
		var newest string
		for _, m := range matches {
			if sm := concSuffix.FindStringSubmatch(filepath.Base(m)); sm != nil && sm[1] == strconv.Itoa(c) {
				newest = m
			}
		}
		if newest == "" {
			continue
		}
		data, err := readlimit.ReadFile(newest, readlimit.Default)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading eval result: %w", err))
			continue
		}
		score, err := results.ParseLMEvalGSM8K(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading gsm8k scores from %s: %w", newest, err))
			continue
		}
		row := evalRow(score, newest, meta.InfmaxModelPrefix)
		row.Concurrency = c
		rows = append(rows, *row)
	}
	return rows, errors.Join(errs...)
}

// concSuffix is validate_scores.py's CONC_SUFFIX_RE.
var concSuffix = regexp.MustCompile(`_conc(\d+)(?:_\d+)?\.json$`)

// evalRow gates both filters as validate_scores.py does: every present
// exact_match score must reach the threshold, and at least one must exist.
func evalRow(score *results.GSM8KScore, source, modelPrefix string) *EvalRow {
	min, from := gsm8k.DefaultThresholds().Resolve(modelPrefix, "gsm8k")
	ev := &EvalRow{
		Strict:          score.StrictMatch,
		Flexible:        score.FlexibleExtract,
		StrictStderr:    score.StrictMatchStderr,
		FlexStderr:      score.FlexibleExtractStderr,
		N:               score.Samples,
		Threshold:       min,
		ThresholdSource: from,
		Source:          source,
	}
	var te *gsm8k.ThresholdError
	err := gsm8k.DefaultThresholds().Check(score, modelPrefix)
	ev.Passed = err == nil
	switch {
	case err == nil:
		ev.Verdict = fmt.Sprintf("pass (≥ %s, %s)", trimFloat(min), from)
	case errors.As(err, &te) && len(te.Failures) > 0:
		below := make([]string, len(te.Failures))
		for i, f := range te.Failures {
			below[i] = fmt.Sprintf("%s %s < %s", strings.TrimPrefix(f.Metric, gsm8k.GatedMetricPrefix), score4(&f.Score), trimFloat(f.Min))
		}
		ev.Verdict = fmt.Sprintf("fail: %s (%s)", strings.Join(below, ", "), from)
	default:
		ev.Verdict = "fail: no score"
	}
	return ev
}

// Outputs are the step outputs a workflow reads after "slurmbench run":
// job_id, run_id, run_dir, outcome, class when the run failed with one, and
// staged_files (one path per line) when anything was staged.
func (s Summary) Outputs() map[string]string {
	out := map[string]string{
		"job_id":  s.JobID,
		"run_id":  s.RunID,
		"run_dir": s.RunDir,
		"outcome": s.Outcome,
	}
	if s.Class != "" {
		out["class"] = s.Class
	}
	if len(s.StagedFiles) > 0 {
		out["staged_files"] = strings.Join(s.StagedFiles, "\n")
	}
	return out
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// median is median_<metric>_ms, 0 when the file lacks it.
func median(r *results.SABenchResult, metric string) float64 {
	m, _ := r.Metric(metric)
	return m.Median
}
