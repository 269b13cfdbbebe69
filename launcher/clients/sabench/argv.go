package sabench

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/results"
)

// DefaultContainerBackend is the --backend of the sa-bench step: in
// benchmark_serving.py "vllm" selects the openai-completions request function
// (streaming /v1/completions with usage), which every frontend speaks.
const DefaultContainerBackend = "vllm"

// Params are the inputs of the sa-bench container step: one point of
// InferenceX's run_benchmark_serving (benchmarks/benchmark_lib.sh),
// which runs the official benchmark_serving.py.
type Params struct {
	Python string // interpreter in the container; default "python3"
	// Script is the absolute path of utils/bench_serving/benchmark_serving.py
	// as the container sees it.
	Script  string
	Model   string // --model (the served model name)
	Backend string // --backend; default DefaultContainerBackend
	BaseURL string // --base-url, e.g. http://localhost:8000

	InputLen   int     // --random-input-len
	OutputLen  int     // --random-output-len
	RangeRatio float64 // --random-range-ratio; default DefaultRangeRatio

	Concurrency int // --max-concurrency
	// NumPrompts defaults to PromptsPerConcurrency·Concurrency; Profile
	// forces it to Concurrency, as PROFILE=1 does.
	NumPrompts int
	// NumWarmups defaults to WarmupsPerConcurrency·Concurrency.
	NumWarmups int

	ResultDir      string // --result-dir, absolute
	ResultFilename string // --result-filename, a base name ending in .json

	Endpoint        string // --endpoint, when set
	UseChatTemplate bool   // --use-chat-template
	DSV4            bool   // --dsv4 (implies --use-chat-template)
	TrustRemoteCode bool   // --trust-remote-code
	Tokenizer       string // --tokenizer, when set
	TokenizerMode   string // --tokenizer-mode, when set
	// CustomTokenizer is a Python tokenizer class (module.Class) the client
	// loads instead of the HF one (--custom-tokenizer, srt-slurm's flag).
	CustomTokenizer string
	Profile         bool // --profile
	// MetricPercentiles, when set, is passed as --metric-percentiles; the
	// InferenceX copy's default is "90,99,99.9", srt-slurm's copy's is "99".
	MetricPercentiles string
}

// Check reports missing or unusable parameters; ContainerArgv assumes them checked.
func (p Params) Check() error {
	var errs []error
	if !path.IsAbs(p.Script) {
		errs = append(errs, fmt.Errorf("benchmark_serving.py path %q must be absolute", p.Script))
	}
	if !path.IsAbs(p.ResultDir) {
		errs = append(errs, fmt.Errorf("result directory %q must be absolute", p.ResultDir))
	}
	if p.ResultFilename == "" || strings.Contains(p.ResultFilename, "/") || !strings.HasSuffix(p.ResultFilename, ".json") {
		errs = append(errs, fmt.Errorf("result file name %q must be a base name ending in .json", p.ResultFilename))
	}
	if p.Model == "" {
		errs = append(errs, errors.New("model is required"))
	}
	if !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
		errs = append(errs, fmt.Errorf("base URL %q: want http://host:port", p.BaseURL))
	}
	if p.InputLen < 1 || p.OutputLen < 1 {
		errs = append(errs, fmt.Errorf("input and output lengths must be at least 1 (got %d and %d)", p.InputLen, p.OutputLen))
	}
	if p.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency must be at least 1 (got %d)", p.Concurrency))
	}
	if p.NumPrompts < 0 || p.NumWarmups < 0 {
		errs = append(errs, errors.New("prompt and warmup counts must not be negative"))
	}
	if p.RangeRatio < 0 || p.RangeRatio > 1 {
		errs = append(errs, fmt.Errorf("range ratio must be in [0, 1] (got %v)", p.RangeRatio))
	}
	return errors.Join(errs...)
}

// ContainerArgv is the sa-bench step's command, flag for flag as
// InferenceX's run_benchmark_serving builds it:
//
//	python3 <script> --model M --backend B --base-url URL --dataset-name random
//	  --random-input-len ISL --random-output-len OSL --random-range-ratio R
//	  --num-prompts N --max-concurrency C --request-rate inf --ignore-eos [--profile]
//	  --save-result --num-warmups W --percentile-metrics ttft,tpot,itl,e2el
//	  --result-dir DIR --result-filename NAME [--endpoint E] [--use-chat-template]
//	  [--dsv4] [--trust-remote-code] [--tokenizer T] [--tokenizer-mode M]
//
// followed by [--custom-tokenizer X] and [--metric-percentiles P] when set.
func ContainerArgv(p Params) []string {
	python := p.Python
	if python == "" {
		python = "python3"
	}
	backend := p.Backend
	if backend == "" {
		backend = DefaultContainerBackend
	}
	ratio := p.RangeRatio
	if ratio == 0 {
		ratio = DefaultRangeRatio
	}
	prompts := p.NumPrompts
	if prompts == 0 {
		prompts = PromptsPerConcurrency * p.Concurrency
	}
	if p.Profile {
		prompts = p.Concurrency
	}
	warmups := p.NumWarmups
	if warmups == 0 {
		warmups = WarmupsPerConcurrency * p.Concurrency
	}
	itoa := strconv.Itoa
	argv := []string{
		python, p.Script,
		"--model", p.Model,
		"--backend", backend,
		"--base-url", p.BaseURL,
		"--dataset-name", "random",
		"--random-input-len", itoa(p.InputLen),
		"--random-output-len", itoa(p.OutputLen),
		"--random-range-ratio", strconv.FormatFloat(ratio, 'f', -1, 64),
		"--num-prompts", itoa(prompts),
		"--max-concurrency", itoa(p.Concurrency),
		"--request-rate", "inf",
		"--ignore-eos",
	}
	if p.Profile {
		argv = append(argv, "--profile")
	}
	argv = append(argv,
		"--save-result",
		"--num-warmups", itoa(warmups),
		"--percentile-metrics", strings.Join(results.MetricNames, ","),
		"--result-dir", p.ResultDir,
		"--result-filename", p.ResultFilename,
	)
	if p.Endpoint != "" {
		argv = append(argv, "--endpoint", p.Endpoint)
	}
	if p.UseChatTemplate || p.DSV4 {
		argv = append(argv, "--use-chat-template")
	}
	if p.DSV4 {
		argv = append(argv, "--dsv4")
	}
	if p.TrustRemoteCode {
		argv = append(argv, "--trust-remote-code")
	}
	if p.Tokenizer != "" {
		argv = append(argv, "--tokenizer", p.Tokenizer)
	}
	if p.TokenizerMode != "" {
		argv = append(argv, "--tokenizer-mode", p.TokenizerMode)
	}
	if p.CustomTokenizer != "" {
		argv = append(argv, "--custom-tokenizer", p.CustomTokenizer)
	}
	if p.MetricPercentiles != "" {
		argv = append(argv, "--metric-percentiles", p.MetricPercentiles)
	}
	return argv
}
