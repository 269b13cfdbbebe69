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
	"github.com/slurmbench/slurmbench/launcher/login/generate"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// Composer is Options.Compose over the recipe reader's fragment stages
// (docs/recipes.md): the point's fragment composed with its shared blocks,
// its variant selected and the point bound without a cluster (what the
// fingerprint hashes); then, for the one cluster its runner label
// schedules on, bound with that cluster's facts (its staged checkpoint and
// squash file in place of hf:<model> and the image, where it names them),
// written as generate writes it (under <stage-dir>/bound-recipes/, else a temporary
// directory) and planned with the point's profile (--profile, else the
// runners.yaml record of its cluster; a point the profile cannot plan is
// composed all the same, the why on stderr). A cluster's binder facts are its
// runners.yaml record's (generate.RunnersClusters); without a runners.yaml
// only its id and GPUs per node are known.
func Composer(o Options) ComposeFunc {
	var once, loadRunners sync.Once
	var dir string
	var dirErr, runnersErr error
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
		mp := in.Point
		lane := fragment.Lane{Agentic: mp.Scenario == master.AgenticCoding, MultiNode: mp.Multinode}
		point := generate.BinderPoint(mp)
		power := mp.Power && lane.MultiNode
		var blocks fragment.Blocks
		bind := func(c fragment.Cluster, port int, onCluster bool) (*recipe.Bound, error) {
			var err error
			if blocks, err = fragment.LoadBlocks(ctx, in.Root, lane, power, port); err != nil {
				return nil, err
			}
			return recipe.LoadBound(ctx, in.Recipe, recipe.Options{Variant: in.Selector,
				Fragment: &recipe.Fragment{Blocks: blocks, Input: fragment.Input{Lane: lane, Point: point, Cluster: c}, KeepFabric: !onCluster, Stage: onCluster}})
		}
		free, err := bind(fragment.Cluster{GPUsPerNode: mp.GPUsPerNode}, 0, false)
		if err != nil {
			return nil, err
		}
		c := &Composed{Recipe: free.Doc}
		if mp.Cluster == "" {
			c.PlanErr = spansClusters(inv, mp.Runner)
			return c, nil
		}
		cluster := fragment.Cluster{ID: mp.Cluster, GPUsPerNode: mp.GPUsPerNode, Fabric: fragment.Fabric{Unread: true}}
		if clusters != nil {
			if cluster, err = clusters.Cluster(ctx, mp.Cluster); err != nil {
				return nil, err
			}
		}
		if power && cluster.PowerExporterPort <= 0 {
			return nil, fmt.Errorf("cluster %s sets no srt-slurm.power-exporter-port for the power row's DCGM exporter", cluster.ID)
		}
		bound, err := bind(cluster, cluster.PowerExporterPort, true)
		if err != nil {
			return nil, err
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
			return nil, dirErr
		}
		if c.File, err = writeBound(dir, mp, bound); err != nil {
			return nil, err
		}
		if o.Profile == "" && clusters == nil {
			c.PlanErr = errors.New("no profile to plan with: give --profile, or a runners.yaml (--runners, or beside the master config)")
			return c, nil
		}
		po := PointPlanOptions(o, mp)
		po.Recipe, po.ConfigFile = c.File, ""
		if lane.Agentic {
			po.ISL, po.OSL = nil, nil
		}
		if c.Plan, _, err = launch.Plan(ctx, po); err != nil {
			// Composed all the same: its fingerprint groups it, and a run
			// refuses it as composed but not planned, saying why in the
			// files the user wrote.
			c.Plan = nil
			c.PlanErr = locatePlanError(ctx, in, blocks, bound, c.File, err)
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

// spansClusters is why a point on runner label is planned on no cluster:
// the label schedules on several (or runners.yaml does not say which),
// and which one runs the job is the runner that picks it up (RUNNER_NAME).
func spansClusters(inv *runners.Inventory, label string) error {
	const why = "composed and fingerprinted; the runner that takes the job (RUNNER_NAME) picks the cluster, so it is planned on none here"
	if inv != nil {
		ids, err := inv.LabelClusters(label)
		switch {
		case err != nil:
			return fmt.Errorf("runner label %s is no label of %s: composed and fingerprinted, planned on no cluster", label, inv.Path)
		case len(ids) > 1:
			return fmt.Errorf("runner label %s schedules on %d clusters (%s): %s", label, len(ids), strings.Join(ids, ", "), why)
		}
	}
	return fmt.Errorf("runner label %s names no one cluster: %s", label, why)
}
