package workflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
	"github.com/slurmbench/slurmbench/launcher/login/generate"
)

// How InferenceX's lane of the runner's cluster changes a launch
// (package srtlanes holds the tables and their rules): a request the lane
// does not run is refused before anything is bound, staged, imported or
// submitted; a real-verification eval binds its recipe without forced
// acceptance; the lane's eval edits and setup script join the recipe's
// --set/--unset edits; its mounts and time limit join the record's
// profile (launch.PlanOptions.Lane). A cluster without a row runs as it
// would without the table.

// LaneRequest is the request the lane tables read, from the workflow's
// variables.
func LaneRequest(r *Request) srtlanes.Request {
	lr := srtlanes.Request{ModelPrefix: r.ModelPrefix, Precision: r.Precision, Framework: r.Framework,
		SpecDecoding: r.SpecDecoding, Model: r.Model, Agentic: r.Agentic, MultiNode: r.Multinode,
		RunEval: r.RunEval, EvalOnly: r.EvalOnly, Conc: r.Conc}
	// SALLOC_TIME_LIMIT in minutes; one that is no positive integer gives
	// no limit (the single-node request refuses it by name).
	if n, err := strconv.Atoi(r.Env.get("SALLOC_TIME_LIMIT")); err == nil && n > 0 {
		lr.SallocTimeLimit = n
	}
	return lr
}

// LaneChoice is the lane a launch runs on: the runner's cluster, the
// path (srt-multi, srt-native, srt-single) and the row (nil: none).
type LaneChoice struct {
	Cluster string
	Path    srtlanes.Path
	Lane    *srtlanes.Lane
	Request srtlanes.Request
	// SharedRunRoot is the record's srt-slurm.shared-run-root ("" unset).
	SharedRunRoot string
}

// SharedWorkspace is where the job's workspace is copied for a request the
// lane runs on the shared run root ("" : the job mounts the workspace).
func (c LaneChoice) SharedWorkspace(runner string) string {
	if c.SharedRunRoot == "" || !c.Lane.OnSharedRunRoot(c.Request) {
		return ""
	}
	return SharedWorkspaceDir(c.SharedRunRoot, runner)
}

// ChooseLane finds the runner's cluster in the workspace's
// configs/runners.yaml and its lane for r, and refuses r (exit 2) where
// the lane does not run it — naming the cluster, the lane and FRAMEWORK in
// InferenceX's words (lanes.py check_request) — or where the record
// contradicts the lane (table_problems). Without a runners.yaml, or a
// runner it does not list, there is no lane (ok false): the caller's
// reader reports what is missing.
func ChooseLane(ctx context.Context, r *Request) (c LaneChoice, ok bool, err error) {
	c.Request = LaneRequest(r)
	c.Path = srtlanes.InferenceX.PathOf("", c.Request)
	file := filepath.Join(r.Workspace, "configs", "runners.yaml")
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
		return c, false, nil
	}
	inv, err := runners.Load(ctx, file, runners.Options{})
	if err != nil {
		return c, false, exitcode.With(exitcode.Config, err)
	}
	res, err := inv.Resolve(r.Runner)
	if err != nil {
		return c, false, exitcode.With(exitcode.Config, err)
	}
	c.Cluster = res.Cluster.ID
	if srt := res.Cluster.Slurm.SrtSlurm; srt != nil {
		c.SharedRunRoot = srt.SharedRunRoot
	}
	// runners.Cluster.Lane decides, as it does for `slurmbench matrix`.
	l, err := res.Cluster.Lane(c.Request)
	c.Lane, c.Path = l.Lane, l.Path
	var contradicted *runners.LaneError
	switch {
	case errors.As(err, &contradicted):
		return c, true, exitcode.Errorf(exitcode.Config, "%s:%d: %w", file, res.Cluster.Line, err)
	case err != nil:
		return c, true, exitcode.Errorf(exitcode.Config, "RUNNER_NAME %s: %w", r.Runner, err)
	}
	return c, true, nil
}

// Overrides are the lane's recipe edits of the launch, in the order
// InferenceX's submission gives them (srtlanes.Launch.Edits), as
// `slurmbench matrix` takes them too (generate.LaneOverrides).
func (c LaneChoice) Overrides() ([]recipe.Override, error) {
	return generate.LaneOverrides(srtlanes.Launch{Cluster: c.Cluster, Path: c.Path, Lane: c.Lane, Request: c.Request})
}

// maxRecipeBytes bounds the recipe real verification reads.
const maxRecipeBytes = 8 << 20

// RealVerification is the recipe file a real-verification eval binds: on
// an eval-only run the lane verifies for real, a TRT-LLM recipe of the
// multi-node mirror is copied under dir without the lines that force its
// acceptance (recipe.py strip_forced_acceptance edits the job's staged
// copies the same way); otherwise file itself.
func (c LaneChoice) RealVerification(ctx context.Context, workspace, file, dir string) (string, error) {
	if !c.Lane.EvalEdits(c.Request).StripForcedAcceptance {
		return file, nil
	}
	rel, err := filepath.Rel(filepath.Join(workspace, MultinodeRecipes), file)
	if err != nil || !filepath.IsLocal(rel) || !srtlanes.IsTRTLLMRecipe(filepath.ToSlash(rel)) {
		return file, nil
	}
	data, err := readlimit.ReadFileContext(ctx, file, maxRecipeBytes)
	if err != nil {
		return "", exitcode.With(exitcode.Config, fmt.Errorf("real verification: %w", err))
	}
	out := filepath.Join(dir, "real-verification", rel)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", exitcode.With(exitcode.Internal, err)
	}
	if err := atomicfile.WriteFile(out, srtlanes.StripForcedAcceptance(data), atomicfile.Options{Overwrite: true}); err != nil {
		return "", exitcode.With(exitcode.Internal, err)
	}
	return out, nil
}
