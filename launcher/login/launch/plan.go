// Package launch is the login-node side of the commands that plan and run
// a point (render, doctor, run, up, down, attach, logs, and the runs,
// images, migrate and results compare commands around them):
// cmd/slurmbench parses their flags into the options structs here and
// calls one function per command, which plans (profile parsed once),
// checks, chooses how the run goes (a new job, a held deployment's queue,
// or the allocation this process is in) and hands it to login/runner.
package launch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/clients/sabench"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// PlanOptions are the inputs of a plan as the command line gives them
// (render, doctor, run and up share them). Strings are the flags' text:
// they are parsed and checked here, with errors naming the flag.
type PlanOptions struct {
	Profile     string // --profile (SLURMBENCH_PROFILE)
	Recipe      string // --recipe, optionally FILE:SELECTOR
	ConfigFile  string // --config-file (CONFIG_FILE)
	RecipesRoot string
	Master, Key string
	Point       int    // search-space point of Key; -1: not given
	Conc        string // --conc (CONC_LIST)
	EnvConc     string // the submitting environment's CONC (a custom workload's fallback)
	ISL, OSL    *int   // nil: not given
	Image       string
	Workspace   string
	BenchClient string
	// Goodput is --goodput: SLOs "ttft:MS", "tpot:MS", "e2el:MS" the
	// native client counts request_goodput by.
	Goodput  []string
	RunEval  string // true/false text (RUN_EVAL)
	EvalOnly string // true/false text (EVAL_ONLY)
	EvalConc string // EVAL_CONC: one concurrency or a space-separated list
	// EvalConfigFile is EVAL_CONFIG_FILE: the recipe an eval-only run
	// plans instead of CONFIG_FILE's (InferenceX's master configs pair a
	// benchmark recipe with an eval one); ignored unless EvalOnly is true.
	EvalConfigFile string
	EvalClient     string
	JobName        string // --job-name (RUNNER_NAME)
	// RunID is the run directory's name: "" is <name>-dryrun (render),
	// AutoRunID a fresh unique one (run, up).
	RunID              string
	Variant            string
	AllowDuplicateKeys bool
	// Overrides are the --set/--unset edits, in the order given.
	Overrides []recipe.Override
	// Warn gets the recipe's warnings (nil: discarded).
	Warn io.Writer

	// Runners and Runner name InferenceX's configs/runners.yaml and the
	// runner whose record makes (or a TOML extends into) the profile
	// (--runners; --runner, RUNNER_NAME). Framework and ModelPrefix are
	// the point's (FRAMEWORK, MODEL_PREFIX), for the record's squash
	// locations.
	Runners, Runner string
	// Cluster is a runners.yaml cluster id: its record, when Runner is ""
	// (a matrix point on a label that schedules on several clusters is
	// planned on each).
	Cluster                string
	Framework, ModelPrefix string
	// PrefillImage is a TileRT point's PREFILL_IMAGE, which the record's
	// profile names tilert-prefill.
	PrefillImage string
	// AgenticMultiNode: the point is a multi-node AgentX one, whose job
	// also mounts the record's agentic volumes (AgentX client caches).
	AgenticMultiNode bool
	// SingleNode: a single-node point (the record's single-node-models
	// says whether hf:<model> is its staged checkpoint).
	SingleNode bool
	// Lane is the launch as InferenceX's lane tables read it (the
	// workflow's request): the lane's mounts and time limit join the
	// record's profile (profile.RunnersOptions.Lane). nil: none given.
	Lane *srtlanes.Request
	// RunnerLabel is the master entry's runner label (matrix points): it
	// picks the record when Runner is "". MasterDir is the master config
	// whose directory holds the default runners.yaml when Master is ""
	// (matrix points name their recipe, not a --key).
	RunnerLabel, MasterDir string
	// Configs is a directory the launch staged for /configs
	// (profile.UseConfigs), ConfigsNote what it holds.
	Configs, ConfigsNote string
}

