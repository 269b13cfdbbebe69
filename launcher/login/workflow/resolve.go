package workflow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/configsdir"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// Resolution is what a Resolver found for a launch: the runner's cluster
// and how the plan names it and the row's recipe.
type Resolution struct {
	// Cluster is the runners.yaml cluster id ("" when a TOML profile
	// stands in for it); job_event.json records it.
	Cluster string
	// CPUSource is the cluster's srt-slurm.power-telemetry.cpu-source,
	// which a power run leaves in $GITHUB_ENV as POWER_EXPECTED_CPU_SOURCE.
	CPUSource string
	// Plan fills in the plan options that name the cluster (profile) and
	// the recipe (the composed, bound one).
	Plan func(o *launch.PlanOptions)
	// NoPreflight says why the record asks the launch to skip its
	// preflight ("" : run it); Tags are the job's InferenceX tags, which
	// srt-submission.json records ("" : the record sets no job-tag).
	NoPreflight, Tags string
	// LaunchPath is InferenceX's path of the launch (srt-multi,
	// srt-native, srt-single) for job_event.json ("" : by IS_MULTINODE).
	LaunchPath string
	// WriteEvalMeta: the lane rebuilds the staged meta_env.json after an
	// eval (RefreshEvalMeta).
	WriteEvalMeta bool
}

// Resolver finds the runner's cluster and the row's recipe. The runners.yaml
// reader and the fragment binder provide the production one; tests give
// their own.
type Resolver interface {
	Resolve(ctx context.Context, r *Request) (Resolution, error)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(ctx context.Context, r *Request) (Resolution, error)

// Resolve calls f.
func (f ResolverFunc) Resolve(ctx context.Context, r *Request) (Resolution, error) { return f(ctx, r) }

// Recipe mirrors under the workspace (inferencex-e2e/). Today's generator
// writes a row's srt-recipe from the project root, mirror included
// (infx/matrix/validation.py's srt_recipe_path: the lane's mirror, the
// entry's srt-recipe-dir, the file); the multi-node launcher of an earlier
// week took it relative to the multi-node mirror, "recipes/" standing for
// it (drivers/srt/recipe.py, stored id 70910930115, recipe_mirror_path).
// Both spellings resolve.
const MultinodeRecipes = "benchmarks/multi_node/srt-slurm-recipes"

// BoundDir is where, under the workspace, a row's bound recipe is written.
const BoundDir = ".slurmbench/bound"

// MirrorPath is the file SRT_RECIPE (or EVAL_SRT_RECIPE) names, and its
// selector ("" when none): <file>[:<selector>].
func MirrorPath(workspace, srtRecipe string, multinode bool) (file, selector string) {
	file, selector, _ = strings.Cut(srtRecipe, ":")
	if multinode && !strings.HasPrefix(file, "benchmarks/") {
		return filepath.Join(workspace, MultinodeRecipes, strings.TrimPrefix(file, "recipes/")), selector
	}
	return filepath.Join(workspace, file), selector
}

// Runners is the resolver of the workflow's mode: the runner's cluster is
// the record of InferenceX's configs/runners.yaml under the workspace that
// its cluster: (and partition:) labels pick for RUNNER_NAME, or an
// operator's TOML profile (Profile, from --profile or SLURMBENCH_PROFILE),
// which may extend that record with what it lacks (a slurmrestd URL, a
// token) — login/launch's LoadProfileFrom, when the plan is made. The
// row's recipe is the file SRT_RECIPE names in the workspace: in
// InferenceX's tree (SharedBlocks present) a fragment, composed and bound
// for the runner's cluster (BindFragment); elsewhere a whole recipe,
// planned as it is.
type Runners struct {
	Profile string
	// BoundDir is where a bound fragment is written ("": BoundDir under
	// the workspace).
	BoundDir string
}

// Resolve refuses a request the runner's lane does not run (ChooseLane),
// checks that the recipe exists and names the profile's sources, the
// recipe and the lane's edits for the plan.
func (p Runners) Resolve(ctx context.Context, r *Request) (Resolution, error) {
	inInfx := hasSharedBlocks(r.Workspace)
	lc, laned, err := ChooseLane(ctx, r)
	if err != nil && (laned || inInfx) {
		// A refusal, or InferenceX's tree whose runners.yaml cannot name
		// the runner's cluster (the binder would fail the same way).
		return Resolution{LaunchPath: string(lc.Path)}, err
	}
	laneOverrides, err := lc.Overrides()
	if err != nil {
		return Resolution{}, exitcode.With(exitcode.Config, fmt.Errorf("%s lane of %s: %w", lc.Path, lc.Cluster, err))
	}
	file, selector := MirrorPath(r.Workspace, r.Recipe(), r.Multinode)
	if _, err := os.Stat(file); err != nil {
		name := "SRT_RECIPE"
		if r.Recipe() != r.SrtRecipe {
			name = "EVAL_SRT_RECIPE"
		}
		return Resolution{}, exitcode.Errorf(exitcode.Config, "%s %q is not in the workspace's recipe mirror: %v", name, r.Recipe(), err)
	}
	dir := p.BoundDir
	if dir == "" {
		// Beside the checkout, as InferenceX binds into its job's
		// srt-slurm checkout there: a directory, so no top-level file
		// of the workspace (job_event.json's artifacts) changes.
		dir = filepath.Join(r.Workspace, BoundDir)
	}
	if file, err = lc.RealVerification(ctx, r.Workspace, file, dir); err != nil {
		return Resolution{}, err
	}
	ref := file
	if selector != "" {
		ref += ":" + selector
	}
	var cluster, skip, tags, configs string
	if inInfx {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Resolution{}, exitcode.With(exitcode.Internal, err)
		}
		b, err := BindFragment(ctx, r, file, selector, dir)
		if err != nil {
			return Resolution{}, err
		}
		ref, cluster, skip, tags = b.File, b.Cluster, b.NoPreflight, b.Tags
		// Beside the bound recipes: what the job's containers see at
		// /configs, as InferenceX's jobs see its staged checkout's.
		configs = configsdir.Under(r.Workspace)
		if err := configsdir.Stage(ctx, r.Workspace, configs); err != nil {
			return Resolution{}, err
		}
	}
	// A request the lane runs on the shared run root mounts a copy of the
	// workspace there, /configs staged in it (sharedroot.go).
	jobWorkspace := lc.SharedWorkspace(r.Runner)
	if jobWorkspace != "" {
		if err := StageWorkspace(ctx, r.Workspace, jobWorkspace); err != nil {
			return Resolution{}, err
		}
		if configs != "" {
			configs = configsdir.Under(jobWorkspace)
		}
	}
	writeMeta := lc.Lane != nil && lc.Lane.WriteEvalMeta
	return Resolution{Cluster: cluster, NoPreflight: skip, Tags: tags, LaunchPath: string(lc.Path), WriteEvalMeta: writeMeta, Plan: func(o *launch.PlanOptions) {
		o.Profile, o.Runner = p.Profile, r.Runner
		o.Framework, o.ModelPrefix = r.Framework, r.ModelPrefix
		o.AgenticMultiNode = r.Agentic && r.Multinode
		o.SingleNode = !r.Multinode
		o.Recipe = ref
		if laned {
			req := lc.Request
			o.Lane = &req
		}
		o.Overrides = append(o.Overrides, laneOverrides...)
		if jobWorkspace != "" {
			o.Workspace = jobWorkspace
		}
		if configs != "" {
			o.Configs, o.ConfigsNote = configs, configsdir.Note
		}
	}}, nil
}
