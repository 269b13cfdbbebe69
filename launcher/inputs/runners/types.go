// Package runners reads InferenceX's configs/runners.yaml, the cluster truth
// of its launcher: the runner labels (`cluster:<id>`, `partition:<name>`
// and broad SKU labels) and one record per cluster (node shape, DRAM,
// environment, staged checkpoints, and the `slurm:` sub-record with its
// volumes, squash cache and srt-slurm profile). The reader is strict as
// InferenceX's Pydantic models are (extra keys forbidden, every field
// typed): every refusal is a *yamltree.Error naming the file, the line and
// the field. Resolve applies the label rules to a runner name.
//
// The rules are read from SemiAnalysisAI/InferenceX, under inferencex-e2e/:
// infx/clusters/__init__.py@b5514a25 (RunnerInventory, Cluster, the label
// and partition rules, '@fabric' in env), infx/clusters/base.py@ba3e5976
// (Record: extra=forbid; Volume), infx/clusters/slurm.py@03eaa88a
// (SlurmSettings, SquashCache, SrtSlurmSettings, PowerTelemetrySettings,
// HostSetup), configs/CONFIGS.md@01381e4e (fabric, agentic-volume-mounts,
// power-exporter-port, newer than the slurm.py stored),
// infx/launch/backends/slurm/squash.py@bede049f (squash file names and
// locks) and infx/launch/drivers/srt/models.py@0f5081e3 (a model's staged
// checkpoint).
package runners

// Inventory is one runners.yaml: labels and clusters, validated together.
type Inventory struct {
	// Path is the file it was read from, as given to Load.
	Path string
	// Labels in file order.
	Labels []Label
	// Clusters by id; Order lists the ids in file order.
	Clusters map[string]*Cluster
	Order    []string
	// Line is the line of the top-level `labels:` key (where a rule about
	// a runner in no label points).
	Line int
}

// Label is one `labels.<name>` entry: a schedulable label and its runners.
type Label struct {
	Name    string
	Runners []string
	Line    int   // line of the label's key
	Lines   []int // line of each runner
}

// The label prefixes InferenceX gives meaning to; other labels (b200,
// gb300, …) are broad SKU labels the matrix schedules on.
const (
	ClusterLabelPrefix   = "cluster:"
	PartitionLabelPrefix = "partition:"
)

// Visibility says whether a volume or squash cache is one shared
// filesystem or a copy on each node.
type Visibility string

const (
	Shared    Visibility = "shared"
	NodeLocal Visibility = "node-local"
)

// Arch is a cluster's CPU architecture.
type Arch string

const (
	X86_64  Arch = "x86_64"
	AArch64 Arch = "aarch64"
)

// Cluster is one `clusters.<id>` record.
type Cluster struct {
	ID   string
	Line int // line of the record's key
	// GPUsPerNode is gpus-per-node (> 0).
	GPUsPerNode int
	// AvailableCPUDRAMMiB is available-cpu-dram-mib: the host DRAM Slurm
	// can give one job on a node; 0 when the record leaves it unmeasured.
	AvailableCPUDRAMMiB int
	Arch                Arch
	// Env is the workload environment of every launch on the cluster, its
	// '@fabric.<name>' values already resolved (no value holds a comma).
	Env       map[string]string
	Models    Models
	Scheduler string // "slurm", the only scheduler InferenceX registers
	Slurm     Slurm
	// Lines maps each dotted field of the record that was set, from the
	// file's top ("clusters.<id>.slurm.partition"), to its line; LineOf
	// takes the field below the record.
	Lines map[string]int
}

// Models is `models:`: pre-staged checkpoints keyed by directory name
// (optionally "<basename>@<root>" for a second copy).
type Models struct {
	Entries map[string]ModelEntry
	// EntryOrder lists Entries' keys in file order (the first node-local
	// copy of a basename wins, as in models.py).
	EntryOrder []string
	// DownloadRoot names the shared volume that receives missing
	// checkpoints as <root>/<HF basename>; "" when unset.
	DownloadRoot string
}

// ModelEntry is one checkpoint: directory Dir (relative) of volume Root.
type ModelEntry struct {
	Root string
	Dir  string
}

// Slurm is the `slurm:` sub-record: facts every Slurm submission on the
// cluster shares.
type Slurm struct {
	Volumes map[string]Volume
	// Partition is the default partition; Partitions, when non-empty, the
	// allocation domains a runner's partition: label chooses among.
	Partition  string
	Partitions []string
	Account    string // "" when unset
	Exclusive  bool
	Exclude    []string
	// Gres is the GRES template with its {gpus} placeholder ("" unset).
	Gres        string
	CPUsPerTask int // 0 when unset
	CPUsPerGPU  int // 0 when unset
	// SrunArgs are long options for every containerized srun step;
	// SallocArgs for the allocation.
	SrunArgs   []string
	SallocArgs []string
	Squash     *Squash   // nil: jobs start from the registry image
	SrtSlurm   *SrtSlurm // nil: the cluster has no srt-slurm profile
}

