package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/inputs/master"
	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/inputs/recipe"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/plan"
	"github.com/slurmbench/slurmbench/planner"
	"github.com/slurmbench/slurmbench/rundir"
)

// planFlags are shared by render and run. Env-var fallbacks are the names
// InferenceX's benchmark-multinode workflow already exports.
func planFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "cluster profile (TOML)", EnvVars: []string{"SLURMBENCH_PROFILE"}},
		&cli.StringFlag{Name: "recipe", Aliases: []string{"r"}, Usage: "recipe (srt-slurm YAML); or CONFIG_FILE=recipes/... resolved against --recipes-root"},
		&cli.StringFlag{Name: "config-file", Usage: "InferenceX CONFIG_FILE (recipes/...yaml[:selector])", EnvVars: []string{"CONFIG_FILE"}},
		&cli.StringFlag{Name: "recipes-root", Usage: "directory that CONFIG_FILE's recipes/ stands for (default: profile paths.recipes_root)", EnvVars: []string{"SLURMBENCH_RECIPES_ROOT"}},
		&cli.StringFlag{Name: "master", Usage: "InferenceX master config (configs/nvidia-master.yaml) to look --key up in"},
		&cli.StringFlag{Name: "key", Usage: "config key in --master, e.g. dsr1-fp4-b200-dynamo-sglang-mtp"},
		&cli.IntFlag{Name: "point", Value: -1, Usage: "search-space point of --key (0-based; required when the key has several)"},
		&cli.StringFlag{Name: "conc", Usage: "concurrencies to run, e.g. \"8x32\", \"8 32\" or \"8,32\" (overrides the recipe)", EnvVars: []string{"CONC_LIST"}},
		&cli.IntFlag{Name: "isl", Usage: "input sequence length; must match the recipe's", EnvVars: []string{"ISL"}},
		&cli.IntFlag{Name: "osl", Usage: "output sequence length; must match the recipe's", EnvVars: []string{"OSL"}},
		&cli.StringFlag{Name: "image", Usage: "container image, replacing the recipe's model.container", EnvVars: []string{"IMAGE"}},
		&cli.StringFlag{Name: "workspace", Usage: "the InferenceX checkout (mounted at /infmax-workspace; needed by the sa-bench and lm-eval clients)", EnvVars: []string{"SLURMBENCH_WORKSPACE", "GITHUB_WORKSPACE"}},
		&cli.StringFlag{Name: "bench-client", Usage: "native (built-in Go client) or sa-bench (benchmark_serving.py in the container); default from the profile"},
		&cli.StringFlag{Name: "run-eval", Usage: "also run the gsm8k eval (true/false)", EnvVars: []string{"RUN_EVAL"}},
		&cli.StringFlag{Name: "eval-only", Usage: "run only the gsm8k eval (true/false)", EnvVars: []string{"EVAL_ONLY"}},
		&cli.StringFlag{Name: "eval-conc", Usage: "gsm8k concurrency (the first of a space-separated list)", EnvVars: []string{"EVAL_CONC"}},
		&cli.StringFlag{Name: "eval-client", Value: "native", Usage: "native or lm-eval"},
		&cli.StringFlag{Name: "job-name", Usage: "Slurm job name (default: the recipe's name)", EnvVars: []string{"RUNNER_NAME"}},
		&cli.StringFlag{Name: "run-id", Usage: "run directory name under paths.runs_dir (render default: <name>-dryrun)"},
		&cli.StringFlag{Name: "variant", Usage: "the config of an override file (base: + override_*/zip_override_*) to plan, in srtctl's selector syntax: base, override_NAME, zip_override_NAME[I] (also RECIPE:SELECTOR or CONFIG_FILE=...yaml:SELECTOR)"},
		&cli.BoolFlag{Name: "allow-duplicate-keys", Usage: "accept a recipe that sets a key twice with different values, keeping the last as srtctl does (warned, and recorded in the plan)"},
	}, overrideFlags()...)
}

// planFromFlags computes the plan. Every error is a config error: nothing
// has been submitted yet.
func planFromFlags(c *cli.Context, runID string) (*plan.Plan, error) {
	pl, err := buildPlan(c, runID)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	return pl, nil
}

