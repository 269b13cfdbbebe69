package workflow

import (
	"context"
	"fmt"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// RunMode says whether `slurmbench run` runs in the workflow's mode: when
// nothing on the command line names a recipe (--recipe, --config-file or
// CONFIG_FILE, --master/--key, --in) and RUNNER_NAME is set, the
// environment describes the point, as it does for `python -m infx.launch
// run`. fromEnv (--from-env) asks for the mode outright.
func RunMode(fromEnv, namesRecipe bool, env Env) bool {
	return fromEnv || !namesRecipe && env.get("RUNNER_NAME") != ""
}

// DefaultResolver is the resolver of the workflow's mode: an operator's
// TOML profile (--profile, SLURMBENCH_PROFILE) stands for the runner's
// cluster when given.
func DefaultResolver(profile string) Resolver {
	if profile != "" {
		return ProfileResolver{Profile: profile}
	}
	return ResolverFunc(func(_ context.Context, r *Request) (Resolution, error) {
		return Resolution{}, exitcode.With(exitcode.Config, fmt.Errorf(
			"runner %q: no cluster: give its profile with --profile or SLURMBENCH_PROFILE", r.Runner))
	})
}
