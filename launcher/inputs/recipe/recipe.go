// Package recipe reads benchmark recipes in srt-slurm's YAML schema, as
// InferenceX checks them in. Decoding is strict: an unknown key is an error
// with file and line, and a known key whose feature slurbench does not run
// yet is refused by Unsupported, naming the field — never silently ignored.
//
// A read runs through the YAML layers below this package, which know
// nodes, not the model: yamldoc (one bounded document, duplicate keys,
// strict key checking), variants (an override file's config), schema2
// (srt-slurm 2.x's layout normalized into the v1 one) and yamltree (the
// node edits they share); this package decodes the result into Recipe and
// validates it. Its leaf values (Value, EnvMap, ...) are package values's,
// its telemetry block package telemetry's.
package recipe

import (
	"errors"
	"fmt"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/telemetry"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamldoc"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Recipe is one benchmark topology (srt-slurm's SrtConfig, the subset
// InferenceX uses). Optional scalars are pointers so "absent" and "zero"
// stay distinguishable for validation.
type Recipe struct {
	Name      string    `yaml:"name"`
	Model     Model     `yaml:"model"`
	Resources Resources `yaml:"resources"`
	Slurm     SlurmOpts `yaml:"slurm"`
	Backend   Backend   `yaml:"backend"`
	Frontend  Frontend  `yaml:"frontend"`
	Dynamo    Dynamo    `yaml:"dynamo"`
	Benchmark Benchmark `yaml:"benchmark"`
	Health    *Health   `yaml:"health_check"`
	Infra     Infra     `yaml:"infra"`
	Env       EnvMap    `yaml:"environment"`
	// ContainerMounts maps host path → container path (srtctl's container_mounts).
	ContainerMounts  map[string]string `yaml:"container_mounts"`
	ExtraMount       []string          `yaml:"extra_mount"`
	SrunOptions      map[string]Scalar `yaml:"srun_options"`
	SbatchDirectives map[string]Scalar `yaml:"sbatch_directives"`
	SetupScript      string            `yaml:"setup_script"`
	Identity         *Identity         `yaml:"identity"`
	Profiling        *Profiling        `yaml:"profiling"`
	Telemetry        *telemetry.Config `yaml:"telemetry"`
	Observability    *Observability    `yaml:"observability"`
	// EnableConfigDump and Output are parsed and never read by srtctl either
	// (dead fields of its schema); accepted so corpus recipes load.
	EnableConfigDump *bool `yaml:"enable_config_dump"`
	Output           *Raw  `yaml:"output"`

	// Schema-2 only (model_v2.go). Services keeps every services: entry;
	// PostEval and HostSetup have no v1 equivalent.
	Services  []Service  `yaml:"services" schema:"2"`
	PostEval  *PostEval  `yaml:"post_eval" schema:"2"`
	HostSetup *HostSetup `yaml:"host_setup" schema:"2"`

	// SchemaVersion is the recipe layout that was read: 1 (srt-slurm
	// c88ef731, `schema` absent or 1) or 2 (srt-slurm 2.x, `schema: 2`,
	// normalized into these same fields).
	SchemaVersion int `yaml:"-"`

	// Path is the absolute path the recipe was read from; SHA256 its bytes.
	Path   string `yaml:"-"`
	SHA256 string `yaml:"-"`
	// Warnings are what loading accepted but a user should see (a key set
	// twice); render prints them and the plan records them.
	Warnings []string `yaml:"-"`
	// Variant is the selector of the config an override file expanded to
	// ("zip_override_NAME[I]", "override_NAME", "base"); "" for a plain
	// recipe. Origins maps each dotted field the variant set to its section.
	Variant string            `yaml:"-"`
	Origins map[string]string `yaml:"-"`
	// Overrides are the --set/--unset edits applied, as the flags.
	Overrides []string `yaml:"-"`
	// lines maps a dotted field path to its line, for errors about values.
	lines map[string]int
	// spelling maps an internal (v1) dotted field a schema-2 document set
	// through another key to that key ("resources.prefill_workers" →
	// "roles.prefill.workers"), so errors name what the user wrote.
	spelling schema2.Spelling
}

// Model is the `model` block.
type Model struct {
	Path      string `yaml:"path"`      // alias in the profile's [models], an absolute path, or "hf:org/name"
	Container string `yaml:"container"` // alias in the profile's [containers], an image ref, or a .sqsh path
	Precision string `yaml:"precision"`
	StageDir  string `yaml:"stage_dir"`
}

// Resources is the `resources` block of srtctl's recipe schema.
type Resources struct {
	GPUType        string `yaml:"gpu_type"`
	GPUsPerNode    *int   `yaml:"gpus_per_node"`
	PrefillNodes   *int   `yaml:"prefill_nodes"`
	DecodeNodes    *int   `yaml:"decode_nodes"`
	PrefillWorkers *int   `yaml:"prefill_workers"`
	DecodeWorkers  *int   `yaml:"decode_workers"`
	AggNodes       *int   `yaml:"agg_nodes"`
	AggWorkers     *int   `yaml:"agg_workers"`
	GPUsPerPrefill *int   `yaml:"gpus_per_prefill"`
	GPUsPerDecode  *int   `yaml:"gpus_per_decode"`
	GPUsPerAgg     *int   `yaml:"gpus_per_agg"`
	SpreadWorkers  bool   `yaml:"spread_workers"`
	HetJobs        *bool  `yaml:"het_jobs"`
}

// Disaggregated reports whether the recipe splits prefill and decode.
func (r Resources) Disaggregated() bool { return r.PrefillNodes != nil || r.DecodeNodes != nil }

// SlurmOpts is the recipe's `slurm` block; the profile fills what it omits.
type SlurmOpts struct {
	Account   string `yaml:"account"`
	Partition string `yaml:"partition"`
	TimeLimit string `yaml:"time_limit"`
}

// Backend is the `backend` block of srtctl's recipe schema.
type Backend struct {
	Type           string         `yaml:"type"`
	PrefillEnv     EnvMap         `yaml:"prefill_environment"`
	DecodeEnv      EnvMap         `yaml:"decode_environment"`
	AggregatedEnv  EnvMap         `yaml:"aggregated_environment"`
	SGLangConfig   *EngineConfigs `yaml:"sglang_config"`
	VLLMConfig     *EngineConfigs `yaml:"vllm_config"`
	TRTLLMConfig   *EngineConfigs `yaml:"trtllm_config"`
	MockConfig     *EngineConfigs `yaml:"mock_config"`
	Connector      *string        `yaml:"connector"`
	DPLaunchMode   string         `yaml:"dp_launch_mode"`
	KVEventsConfig *Raw           `yaml:"kv_events_config"`
	MooncakeKV     *MooncakeKV    `yaml:"mooncake_kv_store"`
	PublishEvents  *bool          `yaml:"publish_events_and_metrics"`
	AllowPDColoc   *bool          `yaml:"allow_prefill_decode_colocation"`
	AllowPDColocX  *bool          `yaml:"allow_prefill_decode_colocation_across_nodes"`
	SequentialNode *int           `yaml:"sequential_node_start"`
	NUMABind       *bool          `yaml:"numa_memory_bind"`
	// SetCUDAVisibleDevices (vllm) masks a worker's GPUs with
	// CUDA_VISIBLE_DEVICES instead of passing --device-ids.
	SetCUDAVisibleDevices *bool `yaml:"set_cuda_visible_devices"`
	// Schema-2 engine knobs and roles.<role>.extra_args (srtctl 2.x's
	// backend fields; c88ef731 has none of them).
	PublishMetrics      *bool    `yaml:"publish_metrics" schema:"2"`
	ServedModelName     string   `yaml:"served_model_name" schema:"2"`
	PrefillExtraArgs    []string `yaml:"prefill_extra_args" schema:"2"`
	DecodeExtraArgs     []string `yaml:"decode_extra_args" schema:"2"`
	AggregatedExtraArgs []string `yaml:"aggregated_extra_args" schema:"2"`
	// Mocker is srtctl's mocker backend settings (planner/engine/mocker.go).
	Mocker MockerFields `yaml:",inline"`
}

// MooncakeKV is backend.mooncake_kv_store: a mooncake_master on the infra
// node that the workers' Mooncake connectors share (srtctl's
// MooncakeKVStoreConfig; store_config is vLLM's only).
type MooncakeKV struct {
	Container       string   `yaml:"container"`
	Env             EnvMap   `yaml:"env"`
	MasterExtraArgs []string `yaml:"master_extra_args"`
	// StoreConfig is written, in the recipe's key order, to the JSON file
	// vLLM's MooncakeStoreConnector reads.
	StoreConfig *Raw `yaml:"store_config"`
}

// EngineConfigs holds one engine config per serving mode.
type EngineConfigs struct {
	Prefill    EngineConfig `yaml:"prefill"`
	Decode     EngineConfig `yaml:"decode"`
	Aggregated EngineConfig `yaml:"aggregated"`
}

// EngineConfig is an engine's CLI configuration, key → value, rendered to
// flags by srtctl's rule (see Flags).
type EngineConfig map[string]Value

// Frontend is the `frontend` block of srtctl's recipe schema.
type Frontend struct {
	Type                    string           `yaml:"type"`
	EnableMultipleFrontends *bool            `yaml:"enable_multiple_frontends"`
	NumAdditionalFrontends  *int             `yaml:"num_additional_frontends"`
	NginxContainer          string           `yaml:"nginx_container"`
	NginxSessionAffinity    bool             `yaml:"nginx_session_affinity"`
	NginxAffinityHeader     string           `yaml:"nginx_session_affinity_header"`
	Args                    map[string]Value `yaml:"args"`
	Env                     EnvMap           `yaml:"env"`
	CtxRouter               *Raw             `yaml:"ctx_router" schema:"2"` // trtllm_serve's ser.yaml: context_servers.router
	GenRouter               *Raw             `yaml:"gen_router" schema:"2"` // generation_servers.router
	ServerConfigExtra       *Raw             `yaml:"server_config_extra" schema:"2"`
	OrchestratorPlacement   string           `yaml:"orchestrator_placement"`
	DedicatedNode           bool             `yaml:"dedicated_node"`
	NginxKeepaliveTimeout   string           `yaml:"nginx_keepalive_timeout"`
	// Placement is schema 2's spelling of OrchestratorPlacement and
	// DedicatedNode, which the reader fills from it.
	Placement        *Placement `yaml:"placement" schema:"2"`
	NginxRaiseUlimit *bool      `yaml:"nginx_raise_ulimit"`
}

// Dynamo is the `dynamo` block of srtctl's recipe schema.
type Dynamo struct {
	Install      *bool  `yaml:"install"`
	Version      string `yaml:"version"`
	Hash         string `yaml:"hash"`
	Wheel        string `yaml:"wheel"`
	TopOfTree    bool   `yaml:"top_of_tree"`
	RequestPlane string `yaml:"request_plane"`
	EventPlane   string `yaml:"event_plane"`
	CargoPatches *Raw   `yaml:"cargo_patches"`
	// Source is schema 2's spelling of Version/Wheel/Hash/TopOfTree/
	// CargoPatches, which the reader fills from it; Source.Git is the
	// repository of a source build.
	Source *DynamoSource `yaml:"source" schema:"2"`
}

// Benchmark is the `benchmark` block of srtctl's recipe schema.
type Benchmark struct {
	Type             string        `yaml:"type"`
	ISL              *int          `yaml:"isl"`
	OSL              *int          `yaml:"osl"`
	Concurrencies    Concurrencies `yaml:"concurrencies"`
	ReqRate          Scalar        `yaml:"req_rate"`
	UseChatTemplate  *bool         `yaml:"use_chat_template"`
	RandomRangeRatio *float64      `yaml:"random_range_ratio"`
	NumPromptsMult   *int          `yaml:"num_prompts_mult"`
	NumWarmupMult    *int          `yaml:"num_warmup_mult"`
	CustomTokenizer  string        `yaml:"custom_tokenizer"`
	TokenizerMode    string        `yaml:"tokenizer_mode"`
	ClientPlacement  string        `yaml:"client_placement"`
	AIPerfMetrics    *bool         `yaml:"aiperf_server_metrics"`
	Command          string        `yaml:"command"`
	Env              EnvMap        `yaml:"env"`
	DatasetName      string        `yaml:"dataset_name"`
	// ClientDedicatedNode reserves a node for the client (srtctl's
	// benchmark.client_dedicated_node); ContainerImage is the image the
	// client runs in ("" = model.container).
	ClientDedicatedNode bool   `yaml:"client_dedicated_node"`
	ContainerImage      string `yaml:"container_image"`
	// Placement is schema 2's spelling of ClientPlacement and
	// ClientDedicatedNode, which the reader fills from it.
	Placement *Placement `yaml:"placement" schema:"2"`
	// srtctl's other benchmark types (benchmark_types.go).
	SrtctlTypeFields `yaml:",inline"`
}

// Health is `health_check`.
type Health struct {
	MaxAttempts     *int `yaml:"max_attempts"`
	IntervalSeconds *int `yaml:"interval_seconds"`
}

// Infra is the `infra` block.
type Infra struct {
	EtcdNATSDedicatedNode bool `yaml:"etcd_nats_dedicated_node"`
	NATSMaxPayloadMB      *int `yaml:"nats_max_payload_mb"`
}

// Identity is informational: what the recipe expects to run (recorded in
// the plan's provenance; srtctl only warns on mismatch).
type Identity struct {
	Model      map[string]string `yaml:"model"`
	Container  map[string]string `yaml:"container"`
	Frameworks map[string]string `yaml:"frameworks"`
}

// Profiling is the `profiling` block (srtctl's ProfilingConfig; see
// profiling.go).
type Profiling struct {
	Type                 string          `yaml:"type"`
	ExtraNsysArgs        []string        `yaml:"extra_nsys_args"`
	Prefill              *ProfilingPhase `yaml:"prefill"`
	Decode               *ProfilingPhase `yaml:"decode"`
	Aggregated           *ProfilingPhase `yaml:"aggregated"`
	DelaySecs            *int            `yaml:"delay_secs"`
	DurationSecs         *int            `yaml:"duration_secs"`
	BenchmarkDurationSec *int            `yaml:"benchmark_duration_secs"`
}

// ProfilingPhase is one phase's capture window in engine steps.
type ProfilingPhase struct {
	StartStep *int `yaml:"start_step"`
	StopStep  *int `yaml:"stop_step"`
}

// Error is a recipe problem located at a field (and line when known). The
// layers under the reader (yamldoc, schema2, variants) return the same
// type, so an error keeps its place whichever layer found it.
type Error = yamltree.Error

// ErrUnsupported marks a recipe that is valid srt-slurm but uses a feature
// slurmbench does not run yet; errors.Is(err, ErrUnsupported) tells it from a
// malformed recipe.
//
// Its text is the schema-2 normalizer's, so the messages of both say it alike.
var ErrUnsupported = errors.New(schema2.NotSupported)

// UnsupportedError names the field of an unsupported feature.
type UnsupportedError struct{ Err Error }

func (e *UnsupportedError) Error() string { return e.Err.Error() }
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// Line returns the line of a dotted field path ("resources.prefill_nodes"), or 0.
func (r *Recipe) Line(field string) int { return r.lines[field] }

// Errorf builds an *Error for field, with its line when known.
func (r *Recipe) Errorf(field, format string, args ...any) error {
	return &Error{File: r.Path, Line: r.Line(field), Field: r.display(field), Msg: fmt.Sprintf(format, args...)}
}

func (r *Recipe) unsupported(field, what string) error {
	return &UnsupportedError{Error{File: r.Path, Line: r.Line(field), Field: r.display(field), Msg: what + " is " + ErrUnsupported.Error()}}
}

// cleanYAMLErr turns yaml.v3's "yaml: unmarshal errors:\n  line 4: field
// nodez not found in type recipe.Resources" into one line a user can act on.
func cleanYAMLErr(err error) string {
	msgs := yamldoc.Messages(err)
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if i := strings.Index(m, " not found in type "); i >= 0 && strings.HasPrefix(m, "field ") {
			typ := m[i+len(" not found in type "):]
			m = fmt.Sprintf("unknown key %q (in %s)", m[len("field "):i], blockName(typ))
		}
		if i := strings.Index(m, " into "); i >= 0 && strings.HasPrefix(m, "cannot unmarshal") {
			m = "wrong type: " + strings.TrimPrefix(m[:i], "cannot unmarshal ") + ", want " + goTypeName(m[i+len(" into "):])
		}
		out = append(out, m)
	}
	return strings.Join(out, "; ")
}

func blockName(goType string) string {
	names := map[string]string{
		"recipe.Recipe": "top level", "recipe.Model": "model", "recipe.Resources": "resources",
		"recipe.SlurmOpts": "slurm", "recipe.Backend": "backend", "recipe.Frontend": "frontend",
		"recipe.Dynamo": "dynamo", "recipe.Benchmark": "benchmark", "recipe.Health": "health_check",
		"recipe.Infra": "infra", "recipe.EngineConfigs": "engine config modes", "recipe.Identity": "identity",
		"recipe.v2Doc": "top level", "recipe.v2Roles": "roles", "recipe.v2Role": "a role", "recipe.v2Engine": "engine",
		"recipe.Service": "a service", "recipe.ServicePlacement": "placement", "recipe.ServiceReadiness": "readiness",
		"recipe.PostEval": "post_eval", "recipe.HostSetup": "host_setup", "recipe.Observability": "observability",
		"recipe.Placement": "placement", "recipe.DynamoSource": "dynamo.source", "telemetry.Config": "telemetry",
		// The block's inner types print as they did when package recipe held them.
		"telemetry.Exporter": "recipe.TelemetryExporter", "telemetry.CPUPowerExporter": "recipe.CPUPowerExporter",
	}
	if n, ok := names[goType]; ok {
		return n
	}
	return goType
}

func goTypeName(t string) string {
	switch t {
	case "int", "*int":
		return "an integer"
	case "bool", "*bool":
		return "true or false"
	case "string", "*string":
		return "a string"
	case "float64", "*float64":
		return "a number"
	}
	if strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "recipe.") || strings.HasPrefix(t, "telemetry.") || strings.HasPrefix(t, "values.") {
		return "a mapping"
	}
	if strings.HasPrefix(t, "[]") {
		return "a list"
	}
	return t
}
