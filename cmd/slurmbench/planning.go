package main

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/internal/sigctx"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// planFlags are shared by render and run. Env-var fallbacks are the names
// InferenceX's benchmark-multinode workflow already exports.
func planFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "cluster profile (TOML)", EnvVars: []string{"SLURMBENCH_PROFILE"}},
		runnersFlag(),
		&cli.StringFlag{Name: "runner", Usage: "runner name whose runners.yaml record is the cluster (cluster: and partition: labels)", EnvVars: []string{"RUNNER_NAME"}},
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
		&cli.StringSliceFlag{Name: "goodput", Usage: "count requests meeting every SLO per second (request_goodput), `METRIC:MS` each: ttft:200 tpot:30 e2el:5000 (the native client)"},
		&cli.StringFlag{Name: "bench-client", Usage: "native (built-in Go client) or sa-bench (benchmark_serving.py in the container); default from the profile"},
		&cli.StringFlag{Name: "run-eval", Usage: "also run the gsm8k eval (true/false)", EnvVars: []string{"RUN_EVAL"}},
		&cli.StringFlag{Name: "eval-only", Usage: "run only the gsm8k eval (true/false)", EnvVars: []string{"EVAL_ONLY"}},
		&cli.StringFlag{Name: "eval-conc", Usage: "gsm8k concurrency, or a space-separated list: the eval runs at each, staged as results_*_conc<N>.json", EnvVars: []string{"EVAL_CONC"}},
		&cli.StringFlag{Name: "eval-config-file", Usage: "with --eval-only: the eval recipe (recipes/...yaml[:selector]) planned instead of --config-file's", EnvVars: []string{"EVAL_CONFIG_FILE"}},
		&cli.StringFlag{Name: "eval-client", Value: "native", Usage: "native or lm-eval"},
		&cli.StringFlag{Name: "job-name", Usage: "Slurm job name (default: the recipe's name)", EnvVars: []string{"RUNNER_NAME"}},
		&cli.StringFlag{Name: "run-id", Usage: "run directory name under paths.runs_dir (render default: <name>-dryrun)"},
		&cli.StringFlag{Name: "variant", Usage: "the config of an override file (base: + override_*/zip_override_*) to plan, in srtctl's selector syntax: base, override_NAME, zip_override_NAME[I] (also RECIPE:SELECTOR or CONFIG_FILE=...yaml:SELECTOR)"},
		&cli.BoolFlag{Name: "allow-duplicate-keys", Usage: "accept a recipe that sets a key twice with different values, keeping the last as srtctl does (warned, and recorded in the plan)"},
	}, overrideFlags()...)
}

// planOptions reads the plan flags into launch's options; runID is the
// run id to use when --run-id is not given ("" : render's <name>-dryrun).
func planOptions(c *cli.Context, runID string) launch.PlanOptions {
	o := launch.PlanOptions{
		Profile: c.String("profile"), Recipe: c.String("recipe"), ConfigFile: c.String("config-file"),
		RecipesRoot: c.String("recipes-root"), Master: c.String("master"), Key: c.String("key"), Point: c.Int("point"),
		Conc: c.String("conc"), EnvConc: os.Getenv("CONC"), Image: c.String("image"), Workspace: c.String("workspace"),
		BenchClient: c.String("bench-client"), Goodput: c.StringSlice("goodput"), RunEval: c.String("run-eval"), EvalOnly: c.String("eval-only"),
		EvalConc: c.String("eval-conc"), EvalConfigFile: c.String("eval-config-file"), EvalClient: c.String("eval-client"), JobName: c.String("job-name"),
		RunID: runID, Variant: c.String("variant"), AllowDuplicateKeys: c.Bool("allow-duplicate-keys"),
		Overrides: overridesOf(c), Warn: c.App.ErrWriter, ISL: intIfSet(c, "isl"), OSL: intIfSet(c, "osl"),
		Runners: c.String("runners"), Runner: c.String("runner"), Framework: os.Getenv("FRAMEWORK"), ModelPrefix: os.Getenv("MODEL_PREFIX"),
		PrefillImage: os.Getenv("PREFILL_IMAGE"),
	}
	if c.IsSet("run-id") {
		o.RunID = c.String("run-id")
	}
	return o
}

// runnersFlag names InferenceX's configs/runners.yaml, the cluster records
// a profile is derived from (or a TOML profile extends).
func runnersFlag() cli.Flag {
	return &cli.StringFlag{Name: "runners", Usage: "InferenceX's configs/runners.yaml (default: configs/runners.yaml under $GITHUB_WORKSPACE, else beside --master); without --profile the runner's record is the profile"}
}

// jsonFlag asks for the command's final result as one JSON object on stdout.
func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print the final result as JSON on stdout (progress stays on stderr)"}
}

// durationOf is a duration flag's value (a duration.Value: the one parser).
func durationOf(c *cli.Context, name string) time.Duration {
	if v, ok := c.Generic(name).(*duration.Value); ok && v != nil {
		return *v.D
	}
	return 0
}

// intIfSet and stringIfSet are a flag's value, or nil when it is not given.
func intIfSet(c *cli.Context, name string) *int {
	if !c.IsSet(name) {
		return nil
	}
	n := c.Int(name)
	return &n
}

func stringIfSet(c *cli.Context, name string) *string {
	if !c.IsSet(name) {
		return nil
	}
	s := c.String(name)
	return &s
}

// ioOf is what every command entry gets from main.
func ioOf(c *cli.Context) launch.IO {
	return launch.IO{Stdout: c.App.Writer, Stderr: c.App.ErrWriter, Interrupted: sigctx.Interrupted(c.Context),
		Hard: sigctx.HardStop(c.Context), Version: version, Commit: commit, JSON: c.Bool("json")}
}
