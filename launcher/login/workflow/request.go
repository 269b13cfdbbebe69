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

func (p *requestParser) missing(name string) {
	if !slices.Contains(p.err.Missing, name) {
		p.err.Missing = append(p.err.Missing, name)
	}
}

func (p *requestParser) invalid(name, msg string) {
	p.err.Invalid = append(p.err.Invalid, name+": "+msg)
}

// intMessage is what InferenceX's request models say of a variable that
// is not an integer: pydantic's message after the name, never the value
// (request.py's _describe: "never echo values (the env holds secrets)").
const intMessage = "Input should be a valid integer, unable to parse string as an integer"

// pyInt reads an integer as the request models' int fields do from a
// string: surrounding whitespace ignored, an optional sign, decimal digits.
func pyInt(v string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return n, err == nil
}

// field kinds of the request models (request.py@4b2ffc9c).
type fieldKind int

const (
	textField    fieldKind = iota
	intField               // int: pyInt, else intMessage
	intListField           // IntList: each whitespace-separated word an int
)

// requestField is one variable of the launch path's request model.
type requestField struct {
	name     string
	kind     fieldKind
	required bool
	// singleOnly: SingleNodeRequest's own field, which a multi-node
	// request does not read at all.
	singleOnly bool
}

// requestFields are the variables the launch path's model reads, in the
// order its fields are declared — LaunchRequest's, then SrtRequest's, then
// SingleNodeRequest's (a field a subclass redeclares keeps its first
// place) — which is the order InferenceX names missing and invalid ones
// in (inferencex-e2e/infx/launch/request.py@4b2ffc9c, the newest stored
// version with llm-d's LlmdRequest; stored id 70926830897 is the same
// models with more comments and no LlmdRequest). SRT_RECIPE, which this
// version reads on the single-node path only, is required on the
// multi-node path too: today's master rows name their recipe with it (the
// lanes' srt_recipe, lanes.py stored id 71306020057).
func requestFields(single bool) []requestField {
	return []requestField{
		{"RUNNER_NAME", textField, true, false},
		{"GITHUB_WORKSPACE", textField, true, false},
		{"MODEL", textField, single, false},
		{"MODEL_PREFIX", textField, true, false},
		{"IMAGE", textField, true, false},
		{"FRAMEWORK", textField, true, false},
		{"PRECISION", textField, true, false},
		{"SPEC_DECODING", textField, true, false},
		{"IS_AGENTIC", textField, true, false},
		{"CONC", intField, single, false},
		{"RUN_EVAL", textField, true, false},
		{"EVAL_ONLY", textField, true, false},
		{"SALLOC_TIME_LIMIT", intField, single, false},
		{"ENROOT_IMPORT_TIME_LIMIT", intField, false, false},
		{"RESULT_FILENAME", textField, true, false},
		{"CONC_LIST", intListField, false, false},
		{"SRT_RECIPE", textField, true, false},
		{"TP", intField, single, true},
		{"PP_SIZE", intField, single, true},
		{"DCP_SIZE", intField, single, true},
		{"PCP_SIZE", intField, single, true},
		{"EP_SIZE", intField, single, true},
		{"DP_ATTENTION", textField, single, true},
		{"GPU_COUNT", intField, single, true},
		{"ISL", intField, single, true},
		{"OSL", intField, single, true},
		{"RANDOM_RANGE_RATIO", textField, single, true},
		{"GPU_MONITOR_INTERVAL", textField, single, true},
		{"HF_HUB_CACHE", textField, single, true},
	}
}

// check reads the fields in order, naming each missing and invalid one.
// ISL, OSL, TP and the other topology integers are the single-node
// model's: a multi-node request does not read them, so a value there that
// is not an integer is not refused (and is read as unset).
func (p *requestParser) check(single bool) {
	for _, f := range requestFields(single) {
		if f.singleOnly && !single {
			continue
		}
		v := p.env.get(f.name)
		if v == "" {
			if f.required {
				p.missing(f.name)
			}
			continue
		}
		switch f.kind {
		case intField:
			if _, ok := pyInt(v); !ok {
				p.invalid(f.name, intMessage)
			}
		case intListField:
			for i, w := range strings.Fields(v) {
				if _, ok := pyInt(w); !ok {
					p.invalid(f.name+"."+strconv.Itoa(i), intMessage)
				}
			}
		}
	}
}