// Volume is a named directory at Path on the launching host and in jobs
// (absolute, '~' expanded).
type Volume struct {
	Path       string
	Visibility Visibility
}

// ImportMode is how an image reaches its squash file.
type ImportMode string

const (
	ImportSubmitHost ImportMode = "submit-host" // on the launching host
	ImportCompute    ImportMode = "compute"     // once, on one compute node
	ImportAllNodes   ImportMode = "all-nodes"   // on every node of the job
	ImportPreStaged  ImportMode = "pre-staged"  // only validated: operators stage it
	ImportUnchecked  ImportMode = "unchecked"   // the path, untouched
)

// KeyStyle is how an image reference becomes a squash file name.
type KeyStyle string

const (
	KeyUnderscore    KeyStyle = "underscore"      // / : @ # → _
	KeyPlus          KeyStyle = "plus"            // / : @ # → +
	KeyPlusStripNVCR KeyStyle = "plus-strip-nvcr" // plus, without a leading nvcr.io/
)

// LockFile is where an import's lock lives.
type LockFile string

const (
	LockBesideSquash LockFile = "beside-squash" // <squash>.lock
	LockLocksDir     LockFile = "locks-dir"     // <dir>/.locks/<underscore key>.lock
)

// The helper images a multi-node job stages besides its main one.
const (
	HelperNginx        = "nginx"
	HelperDCGMExporter = "dcgm-exporter"
)

// Squash is `slurm.squash`: the Pyxis squash cache.
type Squash struct {
	Dir            string
	Visibility     Visibility
	Import         ImportMode
	LockTimeoutS   int // default 1800
	KeyStyle       KeyStyle
	LockFile       LockFile
	ImportStepArgs []string
	// SingleNodeImport and MultiNodeImport say whether jobs srtctl submits
	// get their image imported before submission (defaults false, true).
	SingleNodeImport bool
	MultiNodeImport  bool
	// FrameworkDirs and HelperDirs give multi-node images another place.
	FrameworkDirs map[string]FrameworkLocation
	HelperDirs    map[string]SquashLocation
}

// SquashLocation overrides some of the cache's fields ("" keeps the cache's).
type SquashLocation struct {
	Dir      string
	KeyStyle KeyStyle
	Import   ImportMode
}

// FrameworkLocation is one framework's images; a model prefix's location
// replaces the framework's (its unset fields are the cache's).
type FrameworkLocation struct {
	SquashLocation
	ModelPrefixes map[string]SquashLocation
}

// SquashPolicy is where one image's squash file lives and how it gets there.
type SquashPolicy struct {
	Dir          string
	Import       ImportMode
	Visibility   Visibility
	LockTimeoutS int
	KeyStyle     KeyStyle
	LockFile     LockFile
}

// SrtSlurm is `slurm.srt-slurm`: the cluster's srt-slurm profile.
type SrtSlurm struct {
	NetworkInterface string
	JobTag           string
	// DefaultTimeLimit is H:MM:SS ("" unset); SingleNodeTimeLimit minutes.
	DefaultTimeLimit    string
	SingleNodeTimeLimit int
	SingleNodeModels    string // "staged" or "hub" (default)
	Preflight           bool   // default true
	DistTimeoutS        int
	// GPUsPerNodeDirective and SegmentDirective: nil leaves srtctl's default.
	GPUsPerNodeDirective *bool
	SegmentDirective     *bool
	SingleNodeExclusive  bool // default true
	ContainerAliases     []string
	NginxAliases         []string
	HostSetup            *HostSetup
	PowerTelemetry       *PowerTelemetry
	// PowerExporterPort is the DCGM exporter port of power points (0 unset).
	PowerExporterPort int
	Env               map[string]string
	Outputs           string
	SharedRunRoot     string
	UVCacheRoot       string
	// VolumeMounts and AgenticVolumeMounts map volume names to container
	// paths; Mounts host paths to container paths.
	VolumeMounts        map[string]string
	AgenticVolumeMounts map[string]string
	Mounts              map[string]string
	// Extra is literal srtslurm.yaml keys, as YAML decodes them.
	Extra  map[string]any
	Fabric Fabric
}

// HostSetup is a repository hook run on allocated hosts.
type HostSetup struct {
	Script   string // relative to the repository checkout
	Env      map[string]string
	TimeoutS int    // 0 unset
	Nodes    string // "all" or ""
}

// PowerTelemetry is the cluster's power sensors.
type PowerTelemetry struct {
	DCGMPort  int
	CPUPort   int    // default 9405
	CPUSource string // "acpi" or "dcgm"
}

// Resolved is a runner's cluster, as the label rules chose it.
type Resolved struct {
	Inventory *Inventory
	Runner    string
	Cluster   *Cluster
	// Partition is the partition the job uses: the runner's partition:
	// label where the cluster lists partitions, else slurm.partition.
	Partition string
	// LabelLine is the line of the cluster: label naming the runner;
	// PartitionLine that of its partition: label (0 when none chose it).
	LabelLine     int
	PartitionLine int
}
