// Package matrix is `slurmbench matrix`: InferenceX's whole matrix from one
// command. It expands a master config into points as InferenceX's generator
// does (inputs/master.Expand), plans each point, and packs the points that
// fit one allocation (the same entry, cluster, nodes and GPUs: topology.go)
// into one: the first point's topology is brought up once, every point of
// the group runs in it, its servers restarted in place when they differ
// from the previous point's, and it is taken down at the end. Points that
// share with no other get an allocation of their own.
//
// No anchor does this grouping: srtctl submits one job per recipe and
// InferenceX's workflow one per matrix point, each loading the model again.
package matrix

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// maxMasterBytes bounds the master config read (the shipped ones are under
// 400 KB).
const maxMasterBytes = 16 << 20

// DefaultStartup is the setup time a shared allocation saves per point
// when --startup is not given: image import, engine start and model load,
// which the issue this command answers puts at "up to hours"; half an hour
// is a conservative middle for the multi-node recipes.
const DefaultStartup = 30 * time.Minute

// Options are `slurmbench matrix`'s.
type Options struct {
	launch.IO
	Master      string // --master
	Selection   master.Selection
	Profile     string // --profile
	RecipesRoot string // --recipes-root (else the profile's paths.recipes_root)
	PlanOnly    bool   // --plan: print, submit nothing
	// Startup is the per-allocation setup time GPU-hours saved are counted
	// with (--startup; 0: DefaultEstimates' import, staging and install,
	// which sum to DefaultStartup).
	Startup time.Duration
	// Estimates are the durations the groups are packed and costed with
	// (zero fields: DefaultEstimates).
	Estimates   Estimates
	MaxParallel int    // --max-parallel (at least 1)
	RerunFailed bool   // --rerun-failed
	StageDir    string // --stage-dir: each point stages into <dir>/<point>/
	JobName     string
	NoPreflight bool
	BinaryDir   string

	// Today's layout (srt-recipe rows).
	// Runners is runners.yaml (--runners; default: beside the master),
	// also each point's cluster record when no --profile is given (the
	// cluster its entry's runner label reaches);
	// InferenceXRoot the project root recipes resolve under
	// (--inferencex-root; default: the directory above the master's
	// configs/).
	Runners, InferenceXRoot string
	// Workspace is GITHUB_WORKSPACE as the workflow sets it
	// (--workspace): where a runners.yaml record without a shared run root
	// keeps its runs (slurmbench-runs/ in it); "" : the InferenceX root,
	// which is what the workflow exports once it has cd'd there.
	Workspace string
	// SallocTimeLimit is the workflow's SALLOC_TIME_LIMIT (minutes), which
	// the lane's time rule reads where neither the record nor the lane
	// sets a limit (SallocTimeLimit).
	SallocTimeLimit string
	// Compose composes, binds and plans a point (nil: today's points are
	// listed, checked and refused as not composed).
	Compose ComposeFunc
}

// Point is one matrix point with its plan (nil when it cannot be planned:
// Err says why).
type Point struct {
	master.MatrixPoint
	Plan *plan.Plan
	Err  error
	// Fingerprint is the recipe fingerprint of a today's point that
	// composed (package fingerprint).
	Fingerprint string
	// BoundRecipe is the bound recipe file a composed today's point runs.
	BoundRecipe string
	// Configs is the /configs directory a run of a composed today's point
	// staged from its tree ("" when --plan: InferenceX's planner does not
	// look for setup scripts either).
	Configs string
	// NoPlan is why a composed today's point has no plan (Err nil, Plan
	// nil): the planner's refusal of its bound recipe (a *PlanError), or
	// that it was composed on no one cluster.
	NoPlan error
	// LaunchRefusal is why InferenceX's launch would refuse a point
	// --plan planned (its cluster's lane; lane.go).
	LaunchRefusal error
	// lane is the point's lane on its cluster (nil: none), planCluster
	// the cluster it was planned on.
	lane        *pointLane
	planCluster string
	// profileSHA256 is the profile file's, read once by Build (the plan
	// records only the profile's path).
	profileSHA256 string
}

// Group is one allocation: the points run in it, in order. Points[0]'s
// plan is the one brought up.
type Group struct {
	Points []*Point
	// Restart[i] is set when point i starts other servers than point i-1
	// (the driver restarts them in place); Resplit[i] when the
	// prefill/decode split changes too. Both are false for point 0.
	Restart, Resplit []bool
	// Estimate is the allocation's estimated time (setup, engine starts,
	// points) and TimeLimit the limit it was packed under.
	Estimate, TimeLimit time.Duration
}

