package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// DefaultEvalConcurrency is InferenceX's num_concurrent when nothing sets it.
const DefaultEvalConcurrency = 64

// evalPromptMargin is what compute_eval_context_length adds to ISL+OSL.
const evalPromptMargin = 256

// Paths inside an InferenceX checkout the lm-eval client uses.
const (
	lmEvalPatch     = "utils/evals/patches/lm_eval_sitecustomize.py"
	lmEvalOutputDir = "lm-eval-output" // lm-eval's own tree, under the eval result directory
	lmEvalPatchDir  = ".lm-eval-patch" // holds the patch as sitecustomize.py
)

// EvalOptions are what the eval step needs beyond the plan.
type EvalOptions struct {
	// Frontend is the serving endpoint, http://host:port.
	Frontend string
	// ModelPrefix picks the threshold (models.<prefix> in thresholds.yaml)
	// and is written as meta_env.json's infmax_model_prefix.
	ModelPrefix string
	// Limit evaluates only the first Limit documents; 0 = all 1319.
	Limit int
	// ContextLength overrides the derived one (EVAL_MAX_MODEL_LEN).
	ContextLength int
	// Getenv reads the workflow's variables for meta_env.json and
	// MAX_MODEL_LEN; default os.Getenv.
	Getenv func(string) string
	// Out gets the scores; Log the progress and lm-eval's output. Nil discards.
	Out, Log io.Writer
	// ProgressInterval is how often the native eval logs; default 10 s.
	ProgressInterval time.Duration
	// Progress, when set, gets every finished document of the native eval
	// instead of the throttled log lines (it must be safe for concurrent use).
	Progress func(done, total int)

	// For the lm-eval client: the InferenceX checkout as the container sees
	// it (working directory, task YAML, sitecustomize patch), whether to pip
	// install the pinned lm-eval first (as InferenceX does), and the runner.
	Workspace     string
	InstallLMEval bool
	Exec          ExecFunc
}

// EvalResult is what an eval left behind.
type EvalResult struct {
	// Score is the results file as every reader reads it: what the gate
	// checks.
	Score         *results.GSM8KScore
	Files         gsm8k.Files
	ContextLength int
	MaxTokens     int
	// Batch is one entry per concurrency of a batched eval (plan.Eval's
	// Concurrencies), in the order run; Score and Files are then the first
	// completed one's.
	Batch []BatchEval
}

// BatchEval is one concurrency of a batched eval: its scores and staged
// files, or why it failed.
type BatchEval struct {
	Concurrency int
	Score       *results.GSM8KScore
	Files       []string // staged names, <stem>_conc<N>.json(l)
	Err         error
}

