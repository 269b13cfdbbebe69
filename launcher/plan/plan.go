// Package launcher computes the plan of one benchmark point: a typed,
// validated value derived once, up front, from a cluster profile, a recipe
// and the run's inputs. Everything later (submit, the in-allocation driver,
// collection) reads the plan and nothing else, so no step depends on the
// current directory, on how the binary was invoked, or on re-reading YAML.
package plan

import (
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/telemetry"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
)

// PlanVersion is bumped when the plan's JSON shape changes incompatibly;
// a driver refuses a plan of another version.
const PlanVersion = 1

// Plan is one benchmark point, ready to submit. Paths are absolute.
type Plan struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
	RunID   string `json:"run_id"`
	RunDir  string `json:"run_dir"`
	// PlanFile is where the plan is written inside RunDir.
	PlanFile string `json:"plan_file"`
	// Binary is the slurmbench binary as the job runs it (copied into RunDir).
	Binary string `json:"binary"`

	Recipe  Source `json:"recipe"`
	Profile Source `json:"profile"`

	Mode        string   `json:"mode"` // "disaggregated" or "aggregated"
	Nodes       int      `json:"nodes"`
	GPUsPerNode int      `json:"gpus_per_node"`
	GPUs        GPUCount `json:"gpus"`
	NodeMap     []Node   `json:"node_map"`

	Image   Image           `json:"image"`
	Runtime profile.Runtime `json:"runtime"`
	// Enroot is the enroot program the enroot runtime starts containers with.
	Enroot string `json:"enroot,omitempty"`
	// Owner ("UID:GID") receives the run directory when it is set.
	Owner    string `json:"owner,omitempty"`
	Model    Model  `json:"model"`
	Slurm    Slurm  `json:"slurm"`
	Backend  string `json:"backend"`
	Frontend string `json:"frontend"`

	Processes []Process `json:"processes"`
	// EnvPassthrough names variables the job inherits from the submitting
	// environment; their values are never written into the plan.
	EnvPassthrough []string `json:"env_passthrough,omitempty"`
	// EnvPassthroughPrefixes are the profile's env.passthrough_prefixes:
	// every submitting-environment variable starting with one is passed
	// like a workflow variable (a profile's own tool knobs, e.g. "MYLAB_").
	EnvPassthroughPrefixes []string `json:"env_passthrough_prefixes,omitempty"`

	Health    Health        `json:"health"`
	Benchmark Benchmark     `json:"benchmark"`
	Points    []BenchPoint  `json:"points"`
	Eval      Eval          `json:"eval"`
	Dynamo    Dynamo        `json:"dynamo"`
	Layout    rundir.Layout `json:"layout"`
	// Telemetry is set when the run collects power telemetry.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	// Profiling is the recipe's profiling block as planned (profiling.go).
	Profiling *Profiling `json:"profiling,omitempty"`
	// HostSetup is set when steps run on the nodes' bare hosts before
	// anything else, and after everything stops (hostsetup.go).
	HostSetup *HostSetup `json:"host_setup,omitempty"`
	// Serve is set by `slurmbench up`: the driver starts the topology,
	// passes the health gate and then holds it, running the plans that
	// `run --in` queues, until `slurmbench down` or the time limit. It runs
	// no benchmark of its own.
	Serve bool `json:"serve,omitempty"`
}

// Source identifies an input file.
type Source struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
	// Variant is the config of an override file that was planned; Origins
	// maps each field that config's section set to the section.
	Variant string            `json:"variant,omitempty"`
	Origins map[string]string `json:"origins,omitempty"`
	// Schema is the recipe layout read: 1 (srt-slurm c88ef731) or 2
	// (srt-slurm 2.x, normalized into the same fields); 0 for a profile.
	Schema int `json:"schema,omitempty"`
	// Warnings are what loading accepted but a user should know, e.g. a key
	// set twice and kept last by --allow-duplicate-keys.
	Warnings []string `json:"warnings,omitempty"`
	// Overrides are the --set/--unset edits applied to the recipe before
	// it was read, in order, as the flags that gave them.
	Overrides []string `json:"overrides,omitempty"`
	// Telemetry is the telemetry block the recipe enables, as requested;
	// Plan.Telemetry says what the run collects.
	Telemetry *telemetry.Settings `json:"telemetry_requested,omitempty"`
}

// GPUCount splits the allocation's GPUs by role; Total is what per-GPU
// figures divide by.
type GPUCount struct {
	Prefill int `json:"prefill"`
	Decode  int `json:"decode"`
	Agg     int `json:"agg,omitempty"`
	Total   int `json:"total"`
}