// Nodes and GPUs are what the group's allocation holds.
func (g Group) Nodes() int {
	if p := g.Points[0].Plan; p != nil {
		return p.Slurm.Nodes
	}
	return 0
}

// GPUs is the allocation's GPU count (nodes × GPUs per node).
func (g Group) GPUs() int {
	if p := g.Points[0].Plan; p != nil {
		return p.Slurm.Nodes * p.Slurm.GPUsPerNode
	}
	return g.Points[0].MatrixPoint.AllocGPUs()
}

// Matrix is the planned matrix.
type Matrix struct {
	Points []*Point
	Groups []Group
	// Startup is the setup time counted per allocation saved.
	Startup time.Duration
	// Est are the estimates the groups were packed and costed with;
	// StartupGiven is set when --startup replaced their setup breakdown.
	Est          Estimates
	StartupGiven bool
	// Skipped are the parts of an older-layout master config that expand
	// to no point (master.SkippedEntries), listed by --plan.
	Skipped []master.Skipped
	// Root is the InferenceX tree a today's master resolves recipes under:
	// --plan names files relative to it.
	Root string
}

// SavedGPUHours is what sharing allocations saves: every point after the
// first of a group skips one allocation's setup on all of its GPUs.
func (m *Matrix) SavedGPUHours() float64 {
	var h float64
	for _, g := range m.Groups {
		h += float64(len(g.Points)-1) * float64(g.GPUs()) * m.Startup.Hours()
	}
	return h
}

// SetupGPUHours is what setup costs without grouping: one setup per
// point on all the GPUs of its allocation.
func (m *Matrix) SetupGPUHours() float64 {
	var h float64
	for _, g := range m.Groups {
		h += float64(len(g.Points)) * float64(g.GPUs()) * m.Startup.Hours()
	}
	return h
}

// Unplanned counts the points whose plan failed.
func (m *Matrix) Unplanned() int {
	n := 0
	for _, p := range m.Points {
		if p.Plan == nil {
			n++
		}
	}
	return n
}

// Build expands, selects, plans and groups. Errors reading the master or
// the selection are config errors; a point that cannot be planned is kept
// with its error (--plan shows it, a run refuses it).
func Build(ctx context.Context, o Options) (*Matrix, error) {
	if o.Master == "" {
		return nil, exitcode.Errorf(exitcode.Config, "--master: required")
	}
	data, err := readlimit.ReadFileContext(ctx, o.Master, maxMasterBytes)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Config, "--master: %w", err)
	}
	eo, err := expandOptions(ctx, o)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	all, err := master.ExpandWith(o.Master, data, eo)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	sel, err := master.Select(all, o.Selection)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	today := len(all) > 0 && all[0].Row != nil
	if len(sel) == 0 {
		what := "multi-node point"
		if today {
			what = "point"
		}
		return nil, exitcode.Errorf(exitcode.Config, "--master %s: no %s matches the selection (%d points in all)", o.Master, what, len(all))
	}
	m := &Matrix{Est: o.Estimates.withDefaults(), Root: eo.Root}
	if o.Startup > 0 {
		// --startup gives setup as one figure.
		m.Est.Import, m.Est.Stage, m.Est.Dynamo, m.StartupGiven = o.Startup, 0, 0, true
	}
	m.Startup = m.Est.Setup()
	if m.Skipped, err = master.SkippedEntries(o.Master, data); err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	var profSHA string
	if file, flag := profileFile(o); file != "" {
		data, err := readlimit.ReadFileContext(ctx, file, maxMasterBytes)
		if err != nil {
			return nil, exitcode.Errorf(exitcode.Config, "%s: %w", flag, err)
		}
		sum := sha256.Sum256(data)
		profSHA = hex.EncodeToString(sum[:])
	}
	rc := newRecipeCache()
	for _, mp := range sel {
		pt := &Point{MatrixPoint: mp, profileSHA256: profSHA}
		if today {
			planToday(ctx, o, eo.Root, pt, rc)
		} else {
			pt.Plan, pt.Err = planPoint(ctx, o, mp)
		}
		m.Points = append(m.Points, pt)
	}
	m.Groups = groupByTopology(m.Points, m.Est)
	return m, nil
}

