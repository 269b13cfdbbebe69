package matrix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/master/fingerprint"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/login/configsdir"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// This file plans the points of today's master layout (srt-recipe rows):
// each point's recipe is found under the InferenceX project root, its
// selector checked against the recipe's variants (validation.py's
// _check_srt_recipe; InferenceX fails the whole matrix on one missing
// recipe, slurmbench refuses that point by name and plans the rest), then
// composed, bound and planned by Options.Compose, and fingerprinted.

// ComposeInput is what composing one point takes.
type ComposeInput struct {
	Point master.MatrixPoint
	// Root is the InferenceX project root (inferencex-e2e/).
	Root string
	// Recipe is the recipe file the point runs (its eval-srt-recipe for an
	// eval-only point that names one), absolute; Selector its variant.
	Recipe, Selector string
}

// Composed is a composed point.
type Composed struct {
	// Recipe is the variant bound without a cluster (a *yaml.Node or a
	// decoded map), as the fingerprint hashes it: hf:<model> unresolved,
	// '@fabric' references as written (fingerprint.Recipe).
	Recipe any
	// Plan is the point's plan on the chosen cluster, the first of its
	// runner label's when the label schedules on several and it plans on
	// each (nil: composed but not planned, which a run refuses).
	Plan *plan.Plan
	// Configs is the /configs directory staged from the tree for a run
	// ("" for --plan).
	Configs string
	// File is the bound recipe as written for the cluster (as `generate`
	// writes it): what `up` and `run` plan the point from when it runs.
	File string
	// PlanErr is why Plan is nil (a *PlanError when the planner refused
	// the bound recipe, a *PointError of ReasonLane when a run's launch
	// would be refused by the cluster's lane).
	PlanErr error
	// LaunchRefusal is why InferenceX's launch would refuse the point on
	// its cluster's lane (--plan: planned all the same, as its matrix
	// generator lists it; lane.go).
	LaunchRefusal error
	// lane is the point's lane on the cluster it runs on (nil: none);
	// cluster that cluster.
	lane    *pointLane
	cluster string
}

// ComposeFunc composes, binds and plans one point.
type ComposeFunc func(ctx context.Context, in ComposeInput) (*Composed, error)

// Refusal reasons the plan counts by.
const (
	ReasonRefused     = "refused by the generator's rules"
	ReasonNoRecipe    = "recipe not in this tree"
	ReasonNoVariant   = "selector names no variant"
	ReasonNotComposed = "not composed"
	ReasonCompose     = "composition refused"
	ReasonNoPlan      = "composed, no plan"
	// ReasonNoBlock is a point whose lane's shared block (or the telemetry
	// block of a power row) is not in the tree: missing input, like a
	// recipe not in the tree, not a refusal of the recipe.
	ReasonNoBlock = "shared block not in this tree"
)

// PointError is why a point cannot be planned, with its reason class.
type PointError struct {
	Reason string
	Err    error
}

func (e *PointError) Error() string { return e.Err.Error() }
func (e *PointError) Unwrap() error { return e.Err }

// ReasonOf is err's reason class ("" when err is nil).
func ReasonOf(err error) string {
	if err == nil {
		return ""
	}
	var pe *PointError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ReasonCompose
}

func refuse(reason string, mp master.MatrixPoint, format string, args ...any) error {
	return &PointError{Reason: reason, Err: fmt.Errorf("%s (line %d): %s", mp.Name(), mp.Line, fmt.Sprintf(format, args...))}
}

// DefaultRoot is the InferenceX project root a master config implies:
// the directory above its configs/ directory.
func DefaultRoot(masterPath string) string {
	return filepath.Dir(filepath.Dir(masterPath))
}

// DefaultRunners is the runners.yaml beside the master config.
func DefaultRunners(masterPath string) string {
	return filepath.Join(filepath.Dir(masterPath), "runners.yaml")
}

// expandOptions reads runners.yaml's facts (when the file exists or was
// named) for the generator.
func expandOptions(ctx context.Context, o Options) (master.ExpandOptions, error) {
	eo := master.ExpandOptions{Root: o.InferenceXRoot}
	if eo.Root == "" {
		eo.Root = DefaultRoot(o.Master)
	}
	path := o.Runners
	if path == "" {
		path = DefaultRunners(o.Master)
		if _, err := os.Stat(path); err != nil {
			return eo, nil
		}
	}
	data, err := readlimit.ReadFileContext(ctx, path, maxMasterBytes)
	if err != nil {
		return eo, fmt.Errorf("--runners: %w", err)
	}
	f, err := master.ReadRunnerFacts(path, data)
	if err != nil {
		return eo, err
	}
	eo.Runners = f
	return eo, nil
}