// Node is one node index of the allocation and what runs there.
type Node struct {
	Index int      `json:"index"`
	Roles []string `json:"roles"`
	// GPUs lists "process:gpu,gpu" slices on this node, for the human view.
	GPUs []string `json:"gpus,omitempty"`
}

// Image is the container image every engine process runs in.
type Image struct {
	Ref       string `json:"ref,omitempty"` // as the recipe/profile named it, alias resolved
	EnrootURI string `json:"enroot_uri,omitempty"`
	Squash    string `json:"squash"` // absolute .sqsh path the job uses
	// PerNode: Squash is on each node's own disk, and the job imports it
	// on every node (its RoleImage steps) before anything starts there.
	PerNode bool `json:"per_node,omitempty"`
	// LockTimeoutSeconds and LockFile are how an import of the image waits
	// for another one: the cluster record's squash lock-timeout-s and, for
	// lock-file: locks-dir, the lock file ("" : beside Squash). Zero: the
	// importers' own default.
	LockTimeoutSeconds int    `json:"lock_timeout_seconds,omitempty"`
	LockFile           string `json:"lock_file,omitempty"`
}

// Model is where the weights come from.
type Model struct {
	Source     string `json:"source"`      // absolute directory or "hf:org/name"
	Path       string `json:"path"`        // what engines are given: "/model" or the HF id
	ServedName string `json:"served_name"` // --served-model-name, also the benchmark's model
	Precision  string `json:"precision,omitempty"`
	// Staged is the node-local copy model.stage_dir asks for
	// (<stage_dir>/<model directory name>), filled on every worker node
	// before the workers start; "" when the model is not staged.
	Staged string `json:"staged,omitempty"`
}

// Slurm is the job request.
type Slurm struct {
	JobName          string `json:"job_name"`
	Partition        string `json:"partition"`
	Account          string `json:"account,omitempty"`
	TimeLimitMinutes int    `json:"time_limit_minutes"`
	Nodes            int    `json:"nodes"`
	GPUsPerNode      int    `json:"gpus_per_node"`
	// NoGPUsPerNode leaves --gpus-per-node (tres_per_node) out of the
	// request: the cluster refuses it, or directives.gres asks the GPUs
	// (the profile's slurm.gpus_per_node_directive = false).
	NoGPUsPerNode bool              `json:"no_gpus_per_node,omitempty"`
	Exclusive     bool              `json:"exclusive,omitempty"`
	Directives    map[string]string `json:"directives,omitempty"`
	// NetworkInterface is the profile's slurm.network_interface: when set,
	// the driver asks each node for its address (launcher/job/nodeaddr)
	// instead of looking its name up in DNS.
	NetworkInterface string `json:"network_interface,omitempty"`
	// Comment tags the job uniquely, so a submit whose answer was lost can
	// be found again instead of submitted twice.
	Comment string `json:"comment"`
}

// Role of a process.
type Role string

const (
	RoleInfra Role = "infra"
	// RoleImage runs to its exit before anything else: the image imported
	// into each node's own squash cache (Image.PerNode).
	RoleImage Role = "image"
	// RolePrepare runs to its exit after infra and before any worker
	// starts (srtctl's pre-worker steps: the model pre-download).
	RolePrepare   Role = "prepare"
	RolePrefill   Role = "prefill"
	RoleDecode    Role = "decode"
	RoleAgg       Role = "agg"
	RoleFrontend  Role = "frontend"
	RoleNginx     Role = "nginx"
	RoleBenchmark Role = "benchmark"
	RoleEval      Role = "eval"
)

