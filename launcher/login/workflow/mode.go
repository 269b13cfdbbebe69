package workflow

// RunMode says whether `slurmbench run` runs in the workflow's mode: when
// nothing on the command line names a recipe (--recipe, --config-file or
// CONFIG_FILE, --master/--key, --in) and RUNNER_NAME is set, the
// environment describes the point, as it does for `python -m infx.launch
// run`. fromEnv (--from-env) asks for the mode outright.
func RunMode(fromEnv, namesRecipe bool, env Env) bool {
	return fromEnv || !namesRecipe && env.get("RUNNER_NAME") != ""
}

// DefaultResolver is the resolver of the workflow's mode: the runner's
// runners.yaml record, or the operator's TOML profile when given
// (--profile, SLURMBENCH_PROFILE), which may extend it.
func DefaultResolver(profile string) Resolver { return Runners{Profile: profile} }