func buildPlan(c *cli.Context, runID string) (*plan.Plan, error) {
	if c.String("profile") == "" {
		return nil, errors.New("--profile: required (or SLURMBENCH_PROFILE)")
	}
	prof, err := profile.LoadContext(c.Context, c.String("profile"))
	if err != nil {
		return nil, err
	}
	in := planner.Inputs{Profile: prof, ResolveImage: resolveImage}

	configFile := c.String("config-file")
	if c.String("master") != "" || c.String("key") != "" {
		pt, err := masterPoint(c)
		if err != nil {
			return nil, err
		}
		in.Image, in.ISL, in.OSL, in.Concurrencies = pt.Image, pt.ISL, pt.OSL, pt.Concurrency
		if pt.ConfigFile == "" {
			return nil, fmt.Errorf("--key %s point %d: no CONFIG_FILE in additional-settings", pt.Key, pt.Index)
		}
		configFile = pt.ConfigFile
		if pt.Selector != "" {
			configFile += ":" + pt.Selector
		}
	}

	recipePath, selector, err := recipeLocation(c, prof, configFile)
	if err != nil {
		return nil, err
	}
	if v := c.String("variant"); v != "" {
		if selector != "" && selector != v {
			return nil, fmt.Errorf("--variant %q and the selector %q of the recipe path disagree", v, selector)
		}
		selector = v
	}
	rec, err := recipe.LoadContext(c.Context, recipePath, recipe.Options{AllowDuplicateKeys: c.Bool("allow-duplicate-keys"), Variant: selector, Overrides: overridesOf(c)})
	if err != nil {
		return nil, err
	}
	for _, w := range rec.Warnings {
		fmt.Fprintln(c.App.ErrWriter, "warning:", w)
	}
	// A CI runner's name (GitHub's default ones have spaces) is made a
	// valid job name rather than failing every run.
	jobName := recipe.SanitizeName(c.String("job-name"))
	if jobName != c.String("job-name") && c.String("job-name") != "" {
		fmt.Fprintf(c.App.ErrWriter, "slurmbench: --job-name (RUNNER_NAME) %q: using %q as the Slurm job name\n", c.String("job-name"), jobName)
	}
	if s := c.String("conc"); s != "" {
		// Parsed here, checked once by the planner with the recipe's.
		concs, err := recipe.ParseConcurrencies(s)
		if err != nil {
			return nil, fmt.Errorf("--conc (CONC_LIST): %w", err)
		}
		in.Concurrencies = concs
	}
	if c.IsSet("isl") {
		in.ISL = c.Int("isl")
	}
	if c.IsSet("osl") {
		in.OSL = c.Int("osl")
	}
	if v := c.String("image"); v != "" {
		in.Image = v
	}
	if ws := c.String("workspace"); ws != "" {
		abs, err := profile.Canonical(ws)
		if err != nil {
			return nil, fmt.Errorf("--workspace (GITHUB_WORKSPACE): %w", err)
		}
		in.Workspace = abs
	}
	if in.BenchClient, err = profile.ParseBenchClient(c.String("bench-client")); err != nil {
		return nil, fmt.Errorf("--bench-client: %w", err)
	}
	if in.Eval.Run, err = boolFlag(c, "run-eval", "RUN_EVAL"); err != nil {
		return nil, err
	}
	if in.Eval.Only, err = boolFlag(c, "eval-only", "EVAL_ONLY"); err != nil {
		return nil, err
	}
	if s := strings.Fields(c.String("eval-conc")); len(s) > 0 {
		n, err := strconv.Atoi(s[0])
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--eval-conc (EVAL_CONC): %q is not a positive number", c.String("eval-conc"))
		}
		in.Eval.Concurrency = n
	}
	if in.Eval.Client, err = profile.ParseEvalClient(c.String("eval-client")); err != nil {
		return nil, fmt.Errorf("--eval-client: %w", err)
	}
	in.Recipe = rec
	if runID == "" {
		runID = c.String("run-id")
	}
	switch runID {
	case "":
		runID = rec.Name + "-dryrun"
	case autoRunID:
		runID = rundir.NewID(rec.Name, time.Now())
	}
	in.RunID = runID
	in.Binary, err = selfPath()
	if err != nil {
		return nil, err
	}
	pl, err := planner.Build(in)
	if err != nil {
		return nil, err
	}
	if jobName != "" {
		pl.Slurm.JobName = jobName
	}
	return pl, nil
}

// recipeLocation finds the recipe from --recipe, or CONFIG_FILE against the
// recipes root, and the override-file selector after a ':' (srtctl's
// `-f file.yaml:SELECTOR`).
func recipeLocation(c *cli.Context, prof *profile.Profile, configFile string) (path, selector string, err error) {
	if r := c.String("recipe"); r != "" {
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
	root := c.String("recipes-root")
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

func masterPoint(c *cli.Context) (master.Point, error) {
	if c.String("master") == "" || c.String("key") == "" {
		return master.Point{}, errors.New("--master and --key go together")
	}
	path, err := profile.Canonical(c.String("master"))
	if err != nil {
		return master.Point{}, fmt.Errorf("--master: %w", err)
	}
	m, err := master.Load(path)
	if err != nil {
		return master.Point{}, err
	}
	return master.Lookup(m, c.String("key"), c.Int("point"))
}

func boolFlag(c *cli.Context, name, env string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(c.String(name))) {
	case "", "false", "0", "no":
		return false, nil
	case "true", "1", "yes":
		return true, nil
	}
	return false, fmt.Errorf("--%s (%s): %q is not true or false", name, env, c.String(name))
}

func resolveImage(ref, squashDir string) (plan.Image, error) {
	r, err := enroot.ParseRef(ref)
	if err != nil {
		return plan.Image{}, err
	}
	if r.IsLocal() {
		return plan.Image{Squash: r.Path}, nil
	}
	return plan.Image{Ref: r.String(), EnrootURI: r.EnrootURI(), Squash: filepath.Join(squashDir, r.SquashName())}, nil
}

// selfPath is the running binary, absolute and symlink-free, whatever path
// or link it was started through.
func selfPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the slurmbench binary: %w", err)
	}
	return filepath.EvalSymlinks(exe)
}

// autoRunID asks buildPlan for a fresh, unique run id.
const autoRunID = "\x00auto"