// Process is one srun step: one program on one or more nodes.
type Process struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Worker is the endpoint index within its role; Rank the node rank of a
	// multi-node worker (0 = leader).
	Worker int   `json:"worker"`
	Rank   int   `json:"rank"`
	Nodes  []int `json:"nodes"`
	// GPUs is the CUDA_VISIBLE_DEVICES slice; empty means every GPU of the node.
	GPUs  []int          `json:"gpus,omitempty"`
	Ports map[string]int `json:"ports,omitempty"`
	// Image is "" for the engine image, or another image (nginx); Container
	// false runs the process on the host (the slurmbench binary itself).
	Container bool     `json:"container"`
	Image     string   `json:"image,omitempty"`
	Mounts    []string `json:"mounts,omitempty"`
	// Env values may hold {host:N}, {ip:N} and {job_id}, which the driver
	// fills from the allocation; nothing else is substituted.
	Env  map[string]string `json:"env"`
	Argv []string          `json:"argv"`
	// Unset names variables the exec shim removes from the environment the
	// process inherits (srtctl's `unset --`), before Env is applied.
	Unset []string `json:"unset,omitempty"`
	// Setup are argv steps the exec shim runs in order, in the process's
	// container and with its environment, before it execs Argv: the recipe's
	// setup script, then the Dynamo install. A step that exits non-zero
	// fails the process with that step's exit code.
	Setup [][]string `json:"setup,omitempty"`
	// Files are written by the driver before the process starts: absolute
	// path inside RunDir → content. Content may hold the same placeholders
	// as Env. Several processes may name one path with equal content.
	Files map[string]string `json:"files,omitempty"`
	// NoFile, when set, is the open-files limit (soft and hard) the exec
	// shim sets before the program (srtctl's `ulimit -n N &&`).
	NoFile uint64 `json:"rlimit_nofile,omitempty"`
	Log    string `json:"log"`
	// Srun carries the step options beyond --nodes/--ntasks/--nodelist.
	Srun SrunOptions `json:"srun"`
	// Critical processes end the run when they exit before the end.
	Critical bool `json:"critical"`
	// Ready is how the driver knows this process serves (before starting
	// what depends on it); empty when only the health gate matters.
	Ready *Probe `json:"ready,omitempty"`
	// After names processes whose Ready probe must pass before this one
	// starts (TRT-LLM's sequential_node_start batches).
	After []string `json:"after,omitempty"`
	// Passenv names variables whose values the step takes from the job's
	// environment when set (like EnvPassthrough, for this step only).
	Passenv []string `json:"passenv,omitempty"`
	// Start is a service's start phase (RoleService only): before_workers
	// or after_frontend.
	Start string `json:"start,omitempty"`
}

// SrunOptions are per-step srun settings.
type SrunOptions struct {
	NTasks int      `json:"ntasks"`
	MPI    string   `json:"mpi,omitempty"`
	Extra  []string `json:"extra,omitempty"`  // recipe srun_options, rendered --k=v / --k
	Export []string `json:"export,omitempty"` // K=V added to --export=ALL,...
}

// Probe is a TCP, HTTP or log readiness check on a node.
type Probe struct {
	Node int    `json:"node"`
	Port int    `json:"port"`
	Path string `json:"path,omitempty"` // HTTP GET path; "" = TCP connect
	// Status is the HTTP status that counts as ready (0: any 2xx).
	Status int `json:"status,omitempty"`
	// Pattern is a regular expression the process's log must match: a log
	// probe, with no port.
	Pattern string `json:"pattern,omitempty"`
	// TimeoutSeconds and IntervalSeconds bound a service's probe (0: the
	// driver's infra defaults).
	TimeoutSeconds  int `json:"timeout_seconds,omitempty"`
	IntervalSeconds int `json:"interval_seconds,omitempty"`
}

// Health is the gate between "processes started" and "benchmark".
type Health struct {
	Kind            string `json:"kind"` // dynamo, sglang-router, models, http-ok
	Node            int    `json:"node"`
	Port            int    `json:"port"`
	Path            string `json:"path"`
	Prefill         int    `json:"prefill"`
	Decode          int    `json:"decode"`
	MaxAttempts     int    `json:"max_attempts"`
	IntervalSeconds int    `json:"interval_seconds"`
	// Workers, when set, must each answer its HTTP GET with 200, all in
	// one pass, after the frontend's counts pass (a vLLM Router's routed
	// workers: srtctl's get_backend_health_urls).
	Workers []Probe `json:"workers,omitempty"`
}

