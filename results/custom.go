package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// A custom benchmark (benchmark.type custom) runs the recipe's own command;
// for InferenceX that is the agentic trace replay, agentic_srt.sh, which
// per concurrency C writes AIPerf's artifacts under RESULT_DIR/conc_<C>/
// and an aggregated <RESULT_FILENAME>_conc<C>.json into its output
// directory (the workspace). InferenceX's launchers stage those aggregated
// files under their own names (copy_agentic_results: every
// <RESULT_FILENAME>_conc*.json at the top of the directory) and the
// workflow requires one per concurrency with a truthy
// num_requests_successful.

// CustomCollectOptions say where a custom workload wrote.
type CustomCollectOptions struct {
	// ResultDir is the workload's own directory (RESULT_DIR on the host).
	ResultDir string
	// OutputDirs are searched, in order, for the aggregated results; the
	// first file of a name wins.
	OutputDirs []string
	// ResultFilename is the workflow's RESULT_FILENAME.
	ResultFilename string
	// Concurrencies the workload was asked for (CONC_LIST or CONC); empty
	// when the plan does not know them.
	Concurrencies []int
}

// CustomOutput is what a custom workload left.
type CustomOutput struct {
	CustomFiles
	// Results are the aggregated result files, by concurrency.
	Results []CustomResult `json:"results"`
}

// CustomFiles is what a custom workload left in its own directory.
type CustomFiles struct {
	ResultDir string `json:"result_dir"`
	// Files and Bytes count every regular file under ResultDir.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// ConcDirs are the conc_<C> directories found under ResultDir.
	ConcDirs []int `json:"conc_dirs,omitempty"`
}

// CustomResult is one aggregated <RESULT_FILENAME>_conc<C>.json.
type CustomResult struct {
	Path        string `json:"path"`
	Concurrency int    `json:"concurrency"`
	// Metrics are the file's top-level numbers (and booleans as 0/1).
	Metrics map[string]float64 `json:"metrics"`
	Valid   bool               `json:"valid"`
	Note    string             `json:"note,omitempty"`
}

// KeyMetrics are the metrics a summary shows first, when the file has them.
var KeyMetrics = []string{"num_requests_successful", "num_requests_failed", "request_throughput", "output_token_throughput",
	"total_token_throughput", "median_ttft_ms", "median_itl_ms", "median_e2el_ms"}

// CustomIncompleteError names the concurrencies a custom workload left no
// valid aggregated result for.
type CustomIncompleteError struct {
	Pattern string
	Missing []int
	Invalid []CustomResult
	None    bool // no result at all
}

func (e *CustomIncompleteError) Error() string {
	if e.None {
		return fmt.Sprintf("custom benchmark: no %s found", e.Pattern)
	}
	var parts []string
	for _, c := range e.Missing {
		parts = append(parts, fmt.Sprintf("c%d missing", c))
	}
	for _, r := range e.Invalid {
		parts = append(parts, fmt.Sprintf("c%d invalid (%s)", r.Concurrency, r.Note))
	}
	return fmt.Sprintf("custom benchmark: %s: %s", e.Pattern, strings.Join(parts, ", "))
}

// CustomPattern is the glob the aggregated results of RESULT_FILENAME match.
func CustomPattern(resultFilename string) string { return resultFilename + "_conc*.json" }

