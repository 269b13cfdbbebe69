package matrix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/readlimit"

	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
	"github.com/slurmbench/slurmbench/launcher/login/generate"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// This file gives a today's point on a runners.yaml cluster what the
// workflow's launch of its row there gets from InferenceX's lane tables
// (docs/inferencex.md, "The lane tables"), decided by the same code
// (runners.Cluster.Lane, srtlanes.Launch, generate.LaneOverrides): the
// lane's recipe edits and setup script join the point's plan, its mounts
// and time limit join the cluster's profile (launch.PlanOptions.Lane).
//
// A request the lane refuses is InferenceX's launch-time rule
// (lanes.py check_request, run by infx.launch before anything is
// submitted); its matrix generator (infx/matrix/generate.py) applies no
// lane. So `matrix --plan` plans such a point as the generator lists it and
// notes that a launch would refuse it (Point.LaunchRefusal), and a run
// lists it not planned for the lane's reason (ReasonLane) and submits
// nothing, as a launch refuses before it submits.

// ReasonLane is a point the lane of its cluster refuses at launch (a run
// only: --plan notes it, Point.LaunchRefusal).
const ReasonLane = "refused by the cluster's lane at launch"

// SallocTimeLimit is the workflow's SALLOC_TIME_LIMIT as the lane's time
// rule reads it: minutes, a value that is no positive integer none
// (workflow.LaneRequest reads it the same way).
func SallocTimeLimit(v string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return n
	}
	return 0
}

// LaneRequest is the request the lane tables read of mp, as the workflow's
// variables for its row carry it (workflow.LaneRequest reads the same
// fields from MODEL_PREFIX, PRECISION, FRAMEWORK, SPEC_DECODING, MODEL,
// IS_AGENTIC, IS_MULTINODE, RUN_EVAL, EVAL_ONLY, CONC and
// SALLOC_TIME_LIMIT): CONC is a single-node point's one concurrency (the
// workflow passes CONC only to single-node jobs).
func LaneRequest(mp master.MatrixPoint, sallocMinutes int) srtlanes.Request {
	r := srtlanes.Request{ModelPrefix: mp.ModelPrefix, Precision: mp.Precision, Framework: mp.Framework,
		SpecDecoding: mp.SpecDecoding, Model: mp.Model, Agentic: mp.Scenario == master.AgenticCoding,
		MultiNode: mp.Multinode, RunEval: mp.RunEval, EvalOnly: mp.EvalOnly, SallocTimeLimit: sallocMinutes}
	if !mp.Multinode && len(mp.Conc) == 1 {
		r.Conc = mp.Conc[0]
	}
	return r
}

// pointLane is what a point's lane gives its launch on one cluster.
type pointLane struct {
	Request srtlanes.Request
	Launch  srtlanes.Launch
	// Overrides are the lane's recipe edits (setup script included).
	Overrides []recipe.Override
	// Mounts are the volumes the point's job mounts ("host:container"):
	// the record's volume-mounts, a multi-node AgentX point's agentic
	// mounts, then the lane's (runners.Cluster.JobMounts).
	Mounts []string
	// rec is the cluster's record.
	rec *runners.Cluster
	// Refusal is why a launch refuses the point (nil: it runs).
	Refusal error
}

// decideLane is the lane of mp on cluster rec (nil: a cluster runners.yaml
// does not describe, which has none).
func decideLane(rec *runners.Cluster, mp master.MatrixPoint, sallocMinutes int) (*pointLane, error) {
	if rec == nil {
		return nil, nil
	}
	pl := &pointLane{Request: LaneRequest(mp, sallocMinutes), rec: rec}
	var refused *srtlanes.RefusedError
	var contradicted *runners.LaneError
	var err error
	pl.Launch, err = rec.Lane(pl.Request)
	switch {
	case errors.As(err, &refused), errors.As(err, &contradicted):
		pl.Refusal = err
		return pl, nil
	case err != nil:
		return nil, err
	}
	if pl.Overrides, err = generate.LaneOverrides(pl.Launch); err != nil {
		return nil, err
	}
	for _, m := range rec.JobMounts(pl.Request) {
		pl.Mounts = append(pl.Mounts, m.Host+":"+m.Container)
	}
	return pl, nil
}

// key is what of the lane an allocation is fixed by: the path, the setup
// script the lane gives every worker and the job's mounts (the time
// limit is the plan's, in topologyKey). Points whose keys differ must not
// share an allocation: its job is submitted with the first point's mounts
// and setup.
func (pl *pointLane) key() string {
	if pl == nil {
		return ""
	}
	m := slices.Clone(pl.Mounts)
	slices.Sort(m)
	return fmt.Sprintf("%s;setup=%s;mounts=%s", pl.Launch.Path, pl.Launch.SetupScript(), strings.Join(m, ","))
}

// applyTo gives po the lane: the request the profile's lane rules read
// (mounts, time limit) and the lane's recipe edits after the point's own.
func (pl *pointLane) applyTo(po *launch.PlanOptions) {
	if pl == nil {
		return
	}
	req := pl.Request
	po.Lane = &req
	po.Overrides = append(po.Overrides, pl.Overrides...)
}

// createMountHosts creates the host directories of the point's job's
// volumes before it is submitted, as the workflow's run does
// (runners.Cluster.CreateMountHosts). No lane: nothing to create.
func (pl *pointLane) createMountHosts() error {
	if pl == nil || pl.rec == nil {
		return nil
	}
	return pl.rec.CreateMountHosts(pl.Request)
}

// maxRecipeBytes bounds the recipe real verification reads.
const maxRecipeBytes = 8 << 20

// realVerification is the recipe a point binds on its lane: on an
// eval-only launch whose lane verifies for real, a TRT-LLM recipe of the
// multi-node mirror is copied under dir without the lines that force its
// acceptance (srtlanes.StripForcedAcceptance, as the workflow's
// LaneChoice.RealVerification copies it); otherwise file itself.
func realVerification(ctx context.Context, pl *pointLane, root, file, dir string) (string, error) {
	if !pl.Launch.Lane.EvalEdits(pl.Request).StripForcedAcceptance {
		return file, nil
	}
	rel, err := filepath.Rel(filepath.Join(root, multinodeRecipes), file)
	if err != nil || !filepath.IsLocal(rel) || !srtlanes.IsTRTLLMRecipe(filepath.ToSlash(rel)) {
		return file, nil
	}
	data, err := readlimit.ReadFileContext(ctx, file, maxRecipeBytes)
	if err != nil {
		return "", fmt.Errorf("real verification: %w", err)
	}
	out := filepath.Join(dir, "real-verification", rel)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(out, srtlanes.StripForcedAcceptance(data), atomicfile.Options{Overwrite: true}); err != nil {
		return "", err
	}
	return out, nil
}

// multinodeRecipes is the multi-node recipe mirror under the InferenceX
// root (workflow.MultinodeRecipes).
const multinodeRecipes = "benchmarks/multi_node/srt-slurm-recipes"