// profileFile is the file the points' profile is read from, for the
// reuse key: --profile, else the runners.yaml.
func profileFile(o Options) (file, flag string) {
	if o.Profile != "" {
		return o.Profile, "--profile"
	}
	return launch.ProfileSource{Runners: o.Runners, Master: o.Master}.RunnersFile(), "--runners"
}

// PointPlanOptions are the plan inputs of one point, as the workflow job
// running it would give them (CONFIG_FILE, image, ISL/OSL, CONC_LIST,
// RUN_EVAL and EVAL_CONC).
// workspace is the point's GITHUB_WORKSPACE: --workspace, else the
// InferenceX root of a today's master (none for older layouts, whose
// profiles name their runs directory).
func (o Options) workspace() string {
	if o.Workspace != "" || o.Profile != "" {
		return o.Workspace
	}
	if o.InferenceXRoot != "" {
		return o.InferenceXRoot
	}
	if _, err := os.Stat(DefaultRunners(o.Master)); err == nil || o.Runners != "" {
		return DefaultRoot(o.Master)
	}
	return ""
}

func PointPlanOptions(o Options, mp master.MatrixPoint) launch.PlanOptions {
	isl, osl := mp.ISL, mp.OSL
	concs := make([]string, len(mp.Conc))
	for i, c := range mp.Conc {
		concs[i] = strconv.Itoa(c)
	}
	cf := mp.ConfigFile
	if mp.Selector != "" {
		cf += ":" + mp.Selector
	}
	po := launch.PlanOptions{
		Profile: o.Profile, Runners: o.Runners, MasterDir: o.Master, RunnerLabel: mp.Runner,
		Framework: mp.Framework, ModelPrefix: mp.ModelPrefix, ConfigFile: cf, RecipesRoot: o.RecipesRoot, Point: -1,
		Image: mp.Image, ISL: &isl, OSL: &osl, Conc: strings.Join(concs, "x"),
		RunEval: strconv.FormatBool(mp.RunEval), JobName: o.JobName, Workspace: o.workspace(),
		// As the workflow's launch step derives them (workflow.Resolve):
		// a single-node point takes the record's single-node facts, a
		// multi-node AgentX one its agentic mounts.
		SingleNode: !mp.Multinode, AgenticMultiNode: mp.Multinode && mp.Scenario == master.AgenticCoding,
	}
	if mp.RunEval {
		po.EvalConc = EvalConc(mp)
	}
	if mp.EvalOnly {
		// An eval job of today's matrix: the workflow's EVAL_ONLY=true
		// (its recipe, the eval-srt-recipe when the row names one, is the
		// bound file planOptions gives).
		po.EvalOnly = "true"
	}
	return po
}

func planPoint(ctx context.Context, o Options, mp master.MatrixPoint) (*plan.Plan, error) {
	if mp.ConfigFile == "" {
		return nil, fmt.Errorf("%s (line %d): no CONFIG_FILE in additional-settings", mp.Name(), mp.Line)
	}
	pl, _, err := launch.Plan(ctx, PointPlanOptions(o, mp))
	if err != nil {
		return nil, fmt.Errorf("%s (line %d): %w", mp.Name(), mp.Line, err)
	}
	return pl, nil
}

// EvalConc is the EVAL_CONC an eval job of mp runs with: the row's
// eval-conc, else what InferenceX's workflow falls back to when the row
// has none (the generator writes eval-conc only on multi-node rows:
// generate.py mark_eval_entries; a vendor suite's extra GSM8K job of a
// single-node row has none). The multi-node template then takes the
// highest of CONC_LIST (benchmark-multinode-tmpl.yml@00609a17 "Resolve the
// workflow's documented automatic eval-concurrency selection"), as
// srtctl's _run_post_eval does without EVAL_CONC; a single-node point
// evaluates at its own concurrency (single_node.py@03571351
// runtime_arguments passes no EVAL_CONC, the point's CONC is its one
// concurrency). Both are the largest of the point's concurrencies, so 0,
// which no workflow input carries, never reaches EVAL_CONC.
func EvalConc(mp master.MatrixPoint) string {
	if mp.EvalConc > 0 {
		return strconv.Itoa(mp.EvalConc)
	}
	top := 0
	for _, c := range mp.Conc {
		top = max(top, c)
	}
	if top <= 0 {
		return ""
	}
	return strconv.Itoa(top)
}
