package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/login/generate"
)

// SharedBlocks is where InferenceX's tree keeps the blocks a fragment is
// composed with (configs/srt-recipes/, RECIPES.md § Recipe fragments). A
// workspace that has it is InferenceX's tree: its recipes are fragments,
// composed and bound as its launcher binds them; one without it (an
// operator's tree of whole recipes) has its recipe planned as it is.
const SharedBlocks = "configs/srt-recipes"

// Bound is a fragment bound for the launch.
type Bound struct {
	File    string // the bound recipe, one config (its variant selected)
	Cluster string // the runners.yaml cluster whose facts bound it
	// NoPreflight says why the launch skips its preflight ("" : it runs):
	// the record's srt-slurm preflight: false, or a checkpoint staged on
	// node-local storage the launching host cannot see (InferenceX passes
	// srtctl --no-preflight then, drivers/srt/__init__.py@cb6901ae).
	NoPreflight string
	// Tags is what InferenceX tags the job with when the record sets a
	// job-tag (srtctl --tags, submit.py@43c3fcfc); "" when it sets none.
	Tags string
}

// BindFragment composes the row's fragment (file, its selector) with its
// lane's shared blocks — and the telemetry block on a power row —, selects
// its variant and binds the point the environment describes on the
// runner's cluster (its runners.yaml record: GPUs per node, fabric, power
// exporter port, staged checkpoint and squash file), as InferenceX's
// launcher does before it submits (drivers/srt/submit.py@43c3fcfc,
// bind_recipe). The bound recipe is written under dir. A fragment that
// sets a key the binder writes is refused naming file, line and key (exit
// 2), as InferenceX's binder refuses it.
func BindFragment(ctx context.Context, req *Request, file, selector, dir string) (Bound, error) {
	runnersFile := filepath.Join(req.Workspace, "configs", "runners.yaml")
	inv, err := runners.Load(ctx, runnersFile, runners.Options{})
	if err != nil {
		return Bound{}, exitcode.With(exitcode.Config, err)
	}
	res, err := inv.Resolve(req.Runner)
	if err != nil {
		return Bound{}, exitcode.With(exitcode.Config, err)
	}
	cluster, err := generate.RunnersClusters{Inventory: inv}.Cluster(ctx, res.Cluster.ID)
	if err != nil {
		return Bound{}, exitcode.With(exitcode.Config, err)
	}
	// The AgentX client paths of this request: its lane's mounts are
	// chosen by the whole request (drivers/srt/__init__.py, stored id
	// 70893068357: agentic_client_env(cluster, srt, lane, request)).
	cluster.ClientEnv = nil
	for _, p := range res.Cluster.AgenticClientEnv(LaneRequest(req)) {
		cluster.ClientEnv = append(cluster.ClientEnv, fragment.EnvVar{Name: p.Name, Value: p.Value})
	}
	lane := fragment.Lane{Agentic: req.Agentic, MultiNode: req.Multinode}
	point, err := binderPoint(req)
	if err != nil {
		return Bound{}, exitcode.With(exitcode.Config, err)
	}
	power := point.Power && lane.MultiNode
	if power && cluster.PowerExporterPort <= 0 {
		return Bound{}, exitcode.Errorf(exitcode.Config, "%s: cluster %s sets no srt-slurm.power-exporter-port for the power row's DCGM exporter",
			runnersFile, cluster.ID)
	}
	blocks, err := fragment.LoadBlocks(ctx, req.Workspace, lane, power, cluster.PowerExporterPort)
	if err != nil {
		return Bound{}, exitcode.With(exitcode.Config, err)
	}
	b, err := recipe.LoadBound(ctx, file, recipe.Options{Variant: selector, Fragment: &recipe.Fragment{Blocks: blocks,
		Input: fragment.Input{Lane: lane, Point: point, Cluster: cluster}, Stage: true}})
	if err != nil {
		return Bound{}, exitcode.With(exitcode.Config, err)
	}
	var srt runners.SrtSlurm
	if res.Cluster.Slurm.SrtSlurm != nil {
		srt = *res.Cluster.Slurm.SrtSlurm
	}
	LaunchEdits{MultiNode: req.Multinode, DistTimeoutS: srt.DistTimeoutS}.Apply(b.Doc)
	data, err := fragment.Marshal(b.Doc)
	if err != nil {
		return Bound{}, exitcode.With(exitcode.Config, fmt.Errorf("%s: %w", file, err))
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))+".bound.yaml")
	if err := atomicfile.WriteFile(out, data, atomicfile.Options{Overwrite: true}); err != nil {
		return Bound{}, exitcode.With(exitcode.Internal, err)
	}
	return Bound{File: out, Cluster: res.Cluster.ID, NoPreflight: noPreflight(runnersFile, res.Cluster, req), Tags: JobTags(srt.JobTag, req, time.Now())}, nil
}