// Benchmark is the SA-Bench step.
type Benchmark struct {
	Type            string              `json:"type"` // sa-bench, custom, or "" for eval-only
	Client          profile.BenchClient `json:"client"`
	ISL             int                 `json:"isl"`
	OSL             int                 `json:"osl"`
	RangeRatio      float64             `json:"random_range_ratio"`
	RequestRate     string              `json:"request_rate"`
	UseChatTemplate bool                `json:"use_chat_template"`
	PromptsMult     int                 `json:"num_prompts_mult"`
	WarmupMult      int                 `json:"num_warmup_mult"`
	ResultDir       string              `json:"result_dir"` // absolute: <run>/results/sa-bench_isl_<I>_osl_<O>
	// CustomTokenizer (a Python class, module.Class) and TokenizerMode are
	// the recipe's; only the sa-bench client can load them.
	CustomTokenizer string `json:"custom_tokenizer,omitempty"`
	TokenizerMode   string `json:"tokenizer_mode,omitempty"`
	// Tokenizer is what the sa-bench client tokenizes with (--tokenizer):
	// /model, or the HF id of an hf: model, as srtctl passes it.
	Tokenizer string `json:"tokenizer,omitempty"`
	// ClientReason says why the plan chose Client over the one asked for.
	ClientReason string `json:"client_reason,omitempty"`
	// Custom is set for benchmark.type custom: the recipe's own command.
	Custom *CustomBenchmark `json:"custom,omitempty"`
	// Srtctl is set for srtctl's other benchmark types: its script for the
	// type, run in the engine container (benchmark_srtctl.go).
	Srtctl *SrtctlBenchmark `json:"srtctl,omitempty"`
	// SlowDown is benchmark.slow_down_*: SGLang's /slow_down on the decode
	// leaders during each sa-bench point (slowdown.go).
	SlowDown *SlowDown `json:"slow_down,omitempty"`
	// Goodput holds the SLOs in milliseconds (ttft, tpot, e2el) a request
	// must meet to count toward request_goodput; none: no goodput.
	Goodput map[string]float64 `json:"goodput,omitempty"`
}

// Point is one concurrency of the benchmark.
type BenchPoint struct {
	Concurrency   int    `json:"concurrency"`
	NumPrompts    int    `json:"num_prompts"`
	WarmupPrompts int    `json:"warmup_prompts"`
	ResultFile    string `json:"result_file"` // base name, raw (srtctl) form
}

// Eval is the gsm8k step.
type Eval struct {
	Enabled     bool               `json:"enabled"`
	Only        bool               `json:"only"`
	Client      profile.EvalClient `json:"client,omitempty"`
	Concurrency int                `json:"concurrency,omitempty"`
	// Concurrencies is EVAL_CONC's list when it names more than one: the
	// eval runs at each against the one serving deployment and stages
	// every file as <stem>_conc<N>.json(l), as InferenceX's batched
	// run_eval does (benchmark_lib.sh _stage_lm_eval_artifacts).
	// Concurrency is then its first.
	Concurrencies []int  `json:"concurrencies,omitempty"`
	ResultDir     string `json:"result_dir,omitempty"`
	DataDir       string `json:"data_dir,omitempty"` // gsm8k splits (paths.gsm8k); "" = built into the binary
	// Command is the recipe's post_eval.command as run (placeholders
	// filled): it replaces the built-in gsm8k eval (post_eval.go).
	Command []string `json:"command,omitempty"`
	// Passenv names the variables the eval takes from the submitting
	// environment when set (srtctl's built-in list and passthrough_env).
	Passenv []string `json:"passenv,omitempty"`
}

// Dynamo is the install Dynamo needs inside the engine container.
type Dynamo struct {
	Install bool   `json:"install"`
	Version string `json:"version,omitempty"`
	Hash    string `json:"hash,omitempty"`
	Wheel   string `json:"wheel,omitempty"`
	// TopOfTree is set for dynamo.top_of_tree: the run's id, naming the one
	// build of the source's HEAD every container of the job installs.
	TopOfTree    string `json:"top_of_tree,omitempty"`
	RequestPlane string `json:"request_plane,omitempty"`
	// EventPlane is DYN_EVENT_PLANE for workers and Dynamo frontends; ""
	// leaves Dynamo's default.
	EventPlane string `json:"event_plane,omitempty"`
	// Cache is the wheel cache on the shared filesystem the install step
	// fills once per key and installs from (profile paths.wheel_cache, else
	// <runs_dir>/.dynamo-wheels).
	Cache string `json:"cache,omitempty"`
	// Git is the repository a Hash build clones when it is not upstream
	// (schema 2's dynamo.source.git); "" is github.com/ai-dynamo/dynamo.
	Git string `json:"git,omitempty"`
}

// ResultPoint is the results.Point the result file of concurrency conc
// names: ctx/gen for a disaggregated plan, total GPUs only for an
// aggregated one. conc 0 gives the topology alone. The plan's points and
// results' points convert here and nowhere else.
func (p *Plan) ResultPoint(conc int) results.PointID {
	if p.Mode == "aggregated" {
		return results.PointID{Concurrency: conc, GPUs: p.GPUs.Total}
	}
	return results.PointID{Concurrency: conc, GPUs: p.GPUs.Total, PrefillGPUs: p.GPUs.Prefill, DecodeGPUs: p.GPUs.Decode}
}

// ResultFile is the file name SA-Bench writes concurrency conc's result to
// (results.RawName).
func (p *Plan) ResultFile(conc int) (string, error) {
	return results.RawName(p.ResultPoint(conc))
}
