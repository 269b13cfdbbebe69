package runners

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
	VolumeAIPerfCache       = "aiperf-cache"
	VolumeHFHubCache        = "hf-hub-cache"
	VolumeSharedHFHubCache  = "shared-hf-hub-cache"
	DefaultAgenticResultDir = "/logs/agentic"
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

// agenticLane is what InferenceX's multi-node lane of a cluster adds to an
// AgentX job beyond the record: its result directory and the volumes it
// mounts for every request. The table is launcher policy keyed by cluster
// id (lanes.py, stored id 71306020057, SRT_LANES); only the rows that
// change a client path are kept.
type agenticLane struct {
	ResultDir string
	Mounts    []laneMount
}

type laneMount struct {
	Volume, Container string
	WorldWritable     bool
}

var agenticLanes = map[string]agenticLane{
	"mi355x-amds": {ResultDir: "/infmax-workspace/LOGS/agentic",
		Mounts: []laneMount{{Volume: VolumeAIPerfCache, Container: "/aiperf_mmap_cache"}}},
}

// AgenticMounts are the mounts a multi-node AgentX job adds to the
// cluster's volume-mounts: agentic-volume-mounts, then the lane's, each
// volume's host path from slurm.volumes (sorted by volume within a source).
func (c *Cluster) AgenticMounts() []Mount {
	var out []Mount
	if srt := c.Slurm.SrtSlurm; srt != nil {
		for _, v := range sortedKeys(srt.AgenticVolumeMounts) {
			out = append(out, Mount{Volume: v, Host: c.Slurm.Volumes[v].Path, Container: srt.AgenticVolumeMounts[v],
				From: "slurm.srt-slurm.agentic-volume-mounts." + v, WorldWritable: true})
		}
	}
	for _, m := range agenticLanes[c.ID].Mounts {
		vol, ok := c.Slurm.Volumes[m.Volume]
		if !ok {
			continue // the lane's volume is not in this record: nothing to mount
		}
		out = append(out, Mount{Volume: m.Volume, Host: vol.Path, Container: m.Container,
			From: "InferenceX's " + c.ID + " lane (lanes.py SRT_LANES)", WorldWritable: m.WorldWritable})
	}
	return out
}

// AgenticClientEnv is the AgentX client paths of a multi-node agentic job
// on c, in the order the binder writes them: RESULT_DIR, then
// AIPERF_DATASET_MMAP_CACHE_DIR and HF_HUB_CACHE where the job mounts
// their volumes.
func (c *Cluster) AgenticClientEnv() []ClientPath {
	resultDir, from := DefaultAgenticResultDir, "the launcher's default lane (agentic_result_dir)"
	if l, ok := agenticLanes[c.ID]; ok && l.ResultDir != "" {
		resultDir, from = l.ResultDir, "InferenceX's "+c.ID+" lane (agentic_result_dir)"
	}
	out := []ClientPath{{Name: "RESULT_DIR", Value: resultDir, From: from}}
	where := c.mountedAt()
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

// mountedAt is each volume's container path in a multi-node AgentX job:
// the most specific mount that names it (lane over agentic-volume-mounts
// over volume-mounts).
func (c *Cluster) mountedAt() map[string]Mount {
	out := map[string]Mount{}
	if srt := c.Slurm.SrtSlurm; srt != nil {
		for _, v := range sortedKeys(srt.VolumeMounts) {
			out[v] = Mount{Volume: v, Host: c.Slurm.Volumes[v].Path, Container: srt.VolumeMounts[v], From: "slurm.srt-slurm.volume-mounts." + v}
		}
	}
	for _, m := range c.AgenticMounts() {
		out[m.Volume] = m
	}
	return out
}

// JobMounts are the volumes a job on c mounts, whose host directories
// InferenceX's launcher creates before it submits (config.py@eacb6075
// create_volume_mounts, lane_mounts): volume-mounts for every job, then a
// multi-node AgentX job's agentic mounts, which it opens to every user
// (WorldWritable), as several runner users share those caches.
func (c *Cluster) JobMounts(agenticMultiNode bool) []Mount {
	var out []Mount
	if srt := c.Slurm.SrtSlurm; srt != nil {
		for _, v := range sortedKeys(srt.VolumeMounts) {
			out = append(out, Mount{Volume: v, Host: c.Slurm.Volumes[v].Path, Container: srt.VolumeMounts[v], From: "slurm.srt-slurm.volume-mounts." + v})
		}
	}
	if agenticMultiNode {
		out = append(out, c.AgenticMounts()...)
	}
	return out
}