// AutoRunID asks Plan for a fresh, unique run id.
const AutoRunID = "\x00auto"

// HasRecipe says whether the options name a recipe in any of their ways.
func (o PlanOptions) HasRecipe() bool {
	return o.Recipe != "" || o.ConfigFile != "" || o.Master != "" || o.Key != ""
}

// Plan computes the plan and returns it with the profile it read (the one
// parse of the profile in this process). Every error is a config error:
// nothing has been submitted yet.
func Plan(ctx context.Context, o PlanOptions) (*plan.Plan, *profile.Profile, error) {
	pl, prof, err := buildPlan(ctx, o)
	if err != nil {
		return nil, nil, exitcode.With(exitcode.Config, err)
	}
	return pl, prof, nil
}

// Source is where the options' profile comes from.
func (o PlanOptions) Source() ProfileSource {
	return ProfileSource{Profile: o.Profile, Runners: o.Runners, Runner: o.Runner, Cluster: o.Cluster, Label: o.RunnerLabel, Workspace: o.Workspace, Master: cmp.Or(o.Master, o.MasterDir),
		Image: o.Image, Framework: o.Framework, ModelPrefix: o.ModelPrefix, PrefillImage: o.PrefillImage, AgenticMultiNode: o.AgenticMultiNode, SingleNode: o.SingleNode, Lane: o.Lane}
}

// LoadProfile reads --profile, refusing an empty one (a config error).
func LoadProfile(ctx context.Context, path string) (*profile.Profile, error) {
	if path == "" {
		return nil, exitcode.Errorf(exitcode.Config, "--profile: required (or SLURMBENCH_PROFILE)")
	}
	prof, err := profile.LoadContext(ctx, path)
	return prof, exitcode.With(exitcode.Config, err)
}

