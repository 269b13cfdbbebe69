package srtlanes

// The tables, as InferenceX's launcher holds them. Their source:
//
//   - SRT_LANES: inferencex-e2e/infx/launch/drivers/srt/lanes.py, stored id
//     71306020057 — the version of the SRT_RECIPE era (its srt_recipe()
//     picks EVAL_SRT_RECIPE on an eval-only run; SrtLane carries
//     agentic_result_dir), which is the era slurmbench's workflow reads.
//     Older stored versions (lanes.py@0086190e, @e0935bdd, stored ids
//     70995344872, 70146331650, 71414889527) still take CONFIG_FILE and
//     mount the AgentX caches from the lane (_AGENTIC_CACHES); in this one
//     the record's agentic-volume-mounts do (runners.Cluster.AgenticMounts).
//   - NATIVE_SRT_LANES and SALLOC_TIME_BUMPS:
//     inferencex-e2e/infx/launch/policy.py@3b798abf (the version without
//     the legacy-tilert and legacy-amd-utils paths, which the SRT_RECIPE
//     era dropped).

// Path is how InferenceX's launcher runs a request (policy.py@3b798abf,
// LaunchPath): the lanes are keyed by cluster and path.
type Path string

// The paths slurmbench's workflow takes (srt-batch and script are
// single-node re-entries slurmbench does not have: it submits the job
// itself).
const (
	SrtSingle Path = "srt-single"
	SrtMulti  Path = "srt-multi"
	SrtNative Path = "srt-native"
)

// Mount is a cluster volume (a slurm.volumes name) the lane mounts for
// the requests When matches (lanes.py LaneMount): at Target in the
// container ("" : where the volume lies on the host), its host directory
// created before submission and, WorldWritable, opened to every user.
type Mount struct {
	When          Match
	Volume        string
	Target        string
	WorldWritable bool
}

// Reject is a request the lane refuses before any setup, with its message.
type Reject struct {
	When    Match
	Message string
}

// DefaultAgenticResultDir is where the AgentX client writes its
// per-concurrency artifacts unless the lane says otherwise (lanes.py,
// SrtLane.agentic_result_dir).
const DefaultAgenticResultDir = "/logs/agentic"

// Lane is how one cluster's multi-node srt-slurm lane differs from the
// others (lanes.py SrtLane). Every field's rule is in rules.go.
type Lane struct {
	Cluster string
	Path    Path
	// Frameworks are the FRAMEWORK values the lane accepts (nil: any).
	Frameworks []string
	Rejects    []Reject
	// SetupScripts is FRAMEWORK -> the setup script srtctl runs in place
	// of the recipe's setup_script (--setup-script).
	SetupScripts map[string]string
	Mounts       []Mount
	// SharedRunRoot are the requests whose checkout InferenceX puts on the
	// record's srt-slurm.shared-run-root.
	SharedRunRoot []Match
	// EvalUnsets are recipe keys unset on an eval run.
	EvalUnsets []string
	// RealVerification: the eval-only requests whose staged TRT-LLM
	// recipes lose their forced acceptance; HeadFrontend: those of them
	// whose frontend is placed on the head node.
	RealVerification, HeadFrontend *Match
	// WriteEvalMeta: the staged meta_env.json is rebuilt on the host from
	// the workflow's variables.
	WriteEvalMeta bool
	// TimeLimit is the job's limit (""  : SALLOC_TIME_LIMIT);
	// LongTimeLimit the limit of the requests LongTime matches.
	TimeLimit, LongTimeLimit string
	LongTime                 *Match
	// AgenticResultDir is where the AgentX client writes ("" : the default).
	AgenticResultDir string
}

// Key is a lane's row: a cluster id and a path.
type Key struct {
	Cluster string
	Path    Path
}

// Table is the policy tables the rules read: lanes, the requests a cluster
// runs on its srt-native lane, and the single-node time bumps.
type Table struct {
	Lanes  map[Key]Lane
	Native map[string][]Match
	Bumps  map[string]TimeBump
}

// InferenceX is InferenceX's tables, as its launcher holds them.
var InferenceX = Table{Lanes: srtLanes, Native: nativeSrtLanes, Bumps: sallocTimeBumps}

// dynamo is the table's _DYNAMO.
var dynamo = anyOf("dynamo-sglang", "dynamo-trt", "dynamo-vllm")

