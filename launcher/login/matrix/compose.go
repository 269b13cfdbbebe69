package matrix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/login/configsdir"
	"github.com/slurmbench/slurmbench/launcher/login/generate"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// Composer is Options.Compose over the recipe reader's fragment stages
// (docs/recipes.md): the point's fragment composed with its shared blocks,
// its variant selected and the point bound without a cluster (what the
// fingerprint hashes); then, for each cluster its runner label
// schedules on (a label on several is planned on each, the first's plan
// kept, the first refusal named with its cluster), bound with that cluster's facts (its staged checkpoint and
// squash file in place of hf:<model> and the image, where it names them),
// written as generate writes it (under <stage-dir>/bound-recipes/, else a temporary
// directory) and planned with the point's profile (--profile, else the
// runners.yaml record of its cluster; a point the profile cannot plan is
// composed all the same, the why on stderr). A cluster's binder facts are its
// runners.yaml record's (generate.RunnersClusters); without a runners.yaml
// only its id and GPUs per node are known.
func Composer(o Options) ComposeFunc {
	var once, loadRunners, stageConfigs sync.Once
	var dir, configs string
	var dirErr, runnersErr, configsErr error
	var clusters generate.Clusters
	var inv *runners.Inventory
	return func(ctx context.Context, in ComposeInput) (*Composed, error) {
		loadRunners.Do(func() {
			if file := (launch.ProfileSource{Runners: o.Runners, Master: o.Master}).RunnersFile(); file != "" {
				if inv, runnersErr = runners.Load(ctx, file, runners.Options{}); runnersErr == nil {
					clusters = generate.RunnersClusters{Inventory: inv}
				}
			}
		})
		if runnersErr != nil {
			return nil, runnersErr
		}
		if ws := o.workspace(); !o.PlanOnly && ws != "" {
			// A run: every container sees /configs as a workflow run's do
			// (configsdir), staged once for the matrix from the tree, in
			// the workspace its jobs mount (on the filesystem the nodes
			// share). --plan stages nothing: InferenceX's planner does not
			// look for setup scripts either.
			stageConfigs.Do(func() {
				configs = configsdir.Under(ws)
				configsErr = configsdir.Stage(ctx, in.Root, configs)
			})
			if configsErr != nil {
				return nil, configsErr
			}
		}
		mp := in.Point
		lane := fragment.Lane{Agentic: mp.Scenario == master.AgenticCoding, MultiNode: mp.Multinode}
		point := generate.BinderPoint(mp)
		power := mp.Power && lane.MultiNode
		var blocks fragment.Blocks
		bind := func(file string, c fragment.Cluster, port int, onCluster bool) (*recipe.Bound, error) {
			var err error
			if blocks, err = fragment.LoadBlocks(ctx, in.Root, lane, power, port); err != nil {
				return nil, err
			}
			return recipe.LoadBound(ctx, file, recipe.Options{Variant: in.Selector,
				Fragment: &recipe.Fragment{Blocks: blocks, Input: fragment.Input{Lane: lane, Point: point, Cluster: c}, KeepFabric: !onCluster, Stage: onCluster}})
		}
		free, err := bind(in.Recipe, fragment.Cluster{GPUsPerNode: mp.GPUsPerNode}, 0, false)
		if err != nil {
			return nil, err
		}
		// onCluster binds the point for one cluster, writes the bound
		// recipe and plans it: the file, the plan or why not (planErr), its
		// lane there (nil: none), or an error that refuses the composition.
		onCluster := func(id string, several bool) (file string, pl *plan.Plan, ln *pointLane, planErr, err error) {
			mp := mp
			mp.Cluster = id
			cluster := fragment.Cluster{ID: mp.Cluster, GPUsPerNode: mp.GPUsPerNode, Fabric: fragment.Fabric{Unread: true}}
			var rec *runners.Cluster
			if clusters != nil {
				if cluster, err = clusters.Cluster(ctx, mp.Cluster); err != nil {
					return "", nil, nil, nil, err
				}
				rec = inv.Clusters[id]
			}
			// The point's launch on this cluster, decided as the
			// workflow's run decides it (lane.go).
			if ln, err = decideLane(rec, mp, SallocTimeLimit(o.SallocTimeLimit)); err != nil {
				return "", nil, nil, nil, err
			}
			if ln != nil {
				// The AgentX client paths of this request: its lane's
				// mounts are chosen by the whole request, as
				// workflow.BindFragment binds them.
				cluster.ClientEnv = nil
				for _, p := range rec.AgenticClientEnv(ln.Request) {
					cluster.ClientEnv = append(cluster.ClientEnv, fragment.EnvVar{Name: p.Name, Value: p.Value})
				}
			}
			if power && cluster.PowerExporterPort <= 0 {
				return "", nil, nil, nil, fmt.Errorf("cluster %s sets no srt-slurm.power-exporter-port for the power row's DCGM exporter", cluster.ID)
			}
			once.Do(func() {
				if o.StageDir != "" {
					dir = filepath.Join(o.StageDir, "bound-recipes")
					dirErr = os.MkdirAll(dir, 0o755)
				} else {
					dir, dirErr = os.MkdirTemp("", "slurmbench-bound-")
				}
			})
			if dirErr != nil {
				return "", nil, nil, nil, dirErr
			}
			src := in.Recipe
			if ln != nil && ln.Refusal == nil {
				if src, err = realVerification(ctx, ln, in.Root, in.Recipe, filepath.Join(dir, id)); err != nil {
					return "", nil, nil, nil, err
				}
			}
			bound, err := bind(src, cluster, cluster.PowerExporterPort, true)
			if err != nil {
				return "", nil, nil, nil, err
			}
			into := dir
			if several { // one bound file per cluster: their staged paths differ
				into = filepath.Join(dir, id)
				if err := os.MkdirAll(into, 0o755); err != nil {
					return "", nil, nil, nil, fmt.Errorf("creating %s: %w", into, err)
				}
			}
			if file, err = writeBound(into, mp, bound); err != nil {
				return "", nil, nil, nil, err
			}
			if o.Profile == "" && clusters == nil {
				return file, nil, nil, errors.New("no profile to plan with: give --profile, or a runners.yaml (--runners, or beside the master config)"), nil
			}
			if ln != nil && ln.Refusal != nil && !o.PlanOnly {
				// A run: InferenceX's launch refuses it before it submits.
				return file, nil, ln, &PointError{Reason: ReasonLane, Err: ln.Refusal}, nil
			}
			po := PointPlanOptions(o, mp)
			po.Recipe, po.ConfigFile = file, ""
			if configs != "" {
				po.Configs, po.ConfigsNote = configs, configsdir.Note
			}
			if in.Point.Cluster == "" {
				po.Cluster = id
			}
			if lane.Agentic {
				po.ISL, po.OSL = nil, nil
			}
			ln.applyTo(&po)
			if pl, _, err = launch.Plan(ctx, po); err != nil {
				// Composed all the same: its fingerprint groups it, and a run
				// refuses it as composed but not planned, saying why in the
				// files the user wrote.
				return file, nil, ln, locatePlanError(ctx, in, blocks, bound, file, err), nil
			}
			return file, pl, ln, nil, nil
		}
		c := &Composed{Recipe: free.Doc, Configs: configs}
		ids := []string{mp.Cluster}
		if mp.Cluster == "" {
			// A label on several clusters runs wherever a runner of it
			// picks the job up (RUNNER_NAME): planned on each, so a
			// cluster the point cannot run on is named here, not there.
			if ids, err = labelClusters(inv, mp.Runner); err != nil {
				c.PlanErr = err
				return c, nil
			}
		}
		for _, id := range ids {
			file, pl, ln, planErr, err := onCluster(id, len(ids) > 1)
			if err != nil {
				if len(ids) > 1 {
					err = fmt.Errorf("on cluster %s (runner label %s): %w", id, mp.Runner, err)
				}
				return nil, err
			}
			if c.File == "" {
				// The first cluster's is the one the matrix runs.
				c.File, c.Plan, c.lane, c.cluster = file, pl, ln, id
			}
			if ln != nil && ln.Refusal != nil && c.LaunchRefusal == nil {
				c.LaunchRefusal = ln.Refusal
			}
			if planErr != nil {
				if len(ids) > 1 {
					planErr = fmt.Errorf("on cluster %s (runner label %s schedules on %s): %w", id, mp.Runner, strings.Join(ids, ", "), planErr)
				}
				c.Plan, c.PlanErr = nil, planErr
				break
			}
		}
		return c, nil
	}
}

// writeBound writes a bound recipe under dir with generate's file name.
func writeBound(dir string, mp master.MatrixPoint, b *recipe.Bound) (string, error) {
	data, err := fragment.Marshal(b.Doc)
	if err != nil {
		return "", err
	}
	row, err := mp.RowJSON()
	if err != nil {
		return "", err
	}
	var sel *string
	if b.Selector != "" {
		sel = &b.Selector
	}
	name, err := generate.FileName(mp.Key, row, sel)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, name)
	return file, atomicfile.WriteFile(file, data, atomicfile.Options{Overwrite: true})
}

// labelClusters are the clusters a point on runner label schedules on:
// one, or several (its runner picks one up, RUNNER_NAME); none is why it
// is planned on no cluster.
func labelClusters(inv *runners.Inventory, label string) ([]string, error) {
	if inv == nil {
		return nil, fmt.Errorf("runner label %s names no one cluster without a runners.yaml: composed and fingerprinted, planned on none", label)
	}
	ids, err := inv.LabelClusters(label)
	if err != nil || len(ids) == 0 {
		return nil, fmt.Errorf("runner label %s is no label of %s: composed and fingerprinted, planned on no cluster", label, inv.Path)
	}
	return ids, nil
}