func buildPlan(ctx context.Context, o PlanOptions) (*plan.Plan, *profile.Profile, error) {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	prof, err := loadProfileFrom(ctx, o.Source())
	if err != nil {
		return nil, nil, err
	}
	if o.Configs != "" {
		prof.UseConfigs(o.Configs, o.ConfigsNote)
	}
	in := planner.Inputs{Profile: prof, ResolveImage: ResolveImage}

	configFile := o.ConfigFile
	if o.Master != "" || o.Key != "" {
		pt, err := masterPoint(o)
		if err != nil {
			return nil, nil, err
		}
		in.Image, in.ISL, in.OSL, in.Concurrencies = pt.Image, pt.ISL, pt.OSL, pt.Concurrency
		if pt.ConfigFile == "" {
			return nil, nil, fmt.Errorf("--key %s point %d: no CONFIG_FILE in additional-settings", pt.Key, pt.Index)
		}
		configFile = pt.ConfigFile
		if pt.Selector != "" {
			configFile += ":" + pt.Selector
		}
		if o.EvalConfigFile == "" {
			o.EvalConfigFile = pt.Settings["EVAL_CONFIG_FILE"]
		}
	}

	if o.EvalConfigFile != "" && o.Recipe == "" {
		only, err := ParseBool("eval-only", "EVAL_ONLY", o.EvalOnly)
		if err != nil {
			return nil, nil, err
		}
		if only {
			// The eval recipe alone: InferenceX's eval-only jobs serve the
			// EVAL_CONFIG_FILE recipe (its real acceptance, its own
			// topology) and run only the eval against it.
			configFile = o.EvalConfigFile
		}
	}
	recipePath, selector, err := recipeLocation(o, prof, configFile)
	if err != nil {
		return nil, nil, err
	}
	if v := o.Variant; v != "" {
		if selector != "" && selector != v {
			return nil, nil, fmt.Errorf("--variant %q and the selector %q of the recipe path disagree", v, selector)
		}
		selector = v
	}
	rec, err := recipe.LoadContext(ctx, recipePath, recipe.Options{AllowDuplicateKeys: o.AllowDuplicateKeys, Variant: selector, Overrides: o.Overrides})
	if err != nil {
		return nil, nil, err
	}
	for _, w := range rec.Warnings {
		fmt.Fprintln(o.Warn, "warning:", w)
	}
	if CollectsDCGMPower(rec) {
		// The exporter alias is this job's, not its cluster's.
		prof.AddDCGMExporter()
	}
	// A CI runner's name (GitHub's default ones have spaces) is made a
	// valid job name rather than failing every run.
	jobName := recipe.SanitizeName(o.JobName)
	if jobName != o.JobName && o.JobName != "" {
		fmt.Fprintf(o.Warn, "slurmbench: --job-name (RUNNER_NAME) %q: using %q as the Slurm job name\n", o.JobName, jobName)
	}
	if s := o.Conc; s != "" {
		// Parsed here, checked once by the planner (recipe.CheckConcurrencies).
		concs, err := recipe.ParseConcurrencies(s)
		if err != nil {
			return nil, nil, fmt.Errorf("--conc (CONC_LIST): %w", err)
		}
		in.Concurrencies = concs
	}
	in.EnvConc = o.EnvConc
	if o.ISL != nil {
		in.ISL = *o.ISL
	}
	if o.OSL != nil {
		in.OSL = *o.OSL
	}
	if o.Image != "" {
		in.Image = o.Image
	}
	if ws := o.Workspace; ws != "" {
		abs, err := profile.Canonical(ws)
		if err != nil {
			return nil, nil, fmt.Errorf("--workspace (GITHUB_WORKSPACE): %w", err)
		}
		in.Workspace = abs
	}
	if in.BenchClient, err = profile.ParseBenchClient(o.BenchClient); err != nil {
		return nil, nil, fmt.Errorf("--bench-client: %w", err)
	}
	if in.Eval.Run, err = ParseBool("run-eval", "RUN_EVAL", o.RunEval); err != nil {
		return nil, nil, err
	}
	if in.Eval.Only, err = ParseBool("eval-only", "EVAL_ONLY", o.EvalOnly); err != nil {
		return nil, nil, err
	}
	concs, err := ParseEvalConcs(o.EvalConc)
	if err != nil {
		return nil, nil, err
	}
	if len(concs) > 0 {
		in.Eval.Concurrency = concs[0]
	}
	if len(concs) > 1 {
		in.Eval.Concurrencies = concs
	}
	if in.Eval.Client, err = profile.ParseEvalClient(o.EvalClient); err != nil {
		return nil, nil, fmt.Errorf("--eval-client: %w", err)
	}
	in.Recipe = rec
	runID := o.RunID
	switch runID {
	case "":
		runID = rec.Name + "-dryrun"
	case AutoRunID:
		runID = rundir.NewID(rec.Name, time.Now())
	}
	in.RunID = runID
	in.Binary, err = SelfPath()
	if err != nil {
		return nil, nil, err
	}
	goodput, err := sabench.ParseGoodput(o.Goodput)
	if err != nil {
		return nil, nil, fmt.Errorf("--goodput: %w", err)
	}
	pl, err := planner.Build(in)
	if err != nil {
		return nil, nil, err
	}
	importLocks(pl, prof, o.Framework, o.ModelPrefix)
	pl.Benchmark.Goodput = goodput
	if jobName != "" {
		pl.Slurm.JobName = jobName
	}
	return pl, prof, nil
}

// CollectsDCGMPower says whether a job of rec collects DCGM power, the
// test InferenceX's launcher stages the exporter on: the recipe's
// telemetry is enabled with a dcgm_exporter (power.py@bede049f
// recipe_enables_dcgm_power; today the binder composes that block into a
// `power: true` point's recipe only, RECIPES.md § Recipe fragments).
func CollectsDCGMPower(rec *recipe.Recipe) bool {
	return rec != nil && rec.Telemetry != nil && rec.Telemetry.Enabled && rec.Telemetry.DCGMExporter != nil
}