// CheckEval reports what makes the plan's eval impossible to run with opts:
// a configuration error.
func CheckEval(pl *plan.Plan, opts EvalOptions) error {
	e := pl.Eval
	var errs []error
	if !e.Enabled {
		errs = append(errs, errors.New("the plan has no eval step (eval.enabled is false)"))
	}
	if !filepath.IsAbs(e.ResultDir) {
		errs = append(errs, fmt.Errorf("eval result_dir %q is not absolute", e.ResultDir))
	}
	if pl.Model.ServedName == "" {
		errs = append(errs, errors.New("model served_name is empty"))
	}
	for i, c := range e.Concurrencies {
		if c <= 0 || slices.Contains(e.Concurrencies[:i], c) {
			errs = append(errs, fmt.Errorf("eval concurrencies %v: each must be positive and listed once", e.Concurrencies))
			break
		}
	}
	if e.Concurrency < 0 || opts.Limit < 0 || opts.ContextLength < 0 {
		errs = append(errs, fmt.Errorf("eval concurrency %d, limit %d and context length %d must not be negative", e.Concurrency, opts.Limit, opts.ContextLength))
	}
	// A native eval with data_dir "" reads the splits built into the binary.
	if e.Client == profile.EvalLMEval {
		if opts.Workspace == "" {
			errs = append(errs, errors.New("the lm-eval client needs the InferenceX workspace (with "+gsm8k.DefaultTasks+")"))
		}
		if _, _, err := hostPort(opts.Frontend); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Eval runs gsm8k against the frontend, writes lm-eval's result files and
// meta_env.json into plan.Eval.ResultDir, and checks the scores against
// InferenceX's thresholds. A score below its threshold is a
// *gsm8k.ThresholdError returned with the (written) result; an unreachable
// frontend is a *FrontendError.
func Eval(ctx context.Context, pl *plan.Plan, opts EvalOptions) (*EvalResult, error) {
	if err := CheckEval(pl, opts); err != nil {
		return nil, err
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if err := checkFrontend(ctx, opts.Frontend); err != nil {
		return nil, err
	}
	ctxLen := evalContextLength(pl, opts)
	er := &EvalResult{ContextLength: ctxLen, MaxTokens: gsm8k.MaxOutputTokens(ctxLen)}
	meta := metaEnv(pl, opts)
	if len(pl.Eval.Concurrencies) > 1 {
		return evalBatch(ctx, pl, opts, er, meta)
	}
	var err error
	if pl.Eval.Client == profile.EvalLMEval {
		er.Score, er.Files, err = runLMEval(ctx, pl, opts, ctxLen, meta)
	} else {
		er.Score, er.Files, err = runNativeEval(ctx, pl, opts, er.MaxTokens, ctxLen, meta)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(orDiscard(opts.Out), scoreLine(er.Score, er.Files.Results))
	return er, gsm8k.CheckThresholds(er.Score, opts.ModelPrefix)
}

func concurrency(pl *plan.Plan) int {
	if pl.Eval.Concurrency > 0 {
		return pl.Eval.Concurrency
	}
	return DefaultEvalConcurrency
}

func runNativeEval(ctx context.Context, pl *plan.Plan, opts EvalOptions, maxTokens, ctxLen int, meta gsm8k.MetaEnv) (*results.GSM8KScore, gsm8k.Files, error) {
	test, train, err := gsm8k.LoadDir(pl.Eval.DataDir)
	if err != nil {
		return nil, gsm8k.Files{}, fmt.Errorf("loading gsm8k data: %w", err)
	}
	progress := opts.Progress
	if progress == nil {
		progress = throttledProgress(opts.Log, opts.ProgressInterval)
	}
	rep, err := gsm8k.Run(ctx, gsm8k.Options{
		BaseURL: opts.Frontend, Model: pl.Model.ServedName, Concurrency: concurrency(pl),
		MaxTokens: maxTokens, Limit: opts.Limit, ContextLength: ctxLen,
		Progress: progress,
	}, test, train)
	if err != nil {
		return nil, gsm8k.Files{}, err
	}
	files, err := rep.Write(pl.Eval.ResultDir, gsm8k.WriteOptions{LogSamples: true, MetaEnv: &meta})
	if err != nil {
		return nil, files, fmt.Errorf("writing gsm8k results: %w", err)
	}
	score, err := results.ReadGSM8K(files.Results)
	return score, files, err
}

// throttledProgress logs "gsm8k: k/n documents" at most once per interval,
// and the last document always.
func throttledProgress(log io.Writer, interval time.Duration) func(done, total int) {
	if log == nil {
		return nil
	}
	if interval <= 0 {
		interval = 10 * time.Second
	}
	var mu sync.Mutex
	last := time.Now()
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done < total && time.Since(last) < interval {
			return
		}
		last = time.Now()
		fmt.Fprintf(log, "gsm8k: %d/%d documents\n", done, total)
	}
}

// runLMEval runs InferenceX's lm-eval invocation (this step runs in the
// engine container then) and flattens its results*.json and sample*.jsonl
// into the result directory, as InferenceX stages them.
func runLMEval(ctx context.Context, pl *plan.Plan, opts EvalOptions, ctxLen int, meta gsm8k.MetaEnv) (*results.GSM8KScore, gsm8k.Files, error) {
	var files gsm8k.Files
	run := opts.Exec
	if run == nil {
		run = ExecOS
	}
	log := orDiscard(opts.Log)
	dir := pl.Eval.ResultDir
	host, port, _ := hostPort(opts.Frontend) // checked by CheckEval
	step := gsm8k.LMEvalStep{
		Model: pl.Model.ServedName, Host: host, Port: port, Concurrency: concurrency(pl),
		ContextLength: ctxLen, OutputPath: filepath.Join(dir, lmEvalOutputDir), Limit: opts.Limit,
	}
	argv, err := step.Argv()
	if err != nil {
		return nil, files, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, files, fmt.Errorf("creating eval result directory: %w", err)
	}
	if opts.InstallLMEval {
		for _, install := range gsm8k.InstallArgvs("") {
			if err := run(ctx, Command{Argv: install, Dir: opts.Workspace, Stdout: log, Stderr: log}); err != nil {
				return nil, files, fmt.Errorf("installing lm-eval: %w", err)
			}
		}
	}
	patchDir, err := stagePatch(opts.Workspace, dir)
	if err != nil {
		return nil, files, err
	}
	start := time.Now().Truncate(time.Second)
	cmd := Command{Argv: argv, Dir: opts.Workspace, Env: step.Env(patchDir, opts.Getenv("PYTHONPATH")), Stdout: log, Stderr: log}
	if err := run(ctx, cmd); err != nil {
		return nil, files, fmt.Errorf("lm-eval: %w", err)
	}
	found, err := newestLMEvalFiles(step.OutputPath, start)
	if err != nil {
		return nil, files, err
	}
	for _, src := range found {
		dst := filepath.Join(dir, filepath.Base(src))
		if err := atomicfile.CopyFile(src, dst, atomicfile.Options{}); err != nil {
			return nil, files, fmt.Errorf("staging lm-eval output: %w", err)
		}
		if strings.HasPrefix(filepath.Base(src), "results") {
			files.Results = dst
		} else {
			files.Samples = dst
		}
	}
	res, err := results.ReadGSM8K(files.Results)
	if err != nil {
		return nil, files, err
	}
	files.MetaEnv = filepath.Join(dir, "meta_env.json")
	if err := gsm8k.WriteMetaEnv(files.MetaEnv, meta); err != nil {
		return nil, files, err
	}
	return res, files, nil
}

// stagePatch copies InferenceX's lm-eval patch as sitecustomize.py into a
// directory for PYTHONPATH; "" when the workspace has no patch.
func stagePatch(workspace, resultDir string) (string, error) {
	src := filepath.Join(workspace, lmEvalPatch)
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	dir := filepath.Join(resultDir, lmEvalPatchDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("staging the lm-eval patch: %w", err)
	}
	if err := atomicfile.CopyFile(src, filepath.Join(dir, "sitecustomize.py"), atomicfile.Options{Overwrite: true}); err != nil {
		return "", fmt.Errorf("staging the lm-eval patch: %w", err)
	}
	return dir, nil
}

// newestLMEvalFiles finds the newest results*.json lm-eval wrote under root
// (in <root>/<model>/) since start, and the samples file of the same stamp.
func newestLMEvalFiles(root string, since time.Time) ([]string, error) {
	var newest string
	var newestTime time.Time
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if !strings.HasPrefix(name, "results") || !strings.HasSuffix(name, ".json") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.ModTime().Before(since) && info.ModTime().After(newestTime) {
			newest, newestTime = path, info.ModTime()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finding lm-eval results: %w", err)
	}
	if newest == "" {
		return nil, fmt.Errorf("lm-eval wrote no results*.json under %s", root)
	}
	found := []string{newest}
	stamp := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(newest), "results"), ".json")
	samples, _ := filepath.Glob(filepath.Join(filepath.Dir(newest), "samples_*"+stamp+".jsonl"))
	return append(found, samples...), nil
}

// evalContextLength mirrors InferenceX's compute_eval_context_length:
// ISL+OSL+256 (else MAX_MODEL_LEN) capped at the model's
// max_position_embeddings, else MAX_MODEL_LEN, else 16384.
func evalContextLength(pl *plan.Plan, opts EvalOptions) int {
	if opts.ContextLength > 0 {
		return opts.ContextLength
	}
	maxModelLen, _ := strconv.Atoi(opts.Getenv("MAX_MODEL_LEN"))
	requested := maxModelLen
	if bm := pl.Benchmark; bm.ISL > 0 && bm.OSL > 0 {
		requested = bm.ISL + bm.OSL + evalPromptMargin
	}
	return gsm8k.EvalContextLength(requested, nativeMaxLen(pl.Model.Source), maxModelLen)
}

// nativeMaxLen is max_position_embeddings from the model directory's HF
// config.json, 0 when unknown (a hub model, or no readable config).
func nativeMaxLen(source string) int {
	if !filepath.IsAbs(source) {
		return 0
	}
	data, err := os.ReadFile(filepath.Join(source, "config.json"))
	if err != nil {
		return 0
	}
	var cfg struct {
		MaxPositionEmbeddings int `json:"max_position_embeddings"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return 0
	}
	return cfg.MaxPositionEmbeddings
}

// metaEnv fills meta_env.json from the workflow's variables (passed through
// to the job), falling back to what the plan knows.
func metaEnv(pl *plan.Plan, opts EvalOptions) gsm8k.MetaEnv {
	env := opts.Getenv
	num := func(key string, fallback int) int {
		if v, err := strconv.Atoi(env(key)); err == nil {
			return v
		}
		return fallback
	}
	flag := func(key string) bool { return env(key) == "true" || env(key) == "1" }
	str := func(key, fallback string) string {
		if v := env(key); v != "" {
			return v
		}
		return fallback
	}
	length := func(v int, key string) string {
		if v > 0 {
			return strconv.Itoa(v)
		}
		return env(key)
	}
	framework := pl.Backend
	if pl.Frontend == "dynamo" && pl.Backend != "" {
		framework = "dynamo-" + pl.Backend
	}
	return gsm8k.MetaEnv{
		IsMultinode:       pl.Nodes > 1 || flag("IS_MULTINODE"),
		Framework:         str("FRAMEWORK", framework),
		Precision:         str("PRECISION", pl.Model.Precision),
		SpecDecoding:      env("SPEC_DECODING"),
		RecipeFingerprint: env("RECIPE_FINGERPRINT"),
		TP:                num("TP", 0),
		PP:                num("PP_SIZE", 0),
		DCPSize:           num("DCP_SIZE", 0),
		PCPSize:           num("PCP_SIZE", 0),
		Conc:              concurrency(pl),
		EP:                num("EP_SIZE", 0),
		DPAttention:       flag("DP_ATTENTION"),

		PrefillTP:          num("PREFILL_TP", 0),
		PrefillPP:          num("PREFILL_PP_SIZE", 0),
		PrefillDCPSize:     num("PREFILL_DCP_SIZE", 0),
		PrefillPCPSize:     num("PREFILL_PCP_SIZE", 0),
		PrefillEP:          num("PREFILL_EP", 0),
		PrefillDPAttention: flag("PREFILL_DP_ATTN"),
		PrefillNumWorkers:  num("PREFILL_NUM_WORKERS", pl.Health.Prefill),

		DecodeTP:          num("DECODE_TP", 0),
		DecodePP:          num("DECODE_PP_SIZE", 0),
		DecodeDCPSize:     num("DECODE_DCP_SIZE", 0),
		DecodePCPSize:     num("DECODE_PCP_SIZE", 0),
		DecodeEP:          num("DECODE_EP", 0),
		DecodeDPAttention: flag("DECODE_DP_ATTN"),
		DecodeNumWorkers:  num("DECODE_NUM_WORKERS", pl.Health.Decode),

		Model:             str("MODEL", pl.Model.ServedName),
		InfmaxModelPrefix: opts.ModelPrefix,
		HW:                env("RUNNER_TYPE"),
		ISL:               length(pl.Benchmark.ISL, "ISL"),
		OSL:               length(pl.Benchmark.OSL, "OSL"),
	}
}

// hostPort splits the frontend URL for lm-eval's base_url.
func hostPort(base string) (string, int, error) {
	u, err := url.Parse(base)
	if err == nil && u.Scheme == "http" && u.Hostname() != "" {
		if port, perr := strconv.Atoi(u.Port()); perr == nil && port > 0 && port <= 65535 {
			return u.Hostname(), port, nil
		}
	}
	return "", 0, fmt.Errorf("frontend URL %q: want http://host:port", base)
}

// scoreLine is the eval's one-line summary, e.g.
// "gsm8k: strict-match 0.9500 ± 0.0050, flexible-extract 0.9500 ± 0.0050 (n=1319) -> results_....json".
func scoreLine(score *results.GSM8KScore, path string) string {
	var scores []string
	for _, f := range score.Filters() {
		if f.Score == nil {
			continue
		}
		s := fmt.Sprintf("%s %.4f", f.Name, *f.Score)
		if f.Stderr != nil {
			s += fmt.Sprintf(" ± %.4f", *f.Stderr)
		}
		scores = append(scores, s)
	}
	return fmt.Sprintf("gsm8k: %s (n=%d) -> %s", strings.Join(scores, ", "), score.Samples, filepath.Base(path))
}

// evalBatch runs the eval at every concurrency of plan.Eval.Concurrencies
// against the one deployment, as InferenceX's run_eval does for a list in
// EVAL_CONCURRENT_REQUESTS: each run writes into its own directory, its
// .json/.jsonl files are staged into the result directory as
// <stem>_conc<N><ext> (with _2, _3... when taken; _stage_lm_eval_artifacts),
// a concurrency that fails is recorded and the others still run, and one
// meta_env.json lists eval_concs, completed_eval_concs and
// failed_eval_concs for validate_scores --expected-concs. A failed
// concurrency is an error after every one ran; then scores are gated.
func evalBatch(ctx context.Context, pl *plan.Plan, opts EvalOptions, er *EvalResult, meta gsm8k.MetaEnv) (*EvalResult, error) {
	dir := pl.Eval.ResultDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating eval result directory: %w", err)
	}
	var completed, failed []int
	for _, c := range pl.Eval.Concurrencies {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		be := BatchEval{Concurrency: c}
		be.Score, be.Files, be.Err = evalAt(ctx, pl, opts, er, meta, c)
		if be.Err != nil {
			fmt.Fprintf(orDiscard(opts.Log), "gsm8k: concurrency %d failed: %v\n", c, be.Err)
			failed = append(failed, c)
		} else {
			completed = append(completed, c)
			if er.Score == nil {
				er.Score = be.Score
				er.Files.Results = be.Files[0]
			}
			fmt.Fprintf(orDiscard(opts.Out), "[conc=%d] %s\n", c, scoreLine(be.Score, be.Files[0]))
		}
		er.Batch = append(er.Batch, be)
	}
	meta.SetBatch(pl.Eval.Concurrencies, completed, failed)
	er.Files.MetaEnv = filepath.Join(dir, "meta_env.json")
	if err := gsm8k.WriteMetaEnv(er.Files.MetaEnv, meta); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var errs []error
	for _, be := range er.Batch {
		if be.Err != nil {
			errs = append(errs, fmt.Errorf("eval at concurrency %d: %w", be.Concurrency, be.Err))
		}
	}
	if len(errs) > 0 {
		return er, errors.Join(errs...)
	}
	for _, be := range er.Batch {
		if err := gsm8k.CheckThresholds(be.Score, opts.ModelPrefix); err != nil {
			errs = append(errs, fmt.Errorf("concurrency %d: %w", be.Concurrency, err))
		}
	}
	return er, errors.Join(errs...)
}

// evalAt runs one concurrency of a batch in its own directory under the
// result directory and stages its files with the _conc<N> suffix.
func evalAt(ctx context.Context, pl *plan.Plan, opts EvalOptions, er *EvalResult, meta gsm8k.MetaEnv, conc int) (*results.GSM8KScore, []string, error) {
	one := *pl
	one.Eval.Concurrencies = nil
	one.Eval.Concurrency = conc
	one.Eval.ResultDir = filepath.Join(pl.Eval.ResultDir, ".conc"+strconv.Itoa(conc))
	defer os.RemoveAll(one.Eval.ResultDir)
	if err := os.RemoveAll(one.Eval.ResultDir); err != nil {
		return nil, nil, fmt.Errorf("clearing %s: %w", one.Eval.ResultDir, err)
	}
	meta.Conc = conc
	var files gsm8k.Files
	var err error
	if pl.Eval.Client == profile.EvalLMEval {
		_, files, err = runLMEval(ctx, &one, opts, er.ContextLength, meta)
	} else {
		_, files, err = runNativeEval(ctx, &one, opts, er.MaxTokens, er.ContextLength, meta)
	}
	if err != nil {
		return nil, nil, err
	}
	var staged []string
	for _, src := range []string{files.Results, files.Samples} {
		if src == "" {
			continue
		}
		dst, err := stageConc(src, pl.Eval.ResultDir, conc)
		if err != nil {
			return nil, staged, err
		}
		staged = append(staged, dst)
	}
	if len(staged) == 0 {
		return nil, nil, fmt.Errorf("no eval artifacts were produced for concurrency %d", conc)
	}
	score, err := results.ReadGSM8K(staged[0])
	return score, staged, err
}

// BatchName is InferenceX's staged name of an eval artifact of one
// concurrency of a batch: results_<date>.json -> results_<date>_conc8.json,
// and _conc8_2, _conc8_3... while taken (taken reports a name in use).
func BatchName(base string, conc int, taken func(string) bool) string {
	ext := ".json"
	if strings.HasSuffix(base, ".jsonl") {
		ext = ".jsonl"
	}
	stem := strings.TrimSuffix(base, ext)
	name := fmt.Sprintf("%s_conc%d%s", stem, conc, ext)
	for n := 2; taken(name); n++ {
		name = fmt.Sprintf("%s_conc%d_%d%s", stem, conc, n, ext)
	}
	return name
}

func stageConc(src, dir string, conc int) (string, error) {
	name := BatchName(filepath.Base(src), conc, func(n string) bool {
		_, err := os.Lstat(filepath.Join(dir, n))
		return err == nil
	})
	dst := filepath.Join(dir, name)
	if err := os.Rename(src, dst); err != nil {
		return "", fmt.Errorf("staging eval artifact for concurrency %d: %w", conc, err)
	}
	return dst, nil
}
