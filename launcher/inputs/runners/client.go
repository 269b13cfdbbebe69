package runners

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// The AgentX client paths of a multi-node agentic job. InferenceX's
// launcher derives them from the volumes the job mounts and hands them to
// its binder as client_env (infx/launch/drivers/srt/__init__.py, stored id
// 70893068357: config.agentic_client_env(cluster, srt, lane, request) when
// the request is agentic; infx/srt_slurm/generate.py@02d0272d does the same
// for `infx generate`). The function's own text is not in the stored
// index; the rule here is read from what is:
//
//   - RESULT_DIR is the lane's agentic_result_dir, "/logs/agentic" unless
//     the lane says otherwise (infx/launch/drivers/srt/lanes.py, stored id
//     71306020057: SrtLane.agentic_result_dir; mi355x-amds
//     "/infmax-workspace/LOGS/agentic").
//   - AIPERF_DATASET_MMAP_CACHE_DIR is where the job mounts the aiperf-cache
//     volume, HF_HUB_CACHE where it mounts the hf-hub-cache volume: the
//     generate test (tests of infx generate, stored id 70969740837) binds a
//     record with volume-mounts {hf-hub-cache: /hf} and
//     agentic-volume-mounts {aiperf-cache: /aiperf} to RESULT_DIR /results
//     (its lane's), AIPERF_DATASET_MMAP_CACHE_DIR /aiperf and HF_HUB_CACHE
//     /hf, in that order ("the lane's result directory, the AgentX-only
//     aiperf mount and the cluster-wide Hub cache").
//   - The mounts are volume-mounts (every job), agentic-volume-mounts
//     (multi-node AgentX jobs add them, configs/CONFIGS.md@01381e4e) and
//     the lane's mounts (RECIPES.md § Recipe fragments, point 3).
//
// Choices the stored text does not settle, made here and documented in
// docs/inferencex.md: a volume mounted by several of those takes the most
// specific one (lane, then agentic-volume-mounts, then volume-mounts); a
// volume mounted nowhere sets no variable (the client keeps its own
// default); the Hub cache is the hf-hub-cache volume, else the
// shared-hf-hub-cache volume that single-node lanes use in its place
// (drivers/srt/models.py, stored id 71170218454: single_node_hf_cache).

// The volume names the client paths follow.
const (
	VolumeAIPerfCache      = "aiperf-cache"
	VolumeHFHubCache       = "hf-hub-cache"
	VolumeSharedHFHubCache = "shared-hf-hub-cache"
)

// ClientPath is one AgentX client path: a variable, its container path,
// and where it came from (for render and doctor).
type ClientPath struct {
	Name, Value string
	From        string // "lane", "slurm.srt-slurm.volume-mounts.<vol>", …
}

// Mount is one volume a multi-node AgentX job mounts: host path (the
// volume's), container path, and the field that asked for it.
type Mount struct {
	Volume, Host, Container string
	From                    string
	// WorldWritable: the launcher opens the host directory to every user
	// (agentic-volume-mounts and some lane mounts: several runner users
	// share the cache).
	WorldWritable bool
}

// AgenticMounts are the mounts a multi-node AgentX job adds to the
// cluster's volume-mounts: the record's agentic-volume-mounts, each
// volume's host path from slurm.volumes (sorted by volume), opened to
// every user.
func (c *Cluster) AgenticMounts() []Mount {
	var out []Mount
	if srt := c.Slurm.SrtSlurm; srt != nil {
		for _, v := range sortedKeys(srt.AgenticVolumeMounts) {
			out = append(out, Mount{Volume: v, Host: c.Slurm.Volumes[v].Path, Container: srt.AgenticVolumeMounts[v],
				From: "slurm.srt-slurm.agentic-volume-mounts." + v, WorldWritable: true})
		}
	}
	return out
}

// LaneMounts are the mounts r's lane on c adds for it (the lanes
// package's table, srtlanes.Lane.MountsFor): each volume's host path from
// slurm.volumes, at the lane's target or, with none, at the host path
// (drivers/srt/config.py@eacb6075, lane_mounts). A volume the record does
// not declare is left out here; CheckLane refuses such a lane first.
func (c *Cluster) LaneMounts(r srtlanes.Request) []Mount {
	l, _ := srtlanes.InferenceX.Of(c.ID, r)
	var out []Mount
	for _, m := range l.MountsFor(r) {
		vol, ok := c.Slurm.Volumes[m.Volume]
		if !ok {
			continue
		}
		out = append(out, Mount{Volume: m.Volume, Host: vol.Path, Container: cmp.Or(m.Target, vol.Path),
			From: laneFrom(l), WorldWritable: m.WorldWritable})
	}
	return out
}

func laneFrom(l *srtlanes.Lane) string {
	return fmt.Sprintf("%s[%s, %s]", srtlanes.Source, l.Cluster, l.Path)
}