// CollectCustom reads what a custom workload left. The error is a
// *CustomIncompleteError when results are missing or invalid; the returned
// output holds whatever was found either way.
func CollectCustom(o CustomCollectOptions) (*CustomOutput, error) {
	if o.ResultFilename == "" {
		return nil, errors.New("collecting the custom benchmark: no result filename")
	}
	out := &CustomOutput{CustomFiles: CustomFiles{ResultDir: o.ResultDir}}
	concDir := regexp.MustCompile(`^conc_([0-9]+)$`)
	if o.ResultDir != "" {
		err := filepath.WalkDir(o.ResultDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == o.ResultDir {
					return fs.SkipAll
				}
				return err
			}
			if d.IsDir() {
				if m := concDir.FindStringSubmatch(d.Name()); m != nil && filepath.Dir(path) == o.ResultDir {
					c, _ := strconv.Atoi(m[1])
					out.ConcDirs = append(out.ConcDirs, c)
				}
				return nil
			}
			if d.Type().IsRegular() {
				info, err := d.Info()
				if err != nil {
					return err
				}
				out.Files++
				out.Bytes += info.Size()
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("collecting the custom benchmark's %s: %w", o.ResultDir, err)
		}
		sort.Ints(out.ConcDirs)
	}
	name := regexp.MustCompile(`^` + regexp.QuoteMeta(o.ResultFilename) + `_conc([0-9]+)\.json$`)
	seen := map[string]bool{}
	for _, dir := range append(append([]string{}, o.OutputDirs...), o.ResultDir) {
		if dir == "" {
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // an output directory the workload never wrote to
		}
		for _, e := range ents {
			m := name.FindStringSubmatch(e.Name())
			if m == nil || seen[e.Name()] || !e.Type().IsRegular() {
				continue
			}
			seen[e.Name()] = true
			c, _ := strconv.Atoi(m[1])
			out.Results = append(out.Results, readCustomResult(filepath.Join(dir, e.Name()), c))
		}
	}
	sort.Slice(out.Results, func(i, j int) bool { return out.Results[i].Concurrency < out.Results[j].Concurrency })
	return out, out.check(o)
}

func readCustomResult(path string, conc int) CustomResult {
	r := CustomResult{Path: path, Concurrency: conc, Metrics: map[string]float64{}}
	data, err := readlimit.ReadFile(path, MaxResultBytes)
	if err != nil {
		r.Note = err.Error()
		return r
	}
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		r.Note = "not a JSON object: " + err.Error()
		return r
	}
	for k, v := range top {
		switch x := v.(type) {
		case float64:
			r.Metrics[k] = x
		case bool:
			if x {
				r.Metrics[k] = 1
			} else {
				r.Metrics[k] = 0
			}
		}
	}
	// The workflow's gate: a truthy num_requests_successful.
	if r.Metrics["num_requests_successful"] > 0 {
		r.Valid = true
	} else {
		r.Note = "num_requests_successful is missing or 0"
	}
	return r
}

func (out *CustomOutput) check(o CustomCollectOptions) error {
	e := &CustomIncompleteError{Pattern: CustomPattern(o.ResultFilename)}
	have := map[int]bool{}
	for _, r := range out.Results {
		have[r.Concurrency] = true
		if !r.Valid {
			e.Invalid = append(e.Invalid, r)
		}
	}
	for _, c := range o.Concurrencies {
		if !have[c] {
			e.Missing = append(e.Missing, c)
		}
	}
	e.None = len(out.Results) == 0
	if e.None || len(e.Missing) > 0 || len(e.Invalid) > 0 {
		return e
	}
	return nil
}

// StageCustom copies the aggregated results into each of dirs under their
// own names (they already carry InferenceX's), atomically; a destination
// that is the source itself (the workspace staged into itself) is skipped.
func StageCustom(out *CustomOutput, overwrite bool, dirs ...string) ([]StagedFile, error) {
	var staged []StagedFile
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return staged, fmt.Errorf("staging custom results: %w", err)
		}
		for _, r := range out.Results {
			dst := filepath.Join(dir, filepath.Base(r.Path))
			if sameFile(r.Path, dst) {
				staged = append(staged, StagedFile{Source: r.Path, Dest: dst})
				continue
			}
			if err := atomicfile.CopyFile(r.Path, dst, atomicfile.Options{Overwrite: overwrite}); err != nil {
				return staged, fmt.Errorf("staging custom results: %w", err)
			}
			staged = append(staged, StagedFile{Source: r.Path, Dest: dst})
		}
	}
	return staged, nil
}

func sameFile(a, b string) bool {
	x, err := os.Stat(a)
	if err != nil {
		return false
	}
	y, err := os.Stat(b)
	return err == nil && os.SameFile(x, y)
}