// srtLanes is SRT_LANES (lanes.py, stored id 71306020057), row by row.
var srtLanes = map[Key]Lane{
	{"b200-nscale", SrtNative}: {},
	{"b200-nscale", SrtMulti}: {
		Frameworks: dynamo,
		Rejects: []Reject{{
			When:    Match{Prefixes: anyOf("dsv4"), Frameworks: anyOf("dynamo-sglang", "dynamo-trt")},
			Message: "multinode dsv4 supports only dynamo-vllm",
		}},
	},
	{"b300-dsxe", SrtMulti}: {Frameworks: dynamo},
	{"gb200-nv", SrtMulti}: {
		Frameworks:   dynamo,
		SetupScripts: map[string]string{"dynamo-sglang": "install-torchao.sh"},
		Mounts: []Mount{{
			When:   Match{Prefixes: anyOf("glm5.2"), Precisions: anyOf("fp4"), Frameworks: anyOf("dynamo-sglang"), Agentic: yes()},
			Volume: "dynamo-wheels", Target: "/configs/dynamo-wheels", WorldWritable: true,
		}},
		SharedRunRoot: []Match{
			{Prefixes: anyOf("minimaxm3", "kimik3", "qwen3.5", "glm5.2")},
			{Prefixes: anyOf("dsv4"), Frameworks: anyOf("dynamo-vllm")},
			{Prefixes: anyOf("dsv4"), Frameworks: anyOf("dynamo-sglang"), Agentic: yes()},
		},
	},
	{"gb300-nv", SrtMulti}: {
		RealVerification: &Match{Frameworks: anyOf("dynamo-trt"), Agentic: yes()},
		HeadFrontend:     &Match{Prefixes: anyOf("dsv4")},
		WriteEvalMeta:    true,
		TimeLimit:        "4:00:00",
		LongTimeLimit:    "8:00:00",
		LongTime:         &Match{Prefixes: anyOf("dsv4"), Frameworks: anyOf("dynamo-sglang", "dynamo-trt"), Agentic: yes()},
	},
	{"h100-dgxc", SrtMulti}: {Frameworks: anyOf("dynamo-sglang", "dynamo-trt")},
	{"h200-dgxc", SrtMulti}: {
		Frameworks:    anyOf("dynamo-sglang", "dynamo-trt", "vllm"),
		TimeLimit:     "4:00:00",
		LongTimeLimit: "8:00:00",
		LongTime:      &Match{Prefixes: anyOf("dsv4"), Frameworks: anyOf("dynamo-sglang"), Agentic: yes()},
	},
	{"mi355x-amds", SrtMulti}: {
		Mounts: []Mount{
			{When: Always, Volume: "aiperf-cache", Target: "/aiperf_mmap_cache"},
			{When: Match{Frameworks: anyOf("tilert")}, Volume: "it-share-data", Target: "/models"},
		},
		EvalUnsets:       []string{"roles.prefill.args.ep-dispatch-algorithm", "roles.decode.args.ep-dispatch-algorithm"},
		TimeLimit:        "01:00:00",
		AgenticResultDir: "/infmax-workspace/LOGS/agentic",
	},
}

// nativeSrtLanes is NATIVE_SRT_LANES (policy.py@3b798abf): the multi-node
// requests a cluster runs on its srt-native lane instead of srt-multi.
var nativeSrtLanes = map[string][]Match{
	"b200-nscale": {
		{Prefixes: anyOf("dsv4", "kimik3", "glm5.2"), Precisions: anyOf("fp4"), Frameworks: anyOf("dynamo-vllm")},
		{Prefixes: anyOf("dsv4"), Precisions: anyOf("fp4"), Frameworks: anyOf("dynamo-sglang"), Specs: anyOf("none", "mtp")},
		{Prefixes: anyOf("glm5.2"), Precisions: anyOf("fp4"), Frameworks: anyOf("dynamo-sglang"), Specs: anyOf("mtp")},
	},
}

// TimeBump is a longer SALLOC_TIME_LIMIT for the throughput runs When
// matches at CONC >= MinConc (policy.py@3b798abf, TimeBump).
type TimeBump struct {
	When    Match
	MinConc int
	Minutes int
}

// sallocTimeBumps is SALLOC_TIME_BUMPS (policy.py@3b798abf).
var sallocTimeBumps = map[string]TimeBump{
	"h200-dgxc": {
		When:    Match{Prefixes: anyOf("dsv41flash"), Frameworks: anyOf("sglang"), Agentic: yes(), MultiNode: no()},
		MinConc: 64, Minutes: 1440,
	},
}
