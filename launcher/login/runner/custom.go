package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// collectCustom reads what a custom benchmark left (its RESULT_DIR and the
// aggregated <RESULT_FILENAME>_conc<C>.json files in its output directory)
// and copies the aggregated files into the run's results, so the manifest
// lists them. The error names missing or invalid concurrencies.
func collectCustom(pl *plan.Plan, name string, overwrite bool) (*results.CustomOutput, error) {
	c := pl.Benchmark.Custom
	out, err := results.CollectCustom(results.CustomCollectOptions{
		ResultDir: c.ResultDir, OutputDirs: []string{c.OutputDir}, ResultFilename: name,
		Concurrencies: c.Concurrencies,
	})
	if out == nil {
		return nil, err
	}
	if _, serr := results.StageCustom(out, overwrite, filepath.Join(pl.Layout.Results, "custom")); serr != nil && err == nil {
		err = serr
	}
	return out, err
}

// benchmarkProvenance records in the manifest which benchmark client ran
// and why the plan chose it, or the custom command.
func benchmarkProvenance(pl *plan.Plan, p *results.Provenance) {
	bm := pl.Benchmark
	if bm.Type == "" {
		return
	}
	extra := map[string]string{}
	for k, v := range p.Extra {
		extra[k] = v
	}
	extra["benchmark_type"] = bm.Type
	if bm.Client != "" {
		extra["benchmark_client"] = string(bm.Client)
	}
	if bm.ClientReason != "" {
		extra["benchmark_client_reason"] = bm.ClientReason
	}
	if bm.CustomTokenizer != "" {
		extra["benchmark_custom_tokenizer"] = bm.CustomTokenizer
	}
	if bm.TokenizerMode != "" {
		extra["benchmark_tokenizer_mode"] = bm.TokenizerMode
	}
	if bm.Custom != nil {
		extra["benchmark_command"] = plan.QuoteArgv(bm.Custom.Argv)
	}
	if bm.Srtctl != nil {
		extra["benchmark_script"] = plan.QuoteArgv(bm.Srtctl.Argv)
	}
	if pl.Profiling != nil {
		extra["profiling_type"] = pl.Profiling.Type
	}
	p.Extra = extra
}

// fixedSequenceDirs are the directories directly under the run's logs
// whose names hold "isl" then "osl" and that hold raw SA-Bench results:
// where a custom fixed-sequence client (InferenceX's srt_fixed_sequence.sh,
// which writes /logs/sa-bench_isl_<I>_osl_<O>/results_concurrency_*.json)
// leaves its points, as copy_fixed_sequence_results finds them
// (find "$LOGS_DIR" -maxdepth 1 -type d -name "*isl*osl*").
func fixedSequenceDirs(logs string) []string {
	ents, err := os.ReadDir(logs)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		i := strings.Index(e.Name(), "isl")
		if !e.IsDir() || i < 0 || !strings.Contains(e.Name()[i+3:], "osl") {
			continue
		}
		dir := filepath.Join(logs, e.Name())
		if m, _ := filepath.Glob(filepath.Join(dir, "results_concurrency_*.json")); len(m) > 0 {
			out = append(out, dir)
		}
	}
	return out
}

// collectFixedSequence collects the points a custom fixed-sequence client
// wrote, one SA-Bench config directory at a time, checked like SA-Bench's
// own: every concurrency the workload was asked for (CONC_LIST) must have
// a valid result. found is false when the workload wrote none (then it is
// an aggregated-result workload such as agentic_srt.sh).
func collectFixedSequence(pl *plan.Plan) (points []results.CollectedPoint, found bool, err error) {
	dirs := fixedSequenceDirs(pl.Layout.Logs)
	if len(dirs) == 0 {
		return nil, false, nil
	}
	concs := pl.Benchmark.Custom.Concurrencies
	if len(concs) == 0 {
		return nil, true, errors.New("custom benchmark wrote SA-Bench results under " + pl.Layout.Logs + " but its concurrencies (CONC_LIST or CONC) are not known")
	}
	var errs []error
	for _, dir := range dirs {
		col, cerr := results.Collect(results.CollectOptions{ResultsDir: dir, Concurrencies: concs, Config: filepath.Base(dir)})
		if col != nil {
			for _, pt := range col.Points {
				// Into the run's results too, so the manifest lists them
				// as it lists SA-Bench's own.
				dst := filepath.Join(pl.Layout.Results, pt.Config, filepath.Base(pt.Path))
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					errs = append(errs, err)
				} else if err := atomicfile.CopyFile(pt.Path, dst, atomicfile.Options{Overwrite: true}); err != nil {
					errs = append(errs, fmt.Errorf("copying %s into the run's results: %w", pt.Path, err))
				} else {
					pt.Path = dst
				}
				points = append(points, pt)
			}
		}
		if cerr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(dir), cerr))
		}
	}
	return points, true, errors.Join(errs...)
}
