package workflow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// Env is the workflow's environment, one value per name. An empty value
// counts as unset, as InferenceX's request models read it
// (inferencex-e2e/infx/launch/request.py@03eaa88a, LaunchRequest.from_env).
type Env map[string]string

// EnvOf turns os.Environ()-style "NAME=value" entries into an Env.
func EnvOf(environ []string) Env {
	env := Env{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// get is name's value ("" when unset or empty).
func (e Env) get(name string) string { return e[name] }

// Request is one launch as the workflow describes it in its environment:
// the inputs `python -m infx.launch run` reads (request.py's SrtRequest,
// its multi-node and single-node models), parsed and checked once. Nothing
// after ParseRequest reads the environment for these values.
type Request struct {
	Runner    string // RUNNER_NAME
	Workspace string // GITHUB_WORKSPACE: the inferencex-e2e/ root the step cd'd into

	Image, Model, ModelPrefix      string // IMAGE, MODEL, MODEL_PREFIX
	Framework, Precision           string // FRAMEWORK, PRECISION
	SpecDecoding, ThinkingMode     string // SPEC_DECODING, THINKING_MODE
	ResultFilename                 string // RESULT_FILENAME (already bounded by the workflow)
	ExpName, RecipeFingerprint     string // EXP_NAME, RECIPE_FINGERPRINT
	Scenario                       string // SCENARIO_TYPE
	KVOffloading, KVOffloadBackend string // KV_OFFLOADING, KV_OFFLOAD_BACKEND

	// Multinode is IS_MULTINODE=true (only "true" counts); Agentic is
	// IS_AGENTIC=1 (only "1").
	Multinode, Agentic bool
	// RunEval and EvalOnly are RUN_EVAL and EVAL_ONLY ("true" only).
	RunEval, EvalOnly bool
	// RequirePower is REQUIRE_POWER in 1, true, TRUE, yes, YES.
	RequirePower bool

	// ConcList is CONC_LIST: whitespace-separated canonical positive
	// integers, each once (recipe.py's parse_concurrencies).
	ConcList []int
	// EvalConc is EVAL_CONC as given: one value or a space-separated list,
	// forwarded verbatim.
	EvalConc string
	// Conc, ISL, OSL: CONC, ISL, OSL (0 when unset).
	Conc, ISL, OSL int

	// SrtRecipe is SRT_RECIPE, <file>[:<selector>] under the lane's recipe
	// mirror; EvalSrtRecipe is EVAL_SRT_RECIPE, which an eval-only run
	// serves instead (lanes.py's srt_recipe).
	SrtRecipe, EvalSrtRecipe string

	// GPUCount is a single-node point's GPU_COUNT.
	GPUCount int

	// Env is the whole environment, for what is passed on by name.
	Env Env
}

// Recipe is the recipe this launch serves: EVAL_SRT_RECIPE on an eval-only
// run that names one, else SRT_RECIPE (lanes.py@71306020057, srt_recipe).
func (r *Request) Recipe() string {
	if r.EvalOnly && r.EvalSrtRecipe != "" {
		return r.EvalSrtRecipe
	}
	return r.SrtRecipe
}

// EvalConcurrency is the concurrency the eval runs at (one value or a
// space-separated list): EVAL_CONC when the environment sets it; else what
// InferenceX's eval of the point falls back to. A single-node point
// evaluates at its own concurrency, CONC: the single-node post_eval passes
// it (benchmarks/single_node/srt_eval.sh@f2c7776d, `--concurrency
// "$CONC"`; before it, srt_eval.sh@fe28a8b8 ran benchmark_lib.sh's
// run_eval, whose lm-eval takes `${EVAL_CONCURRENT_REQUESTS:-${CONC}}`,
// and set no EVAL_CONCURRENT_REQUESTS), never the native default of 64. A
// multi-node job evaluates at the highest of CONC_LIST, which the
// multi-node template exports as EVAL_CONC when the row has none
// (benchmark-multinode-tmpl.yml@00609a17, "Resolve the workflow's
// documented automatic eval-concurrency selection"). "" when neither is
// known (the planner's default then).
func (r *Request) EvalConcurrency() string {
	if r.EvalConc != "" {
		return r.EvalConc
	}
	if !r.Multinode {
		if r.Conc > 0 {
			return strconv.Itoa(r.Conc)
		}
		return ""
	}
	top := 0
	for _, c := range r.ConcList {
		top = max(top, c)
	}
	if top == 0 {
		return ""
	}
	return strconv.Itoa(top)
}

// JobName is the Slurm job's name: "inferencex-<runner>", because other
// repositories share the physical runner names and cancel jobs by the
// bare name (infx.launch.backends.slurm's srtctl_job_name).
func (r *Request) JobName() string { return JobNamePrefix + r.Runner }

// JobNamePrefix is what InferenceX puts before the runner's name.
const JobNamePrefix = "inferencex-"

// RequestError lists every missing and invalid variable at once, as
// request.py's _describe does, so one failed launch names all of them.
type RequestError struct {
	Missing []string
	Invalid []string
}

func (e *RequestError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "required environment variables are not set: "+strings.Join(e.Missing, ", "))
	}
	parts = append(parts, e.Invalid...)
	return strings.Join(parts, "; ")
}

// requestParser gathers a RequestError while reading the environment.
type requestParser struct {
	env Env
	err RequestError
}

func (p *requestParser) required(name string) string {
	v := p.env.get(name)
	if v == "" && !slices.Contains(p.err.Missing, name) {
		p.err.Missing = append(p.err.Missing, name)
	}
	return v
}