// noPreflight is why a launch on cluster c skips its preflight ("" : it
// does not): InferenceX runs srtctl's preflight unless the record says
// preflight: false or a multi-node job serves a checkpoint on node-local
// storage, which the launching host cannot check.
func noPreflight(file string, c *runners.Cluster, req *Request) string {
	if srt := c.Slurm.SrtSlurm; srt != nil && !srt.Preflight {
		return fmt.Sprintf("%s: clusters.%s.slurm.srt-slurm.preflight is false", file, c.ID)
	}
	if cp, ok := c.Checkpoint(req.Model); ok && cp.NodeLocal && req.Multinode {
		return fmt.Sprintf("%s: the checkpoint of %s is on node-local volume %s (%s), which this host cannot check", file, req.Model, cp.Volume, cp.Path)
	}
	return ""
}

// JobTags is InferenceX's srtctl --tags value for a multi-node job on a
// cluster whose record sets job-tag (submit.py@43c3fcfc,
// multinode_arguments): job-tag, MODEL_PREFIX, PRECISION, "agentic" or
// ISLxOSL, infmax-<local date YYYYMMDD>. "" without a job-tag or for a
// single-node job.
func JobTags(jobTag string, req *Request, now time.Time) string {
	if jobTag == "" || !req.Multinode {
		return ""
	}
	workload := "agentic"
	if !req.Agentic {
		workload = req.Env.get("ISL") + "x" + req.Env.get("OSL")
	}
	return strings.Join([]string{jobTag, req.ModelPrefix, req.Precision, workload, "infmax-" + now.Local().Format("20060102")}, ",")
}

// binderPoint is the binder's point from the workflow's environment: what
// the workflow exports for the row (infx/matrix/generate.py's
// point_environment, as generate.BinderPoint reads it from the row).
// POWER is the row's `power` (true or 1): the template in the sample does
// not pass it by another name.
func binderPoint(req *Request) (fragment.Point, error) {
	env := req.Env
	p := fragment.Point{Model: req.Model, Image: req.Image, Precision: req.Precision, KVOffloading: env.get("KV_OFFLOADING"),
		Power: env.get("POWER") == "true" || env.get("POWER") == "1"}
	if !req.Agentic {
		p.ISL, p.OSL = req.ISL, req.OSL
		p.RandomRangeRatio = env.get("RANDOM_RANGE_RATIO")
	}
	if v := env.get("TOTAL_CPU_DRAM_GB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return p, fmt.Errorf("TOTAL_CPU_DRAM_GB: %q is not an integer", v)
		}
		p.TotalCPUDRAMGB = n
	}
	num := func(name string) int {
		if n, err := strconv.Atoi(env.get(name)); err == nil {
			return n
		}
		return 1
	}
	if req.Multinode {
		p.Conc = req.ConcList
		p.PrefillTP, p.PrefillPP, p.PrefillPCP = num("PREFILL_TP"), num("PREFILL_PP_SIZE"), num("PREFILL_PCP_SIZE")
	} else {
		p.Conc = []int{req.Conc}
		p.TP, p.EP = num("TP"), num("EP_SIZE")
		p.GPUCount = req.GPUCount
		p.DPAttention = env.get("DP_ATTENTION") == "true"
	}
	var err error
	if p.Router, err = component("ROUTER_METADATA", env.get("ROUTER_METADATA")); err != nil {
		return p, err
	}
	if p.KVOffloadBackend, err = component("KV_OFFLOAD_BACKEND_METADATA", env.get("KV_OFFLOAD_BACKEND_METADATA")); err != nil {
		return p, err
	}
	return p, nil
}

// component is a row's {name, version} metadata as the workflow passes it
// (toJSON of the row's router or kv-offload-backend); nil when unset.
func component(name, v string) (*fragment.Component, error) {
	if v == "" {
		return nil, nil
	}
	var c struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &fragment.Component{Name: c.Name, Version: c.Version}, nil
}

// hasSharedBlocks says whether the workspace is InferenceX's tree.
func hasSharedBlocks(workspace string) bool {
	st, err := os.Stat(filepath.Join(workspace, SharedBlocks))
	return err == nil && st.IsDir()
}
