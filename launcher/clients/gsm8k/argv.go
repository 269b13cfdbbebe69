package gsm8k

import (
	"fmt"
	"strconv"
	"strings"
)

// Facts of InferenceX's lm-eval invocation (benchmark_lib.sh run_lm_eval).
const (
	// LMEvalCommit is the lm-evaluation-harness commit InferenceX force-installs
	// over the lm-eval[api] release.
	LMEvalCommit = "b315ef3b05176acc9732bb7fdec116abe1ecc476"
	// DefaultTasks is the task YAML path, relative to the InferenceX checkout.
	DefaultTasks = "utils/evals/gsm8k.yaml"
	// FallbackContextLength is used when no context length is known.
	FallbackContextLength = 16384
	// PromptReserve is left for the prompt when the context is long enough.
	PromptReserve = 4096
	// MaxOutputTokensCap bounds max_tokens.
	MaxOutputTokensCap = 16384
)

// MaxOutputTokens is the max_tokens InferenceX passes in --gen_kwargs for a
// context length: ctx-4096 when ctx > 4096, else ctx/2, capped at 16384.
func MaxOutputTokens(contextLength int) int {
	budget := contextLength / 2
	if contextLength > PromptReserve {
		budget = contextLength - PromptReserve
	}
	return min(budget, MaxOutputTokensCap)
}

// EvalContextLength is compute_eval_context_length: the requested benchmark
// context (ISL+OSL+256, or MAX_MODEL_LEN when the caller passes that instead)
// capped at the model's native maximum; the native maximum when nothing was
// requested; FallbackContextLength (or maxModelLen when set) when neither is
// known. Zero means unknown for every argument.
func EvalContextLength(requested, nativeMax, maxModelLen int) int {
	ctx := requested
	if ctx <= 0 {
		ctx = nativeMax
	}
	if nativeMax > 0 && ctx > nativeMax {
		ctx = nativeMax
	}
	if ctx <= 0 {
		if maxModelLen > 0 {
			return maxModelLen
		}
		return FallbackContextLength
	}
	return ctx
}

// LMEvalStep describes the lm-eval process InferenceX runs in the engine
// container against the frontend.
type LMEvalStep struct {
	Python        string // interpreter, "python3" when empty
	Model         string // served model name (MODEL_NAME)
	Port          int    // frontend port on the head node
	Host          string // "0.0.0.0" when empty, as InferenceX writes it
	APIKey        string // OPENAI_API_KEY, "EMPTY" when empty
	Concurrency   int    // num_concurrent (EVAL_CONCURRENT_REQUESTS)
	ContextLength int    // max_length (EVAL_MAX_MODEL_LEN); FallbackContextLength when 0
	Tasks         string // task YAML or name, DefaultTasks when empty
	IncludePath   string // --include_path, omitted when empty
	OutputPath    string // --output_path (EVAL_RESULT_DIR)
	Limit         int    // --limit, omitted when 0
}

// Argv is the command line, one argument per element (no shell quoting:
// the two comma-separated values are single arguments).
func (s LMEvalStep) Argv() ([]string, error) {
	if s.Model == "" {
		return nil, fmt.Errorf("lm-eval step: model name is empty")
	}
	if s.Port <= 0 || s.Port > 65535 {
		return nil, fmt.Errorf("lm-eval step: port %d out of range", s.Port)
	}
	if s.Concurrency < 1 {
		return nil, fmt.Errorf("lm-eval step: concurrency %d < 1", s.Concurrency)
	}
	if s.OutputPath == "" {
		return nil, fmt.Errorf("lm-eval step: output path is empty")
	}
	python := valueOr(s.Python, "python3")
	ctx := s.ContextLength
	if ctx <= 0 {
		ctx = FallbackContextLength
	}
	argv := []string{python, "-m", "lm_eval", "--model", "local-chat-completions", "--apply_chat_template"}
	if s.IncludePath != "" {
		argv = append(argv, "--include_path", s.IncludePath)
	}
	argv = append(argv,
		"--tasks", valueOr(s.Tasks, DefaultTasks),
		"--output_path", s.OutputPath,
		"--log_samples",
		"--model_args", strings.Join([]string{
			"model=" + s.Model,
			"base_url=http://" + valueOr(s.Host, "0.0.0.0") + ":" + strconv.Itoa(s.Port) + ChatCompletionsPath,
			"api_key=" + valueOr(s.APIKey, DefaultAPIKey),
			"eos_string=</s>",
			"max_retries=" + strconv.Itoa(DefaultMaxRetries),
			"num_concurrent=" + strconv.Itoa(s.Concurrency),
			"timeout=1800",
			"tokenized_requests=False",
			"max_length=" + strconv.Itoa(ctx),
		}, ","),
		"--gen_kwargs", "max_tokens="+strconv.Itoa(MaxOutputTokens(ctx))+",temperature=0,top_p=1",
	)
	if s.Limit > 0 {
		argv = append(argv, "--limit", strconv.Itoa(s.Limit))
	}
	return argv, nil
}

// Env is the environment the step needs besides the container's own:
// OPENAI_API_KEY, and PYTHONPATH led by the directory holding InferenceX's
// sitecustomize.py patch (reasoning_content fallback, no {"type": "text"}
// wrapping) when patchDir is set.
func (s LMEvalStep) Env(patchDir, pythonPath string) []string {
	env := []string{"OPENAI_API_KEY=" + valueOr(s.APIKey, DefaultAPIKey)}
	if patchDir != "" {
		pp := patchDir
		if pythonPath != "" {
			pp += ":" + pythonPath
		}
		env = append(env, "PYTHONPATH="+pp)
	}
	return env
}

// InstallArgvs are the two pip commands InferenceX runs before the eval:
// the lm-eval[api] release for its dependencies, then the pinned commit
// force-reinstalled without dependencies.
func InstallArgvs(python string) [][]string {
	python = valueOr(python, "python3")
	pip := []string{python, "-m", "pip", "install", "-q", "--no-cache-dir", "--break-system-packages"}
	return [][]string{
		append(append([]string{}, pip...), "lm-eval[api]"),
		append(append([]string{}, pip...), "--no-deps", "--force-reinstall",
			"https://github.com/EleutherAI/lm-evaluation-harness/archive/"+LMEvalCommit+".tar.gz"),
	}
}

func valueOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