// LaneError is a lane the record contradicts (CheckLane's refusal), as
// Cluster.Lane returns it beside the lane's own refusal
// (*srtlanes.RefusedError), so a caller can say where each comes from.
type LaneError struct{ Err error }

func (e *LaneError) Error() string { return e.Err.Error() }
func (e *LaneError) Unwrap() error { return e.Err }

// Lane is the launch InferenceX's lane tables give r on this cluster
// (srtlanes.Table.Decide) and its refusals, in the launcher's order: the
// request the lane does not run (a *srtlanes.RefusedError, lanes.py
// check_request), then the lane the record contradicts (a *LaneError,
// table_problems). The launch is returned with either, so a caller that
// only reports a refusal still knows the path.
func (c *Cluster) Lane(r srtlanes.Request) (srtlanes.Launch, error) {
	l := srtlanes.InferenceX.Decide(c.ID, r)
	if err := l.Check(); err != nil {
		return l, err
	}
	if err := c.CheckLane(l.Lane); err != nil {
		return l, &LaneError{Err: err}
	}
	return l, nil
}

// CheckLane refuses a lane the record contradicts, as InferenceX's
// launcher checks its tables against the cluster before it routes a
// request (drivers/srt/__init__.py, stored id 70893068357,
// table_problems): a lane mount of a volume the record does not declare,
// a lane with shared-run-root requests on a record without
// srt-slurm.shared-run-root, lane time limits a fixed
// srt-slurm.default-time-limit would shadow. A nil lane has none.
func (c *Cluster) CheckLane(l *srtlanes.Lane) error {
	if l == nil {
		return nil
	}
	var problems []string
	for _, m := range l.Mounts {
		if _, ok := c.Slurm.Volumes[m.Volume]; !ok {
			problems = append(problems, fmt.Sprintf("no volume %q", m.Volume))
		}
	}
	srt := c.Slurm.SrtSlurm
	if srt == nil {
		srt = &SrtSlurm{}
	}
	if len(l.SharedRunRoot) > 0 && srt.SharedRunRoot == "" {
		problems = append(problems, "no srt-slurm.shared-run-root")
	}
	if srt.DefaultTimeLimit != "" && (l.TimeLimit != "" || l.LongTimeLimit != "") {
		problems = append(problems, "its time limits are shadowed by default-time-limit")
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("clusters.%s: %s: %s", c.ID, laneFrom(l), strings.Join(problems, "; "))
}

// AgenticClientEnv is the AgentX client paths of r, a multi-node agentic
// job on c, in the order the binder writes them: RESULT_DIR, then
// AIPERF_DATASET_MMAP_CACHE_DIR and HF_HUB_CACHE where the job mounts
// their volumes.
func (c *Cluster) AgenticClientEnv(r srtlanes.Request) []ClientPath {
	l, _ := srtlanes.InferenceX.Of(c.ID, r)
	resultDir, from := l.ResultDir(), "the launcher's default lane (agentic_result_dir)"
	if l != nil && l.AgenticResultDir != "" {
		resultDir, from = l.AgenticResultDir, laneFrom(l)+" agentic_result_dir"
	}
	out := []ClientPath{{Name: "RESULT_DIR", Value: resultDir, From: from}}
	where := c.mountedAt(r)
	if m, ok := where[VolumeAIPerfCache]; ok {
		out = append(out, ClientPath{Name: "AIPERF_DATASET_MMAP_CACHE_DIR", Value: m.Container, From: m.From})
	}
	for _, v := range []string{VolumeHFHubCache, VolumeSharedHFHubCache} {
		if m, ok := where[v]; ok {
			out = append(out, ClientPath{Name: "HF_HUB_CACHE", Value: m.Container, From: m.From})
			break
		}
	}
	return out
}

// mountedAt is each volume's container path in r's job: the most
// specific mount that names it (lane over agentic-volume-mounts over
// volume-mounts).
func (c *Cluster) mountedAt(r srtlanes.Request) map[string]Mount {
	out := map[string]Mount{}
	for _, m := range c.JobMounts(r) {
		out[m.Volume] = m
	}
	return out
}

// JobMounts are the volumes r's job on c mounts, whose host directories
// InferenceX's launcher creates before it submits (config.py@eacb6075
// create_volume_mounts, lane_mounts): volume-mounts for every job, then a
// multi-node AgentX job's agentic mounts, which it opens to every user
// (WorldWritable), as several runner users share those caches, then the
// mounts r's lane adds (LaneMounts).
func (c *Cluster) JobMounts(r srtlanes.Request) []Mount {
	var out []Mount
	if srt := c.Slurm.SrtSlurm; srt != nil {
		for _, v := range sortedKeys(srt.VolumeMounts) {
			out = append(out, Mount{Volume: v, Host: c.Slurm.Volumes[v].Path, Container: srt.VolumeMounts[v], From: "slurm.srt-slurm.volume-mounts." + v})
		}
	}
	if r.Agentic && r.MultiNode {
		out = append(out, c.AgenticMounts()...)
	}
	return append(out, c.LaneMounts(r)...)
}