// integer is name's value as an integer (0 when unset or not one).
func (p *requestParser) integer(name string) int {
	n, _ := pyInt(p.env.get(name))
	return n
}

// ParseRequest reads and checks the workflow's environment for `run`.
// Every variable a multi-node job needs (request.py's SrtRequest plus
// SRT_RECIPE) must be set, a single-node point's too
// (SingleNodeRequest); an error names every missing or invalid variable
// (never its value) and is a configuration error (exit 2): nothing has
// been submitted. InferenceX's launcher exits 1 here; slurmbench's exit
// codes say which layer failed (docs/exit-codes.md), and both fail the
// step.
func ParseRequest(env Env) (*Request, error) {
	p := &requestParser{env: env}
	r := &Request{Env: env}
	r.Multinode = env.get("IS_MULTINODE") == "true"
	single := !r.Multinode
	p.check(single)
	r.Runner = env.get("RUNNER_NAME")
	r.Workspace = env.get("GITHUB_WORKSPACE")
	r.Image = env.get("IMAGE")
	r.Framework = env.get("FRAMEWORK")
	r.ModelPrefix = env.get("MODEL_PREFIX")
	r.Precision = env.get("PRECISION")
	r.SpecDecoding = env.get("SPEC_DECODING")
	r.ResultFilename = env.get("RESULT_FILENAME")
	r.Agentic = env.get("IS_AGENTIC") == "1"
	r.RunEval = env.get("RUN_EVAL") == "true"
	r.EvalOnly = env.get("EVAL_ONLY") == "true"
	r.RequirePower = slices.Contains([]string{"1", "true", "TRUE", "yes", "YES"}, env.get("REQUIRE_POWER"))
	r.ThinkingMode = env.get("THINKING_MODE")
	r.Model = env.get("MODEL")
	r.EvalConc = env.get("EVAL_CONC")
	r.ExpName, r.RecipeFingerprint = env.get("EXP_NAME"), env.get("RECIPE_FINGERPRINT")
	r.Scenario = env.get("SCENARIO_TYPE")
	r.KVOffloading, r.KVOffloadBackend = env.get("KV_OFFLOADING"), env.get("KV_OFFLOAD_BACKEND")
	r.SrtRecipe = env.get("SRT_RECIPE")
	r.EvalSrtRecipe = env.get("EVAL_SRT_RECIPE")
	fieldErrors := len(p.err.Missing) > 0 || len(p.err.Invalid) > 0
	if v := env.get("CONC_LIST"); v != "" && !slices.ContainsFunc(p.err.Invalid, func(s string) bool { return strings.HasPrefix(s, "CONC_LIST.") }) {
		// Beyond the model's integers, the concurrencies InferenceX's
		// recipe preparation accepts (recipe.py's parse_concurrencies);
		// slurmbench plans CONC_LIST on every row, so it checks them on
		// every row.
		list, err := ParseConcList(v)
		if err != nil {
			p.invalid("CONC_LIST", err.Error())
		}
		r.ConcList = list
	}
	r.Conc, r.ISL, r.OSL = p.integer("CONC"), p.integer("ISL"), p.integer("OSL")
	r.GPUCount = p.integer("GPU_COUNT")
	if v := env.get("EVAL_CONC"); v != "" {
		// InferenceX forwards EVAL_CONC to the eval verbatim; slurmbench
		// plans the eval at it, so each entry must be a concurrency.
		for _, w := range strings.Fields(v) {
			if n, err := strconv.Atoi(w); err != nil || n <= 0 {
				p.invalid("EVAL_CONC", "each entry must be a positive integer")
				break
			}
		}
	}
	// request.py's _golden_curve_key, a model validator that runs only
	// once every field is valid: speculative AgentX throughput runs select
	// their golden acceptance curve by THINKING_MODE.
	if !fieldErrors && r.Agentic && r.SpecDecoding != "none" && !r.EvalOnly && r.ThinkingMode == "" {
		p.err.Invalid = append(p.err.Invalid, "THINKING_MODE is required for speculative AgentX throughput runs")
	}
	if r.Runner != "" && strings.ContainsAny(r.Runner, "\n\x00") {
		p.invalid("RUNNER_NAME", "must not hold a line break or NUL")
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