// flag is a boolean that only one spelling (or set) turns on; required
// flags must be set to something.
func (p *requestParser) flag(name string, required bool, truthy ...string) bool {
	v := p.env.get(name)
	if required {
		p.required(name)
	}
	return slices.Contains(truthy, v)
}

// integer is an optional (or required) decimal integer.
func (p *requestParser) integer(name string, required bool) int {
	v := p.env.get(name)
	if required {
		p.required(name)
	}
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		p.err.Invalid = append(p.err.Invalid, fmt.Sprintf("%s: %q is not an integer", name, v))
	}
	return n
}

// ParseRequest reads and checks the workflow's environment for `run`.
// Every variable a multi-node job needs (request.py's SrtRequest plus
// SRT_RECIPE) must be set, a single-node point's too
// (SingleNodeRequest); an error names every missing or invalid variable
// and is a configuration error (exit 2): nothing has been submitted.
func ParseRequest(env Env) (*Request, error) {
	p := &requestParser{env: env}
	r := &Request{Env: env}
	r.Runner = p.required("RUNNER_NAME")
	r.Workspace = p.required("GITHUB_WORKSPACE")
	r.Image = p.required("IMAGE")
	r.Framework = p.required("FRAMEWORK")
	r.ModelPrefix = p.required("MODEL_PREFIX")
	r.Precision = p.required("PRECISION")
	r.SpecDecoding = p.required("SPEC_DECODING")
	r.ResultFilename = p.required("RESULT_FILENAME")
	r.Agentic = p.flag("IS_AGENTIC", true, "1")
	r.RunEval = p.flag("RUN_EVAL", true, "true")
	r.EvalOnly = p.flag("EVAL_ONLY", true, "true")
	r.Multinode = p.flag("IS_MULTINODE", false, "true")
	r.RequirePower = p.flag("REQUIRE_POWER", false, "1", "true", "TRUE", "yes", "YES")
	r.ThinkingMode = env.get("THINKING_MODE")
	r.Model = env.get("MODEL")
	r.EvalConc = env.get("EVAL_CONC")
	r.ExpName, r.RecipeFingerprint = env.get("EXP_NAME"), env.get("RECIPE_FINGERPRINT")
	r.Scenario = env.get("SCENARIO_TYPE")
	r.KVOffloading, r.KVOffloadBackend = env.get("KV_OFFLOADING"), env.get("KV_OFFLOAD_BACKEND")
	r.SrtRecipe = p.required("SRT_RECIPE")
	r.EvalSrtRecipe = env.get("EVAL_SRT_RECIPE")
	if v := env.get("CONC_LIST"); v != "" {
		list, err := ParseConcList(v)
		if err != nil {
			p.err.Invalid = append(p.err.Invalid, "CONC_LIST: "+err.Error())
		}
		r.ConcList = list
	}
	single := !r.Multinode
	r.Conc = p.integer("CONC", single)
	r.ISL = p.integer("ISL", single)
	r.OSL = p.integer("OSL", single)
	if single {
		// request.py's SingleNodeRequest: the point's own topology and the
		// job script's inputs.
		r.Model = p.required("MODEL")
		for _, name := range []string{"TP", "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "EP_SIZE", "SALLOC_TIME_LIMIT"} {
			p.integer(name, true)
		}
		r.GPUCount = p.integer("GPU_COUNT", true)
		for _, name := range []string{"DP_ATTENTION", "RANDOM_RANGE_RATIO", "GPU_MONITOR_INTERVAL", "HF_HUB_CACHE"} {
			p.required(name)
		}
	}
	if v := env.get("EVAL_CONC"); v != "" {
		for _, w := range strings.Fields(v) {
			if n, err := strconv.Atoi(w); err != nil || n <= 0 {
				p.err.Invalid = append(p.err.Invalid, fmt.Sprintf("EVAL_CONC: %q is not a positive integer", w))
			}
		}
	}
	// request.py's _golden_curve_key: speculative AgentX throughput runs
	// select their golden acceptance curve by THINKING_MODE.
	if r.Agentic && r.SpecDecoding != "" && r.SpecDecoding != "none" && !r.EvalOnly && r.ThinkingMode == "" {
		p.err.Invalid = append(p.err.Invalid, "THINKING_MODE is required for speculative AgentX throughput runs")
	}
	if r.Runner != "" && strings.ContainsAny(r.Runner, "\n\x00") {
		p.err.Invalid = append(p.err.Invalid, fmt.Sprintf("RUNNER_NAME: %q holds a line break or NUL", r.Runner))
	}
	if len(p.err.Missing) > 0 || len(p.err.Invalid) > 0 {
		return r, exitcode.With(exitcode.Config, &p.err)
	}
	return r, nil
}

// ParseConcList reads CONC_LIST as recipe.py's parse_concurrencies does
// (inferencex-e2e/infx/launch/drivers/srt/recipe.py, stored id
// 70910930115): whitespace-separated canonical positive integers (ASCII
// digits, no sign, no leading zero), at least one, none repeated.
func ParseConcList(s string) ([]int, error) {
	var out []int
	for _, w := range strings.Fields(s) {
		n, err := strconv.Atoi(w)
		if !asciiDigits(w) || err != nil || strconv.Itoa(n) != w || n <= 0 {
			return nil, fmt.Errorf("entries must be canonical positive integers: %q", w)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("concurrencies must be positive unique integers: %d twice", n)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("concurrencies must be positive unique integers: none in %q", s)
	}
	return out, nil
}

func asciiDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
