package recipe

// Internal-model fields for what srt-slurm 2.x (schema 2) has and the
// c88ef731 (schema 1) layout lacks. The schema-2 normalizer (package schema2)
// normalizes a schema-2 document into the v1 fields wherever a v1 field
// exists (so plan, driver and results are shared and a v2 recipe cannot plan
// differently from its v1 equivalent); what has no v1 field lands here.
//
// Fields tagged `schema:"2"` are keys only a schema-2 document may write: the
// v1 reader refuses them as unknown keys, exactly as before they existed.
// Their semantics follow srt-slurm 2.x (research/srt-slurm-2: schema.py,
// services/config.py, core/source.py); each type says which class it mirrors.

// Placement is frontend.placement / benchmark.placement (srtctl 2.x's
// PlacementConfig): a location resolved against the worker topology
// ("head", "first_decode", "last_decode") or "dedicated" (a node of its
// own). The reader also fills the v1 fields it replaces
// (frontend.orchestrator_placement/dedicated_node,
// benchmark.client_placement/client_dedicated_node); consumers read those.
type Placement struct {
	Node string `yaml:"node"`
}

// DynamoSource is dynamo.source (srtctl 2.x's DynamoSourceConfig): exactly
// one of Git (with Rev), PyPI or Wheel. The reader maps it onto the v1
// fields (pypi → version, wheel → wheel, git+rev → hash, top_of_tree → top_of_tree,
// patches → cargo_patches); Git is the only part with no v1 field: the
// repository a source build clones ("" or DefaultDynamoGit mean upstream).
type DynamoSource struct {
	Git       string   `yaml:"git"`
	Rev       string   `yaml:"rev"`
	SHA       string   `yaml:"sha"`
	Patches   []string `yaml:"patches"`
	PyPI      string   `yaml:"pypi"`
	Wheel     string   `yaml:"wheel"`
	TopOfTree bool     `yaml:"top_of_tree"`
}

// DefaultDynamoGit is the repository srtctl 2.x builds from when
// dynamo.source gives rev without git.
const DefaultDynamoGit = "https://github.com/ai-dynamo/dynamo.git"

// Service is one entry of the top-level services: list (srtctl 2.x's
// ServiceConfig). Every declared entry is kept here, in order; the
// discovery-plane kinds are also normalized onto v1 fields (etcd/nats →
// infra.*, mooncake-master → backend.mooncake_kv_store) as srtctl's
// services/normalize.py does, so the existing infra code keeps reading
// those. Use the Effective* methods for the kind defaults.
type Service struct {
	Name string `yaml:"name"`
	// Type is the kind: "generic" (default: runs Command as written),
	// "etcd", "nats", "mooncake-master", or another srtctl kind.
	Type      string            `yaml:"type"`
	Command   []string          `yaml:"command"` // argv, not shell-interpreted; required for generic
	Args      []string          `yaml:"args"`    // appended to Command (or the kind's default command)
	Container string            `yaml:"container"`
	Env       EnvMap            `yaml:"env"`
	Placement *ServicePlacement `yaml:"placement"`
	// Nodes makes the service own a pool of whole nodes (placement workers).
	Nodes *int `yaml:"nodes"`
	// Start is "infra", "before_workers" or "after_frontend"; "" is the
	// kind's default (EffectiveStart).
	Start     string            `yaml:"start"`
	Readiness *ServiceReadiness `yaml:"readiness"`
	// InheritDiscoveryEnv injects ETCD_ENDPOINTS / NATS_SERVER (default true).
	InheritDiscoveryEnv *bool `yaml:"inherit_discovery_env"`
	// Critical: a crash fails the run (default: the kind's, false for generic).
	Critical *bool `yaml:"critical"`
	// Terminal: the job ends when this service exits (no benchmark).
	Terminal bool `yaml:"terminal"`
	// Preamble is shell run inside the container before Command.
	Preamble            string            `yaml:"preamble"`
	CPUsPerTask         *int              `yaml:"cpus_per_task"`
	CPUBind             string            `yaml:"cpu_bind"`
	SrunOptions         map[string]Scalar `yaml:"srun_options"`
	Enabled             *bool             `yaml:"enabled"`  // false drops the service
	External            string            `yaml:"external"` // discovery kinds: use this endpoint, launch nothing
	Options             *Raw              `yaml:"options"`  // kind-specific (nats: max_payload_mb; mooncake-master: store_config)
	Metrics             *Raw              `yaml:"metrics"`
	Source              *Raw              `yaml:"source"`
	BuildCommand        []string          `yaml:"build_command"`
	BuildTimeoutSeconds *int              `yaml:"build_timeout_seconds"`

	// Line is where the entry starts in the recipe, for errors.
	Line int `yaml:"-"`
}

