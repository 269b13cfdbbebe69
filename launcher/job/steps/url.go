package steps

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/clients/sabench"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
)

// URLPlanName is the plan name of a benchmark or eval against a URL: what
// the summary is titled.
const URLPlanName = "slurmbench against a URL"

// URLBench describes SA-Bench points against an endpoint that is already
// serving, outside any run (`slurmbench bench --url`). Plan turns it into
// the plan a run would have, so the points run through the same code,
// write the same files under the same names, and print the same table.
type URLBench struct {
	URL   string // http(s)://host:port, the frontend
	Model string // the served model name
	ISL   int
	OSL   int
	// Concurrencies are the points, run in order.
	Concurrencies []int
	// NumPrompts per point; 0: sabench.PromptsPerConcurrency × C.
	NumPrompts int
	// Warmups per point; negative: sabench.WarmupsPerConcurrency × C; 0: none.
	Warmups int
	// RequestRate is "inf" (or "") or requests per second.
	RequestRate string
	// RangeRatio of the drawn lengths; 0: sabench.DefaultRangeRatio.
	RangeRatio float64
	// Goodput is the --goodput SLOs, "ttft:MS", "tpot:MS", "e2el:MS"
	// (benchmark_serving.py's form); none: no goodput.
	Goodput []string
	// Out is the results directory: the points go to
	// <Out>/sa-bench_isl_<I>_osl_<O>/ as in a run's results directory.
	Out string
	// GPUs name the result files (results_concurrency_<C>_gpus_<T>[_ctx_<P>_gen_<D>])
	// and divide the per-GPU figures; PrefillGPUs and DecodeGPUs are both 0
	// (aggregated) or both set, summing to GPUs.
	GPUs, PrefillGPUs, DecodeGPUs int
}

