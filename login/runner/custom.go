package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/plan"
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
		Concurrencies: customConcurrencies(pl, os.LookupEnv),
	})
	if out == nil {
		return nil, err
	}
	if _, serr := results.StageCustom(out, overwrite, filepath.Join(pl.Layout.Results, "custom")); serr != nil && err == nil {
		err = serr
	}
	return out, err
}

// customConcurrencies are the concurrencies the workload is asked for as
// agentic_srt.sh reads them, ${CONC_LIST:-$CONC}, from the environment the
// job gives it: the process's own (benchmark.env) over what lookup (the
// submitting environment, which the job inherits) holds.
func customConcurrencies(pl *plan.Plan, lookup func(string) (string, bool)) []int {
	for _, p := range pl.Processes {
		if p.Role != plan.RoleBenchmark {
			continue
		}
		get := func(k string) string {
			if v, ok := p.Env[k]; ok {
				return v
			}
			v, _ := lookup(k)
			return v
		}
		list := get("CONC_LIST")
		if list == "" {
			list = get("CONC")
		}
		var out []int
		for _, f := range strings.Fields(list) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				return nil // not a list slurmbench can read: do not guess
			}
			out = append(out, n)
		}
		return out
	}
	return nil
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