// ParseEvalConcs reads EVAL_CONC: concurrencies separated by spaces (the
// workflow's eval-conc input), each a positive number and none twice, as
// InferenceX's validate_scores --expected-concs demands.
func ParseEvalConcs(text string) ([]int, error) {
	var out []int
	for _, f := range strings.Fields(text) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--eval-conc (EVAL_CONC) %q: %q is not a positive number", text, f)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("--eval-conc (EVAL_CONC) %q: %d is listed twice", text, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// recipeLocation finds the recipe from --recipe, or CONFIG_FILE against the
// recipes root, and the override-file selector after a ':' (srtctl's
// `-f file.yaml:SELECTOR`).
func recipeLocation(o PlanOptions, prof *profile.Profile, configFile string) (path, selector string, err error) {
	if r := o.Recipe; r != "" {
		p, err := profile.Canonical(r)
		if err != nil {
			file, sel, ok := cutSelector(r)
			if !ok {
				return "", "", fmt.Errorf("--recipe: %w", err)
			}
			if p, err = profile.Canonical(file); err != nil {
				return "", "", fmt.Errorf("--recipe: %w", err)
			}
			return p, sel, nil
		}
		return p, "", nil
	}
	if configFile == "" {
		return "", "", errors.New("--recipe: required (or --config-file / CONFIG_FILE, or --master with --key)")
	}
	file, selector, _ := cutSelector(configFile)
	if !strings.HasPrefix(file, "recipes/") {
		p, err := profile.Canonical(file)
		if err != nil {
			return "", "", fmt.Errorf("CONFIG_FILE %q: %w", configFile, err)
		}
		return p, selector, nil
	}
	root := o.RecipesRoot
	if root == "" {
		root = prof.Paths.RecipesRoot
	}
	if root == "" {
		return "", "", fmt.Errorf("CONFIG_FILE %q is relative to a recipes root: set --recipes-root or paths.recipes_root in %s", configFile, prof.Path)
	}
	root, err = profile.Canonical(root)
	if err != nil {
		return "", "", fmt.Errorf("--recipes-root: %w", err)
	}
	p, err := master.RecipePath(root, file)
	if err != nil {
		return "", "", err
	}
	if p, err = profile.Canonical(p); err != nil {
		return "", "", fmt.Errorf("CONFIG_FILE %q: %w", configFile, err)
	}
	return p, selector, nil
}

// cutSelector splits "file.yaml:SELECTOR" at the last ':' (srtctl's
// parse_config_arg).
func cutSelector(s string) (file, selector string, ok bool) {
	i := strings.LastIndex(s, ":")
	if i <= 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func masterPoint(o PlanOptions) (master.ConfigPoint, error) {
	if o.Master == "" || o.Key == "" {
		return master.ConfigPoint{}, errors.New("--master and --key go together")
	}
	path, err := profile.Canonical(o.Master)
	if err != nil {
		return master.ConfigPoint{}, fmt.Errorf("--master: %w", err)
	}
	m, err := master.Load(path)
	if err != nil {
		return master.ConfigPoint{}, err
	}
	return master.Lookup(m, o.Key, o.Point)
}

// ParseBool reads a true/false flag given as text (a workflow variable).
func ParseBool(name, env, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "0", "no":
		return false, nil
	case "true", "1", "yes":
		return true, nil
	}
	return false, fmt.Errorf("--%s (%s): %q is not true or false", name, env, v)
}

// ResolveImage maps an image reference to where its squash file is.
func ResolveImage(ref, squashDir string) (plan.Image, error) {
	r, err := enroot.ParseRef(ref)
	if err != nil {
		return plan.Image{}, err
	}
	if r.IsLocal() {
		return plan.Image{Squash: r.Path}, nil
	}
	return plan.Image{Ref: r.String(), EnrootURI: r.EnrootURI(), Squash: filepath.Join(squashDir, r.SquashName())}, nil
}

// SelfPath is the running binary, absolute and symlink-free, whatever path
// or link it was started through.
func SelfPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the slurmbench binary: %w", err)
	}
	return filepath.EvalSymlinks(exe)
}