// planToday plans one point of today's layout into pt: its plan, its
// recipe fingerprint and bound recipe when it composed, why a composed
// point has no plan (NoPlan), or why it was refused (Err).
func planToday(ctx context.Context, o Options, root string, pt *Point, rc *recipeCache) {
	var c *Composed
	c, pt.Fingerprint, pt.Err = composeToday(ctx, o, root, pt.MatrixPoint, rc)
	if c != nil {
		pt.Plan, pt.BoundRecipe, pt.NoPlan, pt.Configs = c.Plan, c.File, c.PlanErr, c.Configs
		pt.LaunchRefusal, pt.lane, pt.planCluster = c.LaunchRefusal, c.lane, c.cluster
		if pt.Plan == nil && pt.NoPlan == nil {
			pt.NoPlan = errors.New("composed; the composer planned it on no cluster")
		}
	}
}

// composeToday composes one point of today's layout; fp is its recipe
// fingerprint.
func composeToday(ctx context.Context, o Options, root string, mp master.MatrixPoint, rc *recipeCache) (*Composed, string, error) {
	if mp.Refusal != "" {
		return nil, "", refuse(ReasonRefused, mp, "%s", mp.Refusal)
	}
	ref := mp.SrtRecipe
	if mp.EvalOnly && mp.EvalSrtRecipe != "" {
		ref = mp.EvalSrtRecipe
	}
	file, selector, _ := strings.Cut(ref, ":")
	abs := filepath.Join(root, filepath.FromSlash(file))
	doc, err := rc.read(ctx, abs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", refuse(ReasonNoRecipe, mp, "recipe %s is not in this tree (%s)", file, root)
	}
	if err != nil {
		return nil, "", refuse(ReasonNoRecipe, mp, "reading recipe %s: %v", file, err)
	}
	if err := checkVariant(doc, selector); err != nil {
		return nil, "", refuse(ReasonNoVariant, mp, "%s: %v", ref, err)
	}
	if o.Compose == nil {
		return nil, "", refuse(ReasonNotComposed, mp, "recipe %s found; composing and binding fragments is not available to this matrix", ref)
	}
	c, err := o.Compose(ctx, ComposeInput{Point: mp, Root: root, Recipe: abs, Selector: selector})
	if err != nil {
		reason := ReasonCompose
		var missing *fragment.MissingBlockError
		if errors.As(err, &missing) {
			reason = ReasonNoBlock
		}
		return nil, "", &PointError{Reason: reason, Err: fmt.Errorf("%s (line %d): %w", mp.Name(), mp.Line, err)}
	}
	// The planner fingerprints benchmark rows only (plan.py@07db303e
	// build_plan; RECIPES.md: "every benchmark row"): an eval-only row has
	// none.
	fp := ""
	if !mp.EvalOnly {
		if fp, err = fingerprint.Recipe(mp.Row, c.Recipe); err != nil {
			return nil, "", fmt.Errorf("%s (line %d): fingerprint: %w", mp.Name(), mp.Line, err)
		}
	}
	return c, fp, nil
}

// checkVariant is validation.py's _check_srt_recipe for a read recipe: a
// selector needs an override bundle with a base, and names one of its
// groups (a zip group's index within its longest list).
func checkVariant(doc any, selector string) error {
	if selector == "" {
		return nil
	}
	m, ok := doc.(map[string]any)
	if _, hasBase := m["base"]; !ok || !hasBase {
		return fmt.Errorf("only an override bundle with a base takes a selector")
	}
	group, index, zipped := strings.Cut(strings.TrimSuffix(selector, "]"), "[")
	g, ok := m[group]
	if !ok {
		return fmt.Errorf("no variant %s", selector)
	}
	if zipped {
		i, err := strconv.Atoi(index)
		if err != nil || i >= zipLength(g) {
			return fmt.Errorf("no variant %s", selector)
		}
	}
	return nil
}