// Plan checks u and returns the plan of its points, every field a
// benchmark reads filled as the planner fills it for a run.
func (u URLBench) Plan() (*plan.Plan, error) {
	errs := checkEndpoint(u.URL, u.Model)
	if u.ISL < 1 || u.OSL < 1 {
		errs = append(errs, fmt.Errorf("--isl %d, --osl %d: both must be at least 1", u.ISL, u.OSL))
	}
	if len(u.Concurrencies) == 0 {
		errs = append(errs, errors.New("--conc: no concurrency given"))
	}
	seen := map[int]bool{}
	for _, c := range u.Concurrencies {
		if c < 1 || seen[c] {
			errs = append(errs, fmt.Errorf("--conc: concurrency %d must be positive and listed once", c))
		}
		seen[c] = true
	}
	if u.NumPrompts < 0 {
		errs = append(errs, fmt.Errorf("--num-prompts %d: must not be negative", u.NumPrompts))
	}
	if _, err := parseRequestRate(u.RequestRate); err != nil {
		errs = append(errs, fmt.Errorf("--req-rate: %w", err))
	}
	if u.RangeRatio < 0 || u.RangeRatio > 1 || math.IsNaN(u.RangeRatio) {
		errs = append(errs, fmt.Errorf("--range-ratio %v: want a number in [0, 1]", u.RangeRatio))
	}
	goodput, err := sabench.ParseGoodput(u.Goodput)
	if err != nil {
		errs = append(errs, fmt.Errorf("--goodput: %w", err))
	}
	gpus := plan.GPUCount{Total: u.GPUs, Prefill: u.PrefillGPUs, Decode: u.DecodeGPUs}
	mode := "disaggregated"
	switch {
	case u.GPUs < 1:
		errs = append(errs, fmt.Errorf("--gpus %d: must be at least 1", u.GPUs))
	case u.PrefillGPUs == 0 && u.DecodeGPUs == 0:
		mode, gpus.Agg = "aggregated", u.GPUs
	case u.PrefillGPUs < 1 || u.DecodeGPUs < 1 || u.PrefillGPUs+u.DecodeGPUs != u.GPUs:
		errs = append(errs, fmt.Errorf("--prefill-gpus %d + --decode-gpus %d: both at least 1 and summing to --gpus %d", u.PrefillGPUs, u.DecodeGPUs, u.GPUs))
	}
	out, err := filepath.Abs(u.Out)
	if u.Out == "" || err != nil {
		errs = append(errs, fmt.Errorf("--out %q: want a directory", u.Out))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	pl := urlPlan(u.Model, out)
	pl.Mode, pl.GPUs = mode, gpus
	pl.Benchmark = plan.Benchmark{
		Type: "sa-bench", Client: profile.BenchNative, ISL: u.ISL, OSL: u.OSL,
		RangeRatio: u.RangeRatio, RequestRate: u.RequestRate, Goodput: goodput,
		ResultDir: filepath.Join(out, results.ConfigName(u.ISL, u.OSL)),
	}
	if pl.Benchmark.RangeRatio == 0 {
		pl.Benchmark.RangeRatio = sabench.DefaultRangeRatio
	}
	if pl.Benchmark.RequestRate == "" {
		pl.Benchmark.RequestRate = "inf"
	}
	for _, c := range u.Concurrencies {
		name, err := pl.ResultFile(c)
		if err != nil {
			return nil, fmt.Errorf("concurrency %d: %w", c, err)
		}
		pt := plan.BenchPoint{Concurrency: c, NumPrompts: u.NumPrompts, WarmupPrompts: u.Warmups, ResultFile: name}
		if pt.NumPrompts == 0 {
			pt.NumPrompts = sabench.PromptsPerConcurrency * c
		}
		if pt.WarmupPrompts < 0 {
			pt.WarmupPrompts = sabench.WarmupsPerConcurrency * c
		}
		pl.Points = append(pl.Points, pt)
	}
	return pl, nil
}

// URLEval describes gsm8k against an endpoint that is already serving
// (`slurmbench eval --url`).
type URLEval struct {
	URL   string
	Model string
	// DataDir holds gsm8k's test and train splits (test.jsonl, train.jsonl);
	// "" uses the splits built into the binary.
	DataDir string
	// Concurrency of the eval; 0: DefaultEvalConcurrency.
	Concurrency int
	// Out is the results directory; the files go to <Out>/eval/ as in a run.
	Out string
}

// Plan checks e and returns the plan of its eval.
func (e URLEval) Plan() (*plan.Plan, error) {
	errs := checkEndpoint(e.URL, e.Model)
	if e.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("--concurrency %d: must not be negative", e.Concurrency))
	}
	out, err := filepath.Abs(e.Out)
	if e.Out == "" || err != nil {
		errs = append(errs, fmt.Errorf("--out %q: want a directory", e.Out))
	}
	data := ""
	if e.DataDir != "" {
		if data, err = filepath.Abs(e.DataDir); err != nil {
			errs = append(errs, fmt.Errorf("--data-dir %q: %w", e.DataDir, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	pl := urlPlan(e.Model, out)
	pl.Eval = plan.Eval{Enabled: true, Only: true, Client: profile.EvalNative, Concurrency: e.Concurrency,
		ResultDir: filepath.Join(out, "eval"), DataDir: data}
	return pl, nil
}

func urlPlan(model, out string) *plan.Plan {
	return &plan.Plan{
		Version: plan.PlanVersion, Name: URLPlanName, RunDir: out,
		Model: plan.Model{ServedName: model},
		// Only the results of a run's layout: out plays its results/.
		Layout: rundir.Layout{Results: out, Progress: filepath.Join(out, rundir.ProgressName)},
	}
}

// checkEndpoint checks the flags that name the endpoint and its model.
func checkEndpoint(url, model string) []error {
	var errs []error
	if err := checkURL(url); err != nil {
		errs = append(errs, err)
	}
	if model == "" {
		errs = append(errs, errors.New("--model: required (the served model name)"))
	}
	return errs
}

// checkURL is the one-line refusal of a frontend URL without a scheme or
// host, before anything is sent.
func checkURL(s string) error {
	if s == "" {
		return errors.New("--url: required (the endpoint, http://host:port)")
	}
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return fmt.Errorf("--url %q: no scheme; want http://host:port or https://host:port", s)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("--url %q: %w", s, err)
	case u.Host == "":
		return fmt.Errorf("--url %q: no host; want http://host:port", s)
	case u.Path != "" && u.Path != "/":
		return fmt.Errorf("--url %q: give the server without a path (the endpoint is chosen with --endpoint)", s)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("--url %q: give the server without a query or fragment", s)
	}
	return nil
}