// ServicePlacement is services[].placement (ServicePlacementConfig).
type ServicePlacement struct {
	// Node: head, infra, dedicated, prefill, decode, agg, workers, compute, all.
	Node string `yaml:"node"`
	Pool string `yaml:"pool"`
	Per  string `yaml:"per"` // "node" (default) or "worker"
}

// ServiceReadiness is services[].readiness (ServiceReadinessConfig):
// exactly one probe; Port alone is shorthand for TCP.
type ServiceReadiness struct {
	Port            *int       `yaml:"port"`
	TCP             *TCPProbe  `yaml:"tcp"`
	HTTP            *HTTPProbe `yaml:"http"`
	Log             *LogProbe  `yaml:"log"`
	TimeoutSeconds  *int       `yaml:"timeout_seconds"`  // default 120
	IntervalSeconds *int       `yaml:"interval_seconds"` // default 2
}

// TCPProbe: ready when Port accepts a connection on the service node.
type TCPProbe struct {
	Port int `yaml:"port"`
}

// HTTPProbe: ready when GET http://<node>:Port Path returns Status.
type HTTPProbe struct {
	Port   int    `yaml:"port"`
	Path   string `yaml:"path"`   // default /health
	Status *int   `yaml:"status"` // default 200
}

// LogProbe: ready when the service log (service_<name>.out) has a line
// matching the regular expression Pattern.
type LogProbe struct {
	Pattern string `yaml:"pattern"`
}

// Service kinds srtctl 2.x defaults (services/registry.py): kind → start,
// placement, critical.
var serviceKindDefaults = map[string]struct {
	start, placement string
	critical         bool
}{
	"generic":         {"after_frontend", "head", false},
	"etcd":            {"infra", "infra", true},
	"nats":            {"infra", "infra", true},
	"mooncake-master": {"before_workers", "infra", true},
	"mooncake-store":  {"before_workers", "workers", true},
}

// EffectiveType is Type, or "generic" when unset.
func (s Service) EffectiveType() string {
	if s.Type == "" {
		return "generic"
	}
	return s.Type
}

// EffectiveStart is Start, or the kind's default start phase.
func (s Service) EffectiveStart() string {
	if s.Start != "" {
		return s.Start
	}
	return serviceKindDefaults[s.EffectiveType()].start
}

// EffectivePlacement is placement.node, or the kind's default.
func (s Service) EffectivePlacement() string {
	if s.Placement != nil && s.Placement.Node != "" {
		return s.Placement.Node
	}
	return serviceKindDefaults[s.EffectiveType()].placement
}

// EffectiveCritical is Critical, or the kind's default.
func (s Service) EffectiveCritical() bool {
	if s.Critical != nil {
		return *s.Critical
	}
	return serviceKindDefaults[s.EffectiveType()].critical
}

// IsEnabled is Enabled, default true.
func (s Service) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// PostEval is post_eval (srtctl 2.x's PostEvalConfig): how the evaluation
// after the benchmark (RUN_EVAL=true) or instead of it (EVAL_ONLY=true) runs.
type PostEval struct {
	// PassthroughEnv names variables forwarded from the orchestrator's
	// environment into the eval process, on top of the built-in list.
	PassthroughEnv []string `yaml:"passthrough_env"`
	// Command is the argv replacing the built-in lm-eval runner; it may use
	// {endpoint} (the frontend URL) and {infmax_workspace}.
	Command []string `yaml:"command"`
}

// HostSetup is host_setup (srtctl 2.x's HostSetupConfig): shell commands
// run on each node's bare host, outside the container, one srun per node
// before any worker starts; Teardown after the workers stop, even on failure.
type HostSetup struct {
	Commands       []string `yaml:"commands"` // joined with &&
	Teardown       []string `yaml:"teardown"`
	Nodes          string   `yaml:"nodes"` // "all" (default) or "workers"
	IgnoreFailure  bool     `yaml:"ignore_failure"`
	TimeoutSeconds *int     `yaml:"timeout_seconds"` // per node, default 300
}

// Tachometer is observability.tachometer; Enabled nil means srtctl's
// default (on).
type Tachometer struct {
	Enabled *bool `yaml:"enabled"`
}