// recipeCache reads each recipe file once per matrix (points of one
// recipe are many: one per concurrency on single-node rows).
type recipeCache struct {
	docs map[string]any
	errs map[string]error
}

func newRecipeCache() *recipeCache {
	return &recipeCache{docs: map[string]any{}, errs: map[string]error{}}
}

func (c *recipeCache) read(ctx context.Context, path string) (any, error) {
	if err, ok := c.errs[path]; ok {
		return nil, err
	}
	if d, ok := c.docs[path]; ok {
		return d, nil
	}
	var doc any
	data, err := readlimit.ReadFileContext(ctx, path, maxMasterBytes)
	if err == nil {
		if uerr := yaml.Unmarshal(data, &doc); uerr != nil {
			err = uerr
		}
	}
	if err != nil {
		c.errs[path] = err
		return nil, err
	}
	c.docs[path] = doc
	return doc, nil
}

// zipLength is the variant count of a zip group: srtctl broadcasts
// one-element lists, so its longest list.
func zipLength(v any) int {
	switch x := v.(type) {
	case []any:
		return len(x)
	case map[string]any:
		n := 0
		for _, c := range x {
			n = max(n, zipLength(c))
		}
		return n
	}
	return 0
}

// servingKey identifies a today's point's servers before it is composed:
// the same row but for concurrency, experiment name and eval selection
// (run-eval, eval-only, eval-conc, eval-all-concs, eval-framework,
// eval-suite, require-power), with an eval-only point's eval-srt-recipe
// standing for its srt-recipe. Within one tree that is "the same recipe
// fingerprint with the eval selection left out": the composed recipe is a
// function of the row minus concurrency, and an eval runs against the live
// engine after the benchmark. So an eval job runs on its benchmark's
// servers, where InferenceX deploys the recipe again for it.

// evalSelection are the row fields an allocation's server does not
// depend on, beside the fingerprint's own exclusions.
var evalSelection = []string{"run-eval", "eval-only", "eval-conc", "eval-all-concs", "eval-framework", "eval-suite", "require-power"}

func servingKey(p *Point) string {
	row := make(map[string]any, len(p.Row))
	for k, v := range p.Row {
		row[k] = v
	}
	for _, f := range evalSelection {
		delete(row, f)
	}
	if p.EvalOnly && p.EvalSrtRecipe != "" {
		row["srt-recipe"] = p.EvalSrtRecipe
	}
	id, err := fingerprint.Row(row)
	if err != nil {
		return ""
	}
	return id
}

// refusalCounts are the unplanned points by reason, most first.
func refusalCounts(pts []*Point) [][2]string {
	n := map[string]int{}
	for _, p := range pts {
		switch {
		case p.Plan != nil:
		case p.Err != nil:
			n[ReasonOf(p.Err)]++
		default:
			n[noPlanReason(p)]++
		}
	}
	var out [][2]string
	for r, c := range n {
		out = append(out, [2]string{r, strconv.Itoa(c)})
	}
	sort.Slice(out, func(a, b int) bool {
		ca, _ := strconv.Atoi(out[a][1])
		cb, _ := strconv.Atoi(out[b][1])
		if ca != cb {
			return ca > cb
		}
		return out[a][0] < out[b][0]
	})
	return out
}

// planOptions are the plan inputs of p as a run takes them: a today's
// point runs its bound recipe file, an older one its CONFIG_FILE.
func planOptions(o Options, p *Point) launch.PlanOptions {
	po := PointPlanOptions(o, p.MatrixPoint)
	if p.BoundRecipe != "" {
		po.ConfigFile, po.RecipesRoot, po.Recipe = "", "", p.BoundRecipe
	}
	if p.Configs != "" {
		po.Configs, po.ConfigsNote = p.Configs, configsdir.Note
	}
	if p.Cluster == "" && p.planCluster != "" {
		// The cluster the composer planned it on (a label's first).
		po.Cluster = p.planCluster
	}
	p.lane.applyTo(&po)
	return po
}

// noPlanReason is the reason class of a composed point without a plan:
// the lane's refusal (ReasonLane), else ReasonNoPlan.
func noPlanReason(p *Point) string {
	var pe *PointError
	if errors.As(p.NoPlan, &pe) {
		return pe.Reason
	}
	return ReasonNoPlan
}
