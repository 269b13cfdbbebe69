// Package profile reads a cluster profile: the TOML file that says how one
// Slurm cluster is reached and laid out (REST endpoint, partition, shared
// paths, model and container aliases). Every path in it is made absolute and
// symlink-free once, at load, relative to the profile file itself.
package profile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
)

// Profile is one cluster's settings. Field docs name the TOML keys.
type Profile struct {
	// Path is the absolute, symlink-free path of the file this was read from.
	Path string `toml:"-"`

	Cluster    string            `toml:"cluster"` // free-form name, shown in summaries
	Slurm      Slurm             `toml:"slurm"`
	Paths      Paths             `toml:"paths"`
	Models     map[string]string `toml:"models"`     // alias → model directory (absolute after load)
	Containers map[string]string `toml:"containers"` // alias → image ref or .sqsh path
	Container  Container         `toml:"container"`
	Env        Env               `toml:"env"`
	Health     Health            `toml:"health"`
	Benchmark  Benchmark         `toml:"benchmark"`
	Infra      Infra             `toml:"infra"`
	Telemetry  Telemetry         `toml:"telemetry"`
	Defaults   Defaults          `toml:"defaults"`

	// Extends names the runners.yaml record this profile builds on
	// (docs/profile.md, "From runners.yaml"); zero for a profile that
	// stands alone.
	Extends Extends `toml:"extends"`
	// Record is the runners.yaml record the profile was derived from,
	// nil for a TOML profile that extends none. Fabric and DRAM are the
	// record's, typed, for the recipe binder ('@fabric.<name>',
	// '@dram.<name>'); zero without a record.
	Record *runners.Resolved `toml:"-"`
	// SingleNode: the profile is a single-node point's, whose hf:<model>
	// is the record's staged checkpoint only where single-node-models is
	// "staged" (ModelDir).
	SingleNode bool           `toml:"-"`
	Fabric     runners.Fabric `toml:"-"`
	DRAM       DRAM           `toml:"-"`
	// HostSetup is the cluster's default host_setup (the record's
	// srt-slurm.host-setup), nil without one.
	HostSetup *HostSetup `toml:"-"`
	// Sources says where each value came from, by key ("slurm.partition",
	// "models.<alias>", "env.set.<NAME>"): the runners.yaml line and
	// field, or the TOML file. Empty for a TOML profile that extends none.
	Sources map[string]Source `toml:"-"`
}

// Slurm is the [slurm] table.
type Slurm struct {
	// BinDir holds sbatch, squeue, scontrol, sacct and scancel for the
	// cli transport; "" finds them on PATH.
	BinDir       string   `toml:"bin_dir"`
	RestURL      string   `toml:"rest_url"`
	User         string   `toml:"user"`
	Partition    string   `toml:"partition"`
	Account      string   `toml:"account"`
	TimeLimit    string   `toml:"time_limit"` // Slurm format: "MM", "HH:MM:SS", "D-HH:MM:SS"
	GPUsPerNode  int      `toml:"gpus_per_node"`
	TokenEnv     string   `toml:"token_env"`     // env var holding the JWT; default SLURM_JWT
	TokenFile    string   `toml:"token_file"`    // file holding the JWT (mode 0600)
	TokenCommand []string `toml:"token_command"` // argv that mints a fresh JWT when it expires
	APIVersion   string   `toml:"api_version"`   // e.g. "v0.0.41"; "" = newest the server serves
	Exclusive    bool     `toml:"exclusive"`
	// Transport is how Slurm is reached: TransportREST (slurmrestd at
	// rest_url), TransportCLI (Slurm's own commands, in BinDir or on PATH;
	// what a runners.yaml record gives, since it names no slurmrestd) or
	// TransportAuto ("" too): REST when rest_url is set, else the commands
	// when sbatch is found (SlurmTransport).
	Transport string `toml:"transport"`
	// GresTemplate is the record's GRES template ("gpu:{gpus}"), kept for
	// jobs of another size; directives.gres holds it rendered for a node.
	GresTemplate string `toml:"-"`
	// SrunArgs are long options for every containerized srun step
	// (a record's srun-args).
	SrunArgs []string `toml:"srun_args"`
	// GPUsPerNodeDirective false leaves --gpus-per-node (tres_per_node)
	// out of the job, for clusters that refuse it or ask GPUs by
	// directives.gres (srtslurm.yaml's use_gpus_per_node_directive); nil
	// or true asks gpus_per_node GPUs of every node.
	GPUsPerNodeDirective *bool `toml:"gpus_per_node_directive"`
	// SegmentDirective true asks --segment=<the job's node count>, so the
	// allocation stays in one topology segment (an NVL72 domain), unless
	// directives or the recipe set segment themselves (srtslurm.yaml's
	// use_segment_sbatch_directive, whose srtctl default is true: a
	// runners.yaml record's profile has it unless the record says
	// segment-directive: false); nil or false asks none.
	SegmentDirective *bool `toml:"segment_directive"`
	// Directives are extra sbatch options, key → value ("" for a bare flag),
	// e.g. {segment = "3", mem = "0"}.
	Directives map[string]string `toml:"directives"`
	// NetworkInterface names the interface whose IPv4 address each node
	// is reached at, a comma-separated list tried in order (srtslurm.yaml's
	// network_interface, a record's srt-slurm.network-interface): the job
	// asks every node itself, by srtctl's rule (launcher/job/nodeaddr).
	// "" looks each node's name up in DNS on the head node.
	NetworkInterface string `toml:"network_interface"`
	// Arch of the compute nodes ("x86_64", "aarch64"); when it differs from
	// the machine slurmbench runs on, images are imported on a compute node.
	ComputeArch string `toml:"compute_arch"`

	// How slurmrestd is reached beyond its URL.
	// CAFile is a PEM file of CA certificates trusted for an https rest_url
	// next to the system's (a site's private CA).
	CAFile string `toml:"ca_file"`
	// UseEnvProxy honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY for
	// slurmrestd; by default it is reached directly, so a proxy set for
	// downloads never sees its token.
	UseEnvProxy bool `toml:"use_env_proxy"`
}

// Paths is the [paths] table; all absolute after Load.
type Paths struct {
	RunsDir     string `toml:"runs_dir"`     // shared filesystem seen by login and compute nodes
	SquashDir   string `toml:"squash_dir"`   // where imported .sqsh images are cached
	RecipesRoot string `toml:"recipes_root"` // what CONFIG_FILE=recipes/... is relative to
	Workspace   string `toml:"workspace"`    // InferenceX checkout (benchmark_serving.py etc.)
	GSM8K       string `toml:"gsm8k"`        // directory with the GSM8K test/train files
	WheelCache  string `toml:"wheel_cache"`  // Dynamo wheel cache on the shared filesystem
	// Configs is the directory every container sees at /configs, as srtctl
	// mounts its checkout's configs/ there: the scripts a recipe's
	// setup_script names (run as /configs/<name>, else
	// /configs/patches/<name>) and the files its preambles read. With it
	// set, a setup_script in neither place is refused before submission.
	Configs string `toml:"configs"`
	// Owner is "UID:GID" to give each run directory to, when slurmbench runs
	// as root but jobs run as another user (a test cluster); "" leaves it.
	Owner string `toml:"owner"`
}

// Container is the [container] table.
type Container struct {
	Runtime Runtime `toml:"runtime"`
	// Mounts are "host:container[:ro]" entries added to every containerized process.
	Mounts []string `toml:"mounts"`
	// Enroot is the enroot program on the compute nodes (runtime "enroot"
	// and imports); default "enroot" from PATH.
	Enroot string `toml:"enroot"`
	// Skopeo and Umoci are the programs the "oci" runtime imports with
	// (skopeo copy, umoci unpack); default from PATH where imports run.
	Skopeo string `toml:"skopeo"`
	Umoci  string `toml:"umoci"`
	// InsecureRegistries are registries ("host[:port]") the "oci" runtime's
	// imports reach over plain HTTP or without checking TLS (skopeo
	// --src-tls-verify=false), as enroot's ENROOT_ALLOW_HTTP does for its.
	InsecureRegistries []string `toml:"insecure_registries"`
	// ImportOn is where images are imported: "login" (here), "compute" (a
	// one-node Slurm job), "nodes" (every node of the benchmark job, into
	// a paths.squash_dir on each node's own disk: ImportOnNodes) or ""
	// (compute when slurm.compute_arch differs from this machine's
	// architecture).
	ImportOn string `toml:"import_on"`
}

// Env is the [env] table.
type Env struct {
	// Passthrough names variables copied from the submitting environment into
	// the job (values never appear in argv or logs), e.g. ["HF_TOKEN"].
	Passthrough []string `toml:"passthrough"`
	// PassthroughPrefixes pass every submitting-environment variable whose
	// name starts with one (e.g. "MYLAB_"), like the workflow's own
	// variables; secrets belong in Passthrough, by name.
	PassthroughPrefixes []string `toml:"passthrough_prefixes"`
	// Set are fixed variables for every process of the job.
	Set map[string]string `toml:"set"`
}

// Health is the [health] table: overrides of the recipe's health_check.
type Health struct {
	MaxAttempts     int `toml:"max_attempts"`
	IntervalSeconds int `toml:"interval_seconds"`
}

// Benchmark is the [benchmark] table.
type Benchmark struct {
	Client BenchClient `toml:"client"` // default native
}

// Infra is the [infra] table: NATS and etcd binaries for Dynamo's request plane.
type Infra struct {
	NATSServer string `toml:"nats_server"` // absolute path, or "" for nats-server in the container
	Etcd       string `toml:"etcd"`        // absolute path, or "" for etcd in the container
}

// MaxInputBytes bounds every recipe and profile read: real ones are a few
// KiB, and `render -r /dev/zero` must fail fast instead of filling memory.
const MaxInputBytes = readlimit.Default

// Load reads, resolves and validates the profile at path.
func Load(path string) (*Profile, error) { return LoadContext(context.Background(), path) }

// LoadContext is Load whose read ends with ctx (a FIFO nobody writes to)
// and stops at MaxInputBytes.
func LoadContext(ctx context.Context, path string) (*Profile, error) {
	return LoadExtending(ctx, path, RunnersOptions{})
}

// LoadExtending is LoadContext for a profile that may `extends` a
// runners.yaml record: ro gives what the extends table leaves out (the
// runners file, the runner name) and what only the run knows (image,
// framework, model prefix). The record fills the profile; every key the
// TOML sets wins over it.
func LoadExtending(ctx context.Context, path string, ro RunnersOptions) (*Profile, error) {
	abs, err := Canonical(path)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	data, err := readlimit.ReadFileContext(ctx, abs, MaxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if err := checkNesting(data); err != nil {
		return nil, fmt.Errorf("profile %s: %w", abs, err)
	}
	var p Profile
	ext, err := extendsOf(data)
	if err != nil && strings.HasPrefix(err.Error(), "extends:") {
		return nil, fmt.Errorf("profile %s: %w", abs, err)
	}
	if err == nil && ext != nil {
		base, derr := extendedRecord(ctx, abs, *ext, ro)
		if derr != nil {
			return nil, fmt.Errorf("profile %s: extends: %w", abs, derr)
		}
		p = *base
	}
	md, err := toml.Decode(string(data), &p)
	if err != nil && LooksLikeRecipe(abs, data) {
		return nil, fmt.Errorf("profile %s: this looks like a recipe (YAML), not a cluster profile (TOML): did you swap --profile (-p) and --recipe (-r)?", abs)
	}
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", abs, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return nil, unknownKeysError(abs, data, undecoded)
	}
	p.Path = abs
	if ext != nil && md.IsDefined("slurm", "rest_url") && !md.IsDefined("slurm", "transport") {
		// A REST URL is what an operator adds to a record: use it.
		p.Slurm.Transport = ""
		delete(p.Sources, "slurm.transport")
	}
	p.tomlSources(abs, md)
	p.finishRecord()
	if err := p.resolve(filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("profile %s: %w", abs, err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", abs, err)
	}
	return &p, nil
}

func (p *Profile) resolve(base string) error {
	if p.Slurm.TokenEnv == "" {
		p.Slurm.TokenEnv = "SLURM_JWT"
	}
	if p.Container.Runtime == "" {
		p.Container.Runtime = RuntimePyxis
	}
	if p.Benchmark.Client == "" {
		p.Benchmark.Client = BenchNative
	}
	dirs := []struct {
		field string
		value *string
		must  bool // must exist now
	}{
		{"paths.runs_dir", &p.Paths.RunsDir, false},
		{"paths.squash_dir", &p.Paths.SquashDir, false},
		{"paths.recipes_root", &p.Paths.RecipesRoot, true},
		{"paths.workspace", &p.Paths.Workspace, true},
		{"paths.gsm8k", &p.Paths.GSM8K, false}, // checked when an eval is planned
		{"paths.wheel_cache", &p.Paths.WheelCache, false},
		{"paths.configs", &p.Paths.Configs, true},
		{"slurm.token_file", &p.Slurm.TokenFile, true},
		{"slurm.ca_file", &p.Slurm.CAFile, true},
		{"slurm.bin_dir", &p.Slurm.BinDir, false},
		{"infra.nats_server", &p.Infra.NATSServer, false},
		{"infra.etcd", &p.Infra.Etcd, false},
		{"container.enroot", &p.Container.Enroot, false},
		{"container.skopeo", &p.Container.Skopeo, false},
		{"container.umoci", &p.Container.Umoci, false},
	}
	for _, d := range dirs {
		if *d.value == "" {
			continue
		}
		if program := strings.HasPrefix(d.field, "container.") || strings.HasPrefix(d.field, "infra."); program && !strings.Contains(*d.value, "/") {
			continue // a program name, found on the nodes' PATH
		}
		v, err := resolvePath(base, *d.value, d.must)
		if err != nil {
			return fmt.Errorf("%s: %w", d.field, err)
		}
		*d.value = v
	}
	for alias, dir := range p.Models {
		if strings.HasPrefix(dir, "hf:") {
			continue
		}
		v, err := resolvePath(base, dir, false)
		if err != nil {
			return fmt.Errorf("models.%s: %w", alias, err)
		}
		p.Models[alias] = v
	}
	for alias, ref := range p.Containers {
		if isLocalPath(ref) {
			v, err := resolvePath(base, ref, false)
			if err != nil {
				return fmt.Errorf("containers.%s: %w", alias, err)
			}
			p.Containers[alias] = v
		}
	}
	for i, m := range p.Container.Mounts {
		v, err := resolveMount(base, m)
		if err != nil {
			return fmt.Errorf("container.mounts[%d]: %w", i, err)
		}
		p.Container.Mounts[i] = v
	}
	return nil
}

func (p *Profile) validate() error {
	var errs []error
	errs = append(errs, p.Telemetry.validate()...)
	if p.Defaults.HealthMaxAttempts < 0 || p.Defaults.HealthIntervalSeconds < 0 {
		errs = append(errs, fmt.Errorf("defaults.health_max_attempts, health_interval_seconds: must not be negative, got %d, %d", p.Defaults.HealthMaxAttempts, p.Defaults.HealthIntervalSeconds))
	}
	if v := p.Defaults.VisibleDevicesEnv; v != "" && !validEnvName(v) {
		errs = append(errs, fmt.Errorf("defaults.visible_devices_env: %q is not an environment variable name", v))
	}
	errs = append(errs, p.Slurm.validateTransport()...)
	if p.Slurm.RestURL == "" {
		// Without a URL the commands answer (validateTransport).
	} else if !strings.HasPrefix(p.Slurm.RestURL, "http://") && !strings.HasPrefix(p.Slurm.RestURL, "https://") {
		errs = append(errs, fmt.Errorf("slurm.rest_url: %q is not an http(s) URL", p.Slurm.RestURL))
	}
	if p.Slurm.Partition == "" {
		errs = append(errs, errors.New("slurm.partition: required"))
	}
	if p.Slurm.GPUsPerNode <= 0 {
		errs = append(errs, fmt.Errorf("slurm.gpus_per_node: must be a positive number of GPUs, got %d", p.Slurm.GPUsPerNode))
	}
	if p.Slurm.TimeLimit != "" {
		if _, err := ParseTimeLimit(p.Slurm.TimeLimit); err != nil {
			errs = append(errs, fmt.Errorf("slurm.time_limit: %w", err))
		}
	}
	if p.Slurm.APIVersion != "" && !validAPIVersion(p.Slurm.APIVersion) {
		errs = append(errs, fmt.Errorf("slurm.api_version: %q is not one of v0.0.40..v0.0.44", p.Slurm.APIVersion))
	}
	if !validEnvName(p.Slurm.TokenEnv) {
		errs = append(errs, fmt.Errorf("slurm.token_env: %q is not a valid environment variable name", p.Slurm.TokenEnv))
	}
	switch p.Slurm.ComputeArch {
	case "", "x86_64", "aarch64":
	default:
		errs = append(errs, fmt.Errorf("slurm.compute_arch: %q is not x86_64 or aarch64", p.Slurm.ComputeArch))
	}
	for k := range p.Slurm.Directives {
		if !validDirective(k) {
			errs = append(errs, fmt.Errorf("slurm.directives: %q is not an sbatch option name", k))
		}
	}
	if p.Paths.RunsDir == "" {
		errs = append(errs, errors.New("paths.runs_dir: required (a directory on the shared filesystem)"))
	}
	if p.Paths.SquashDir == "" && p.Container.Runtime != RuntimeNone {
		errs = append(errs, errors.New("paths.squash_dir: required when container.runtime is not \"none\""))
	}
	if p.Paths.Owner != "" {
		if _, _, err := ParseOwner(p.Paths.Owner); err != nil {
			errs = append(errs, fmt.Errorf("paths.owner: %w", err))
		}
	}
	switch p.Container.ImportOn {
	case "", "login", "compute":
	case ImportOnNodes:
		if p.Container.Runtime == RuntimeOCI || p.Container.Runtime == RuntimeNone {
			errs = append(errs, fmt.Errorf("container.import_on: %q imports squash files with enroot on each node; container.runtime %q has none", ImportOnNodes, p.Container.Runtime))
		}
	default:
		errs = append(errs, fmt.Errorf("container.import_on: %q is not login, compute or nodes", p.Container.ImportOn))
	}
	for _, n := range p.Env.Passthrough {
		if !validEnvName(n) {
			errs = append(errs, fmt.Errorf("env.passthrough: %q is not a valid environment variable name", n))
		}
	}
	for _, n := range p.Env.PassthroughPrefixes {
		if !validEnvName(n) {
			errs = append(errs, fmt.Errorf("env.passthrough_prefixes: %q is not a valid environment variable name prefix", n))
		}
	}
	for k := range p.Env.Set {
		if !validEnvName(k) {
			errs = append(errs, fmt.Errorf("env.set: %q is not a valid environment variable name", k))
		}
	}
	if p.Health.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("health.max_attempts: must not be negative, got %d", p.Health.MaxAttempts))
	}
	if p.Health.IntervalSeconds < 0 {
		errs = append(errs, fmt.Errorf("health.interval_seconds: must not be negative, got %d", p.Health.IntervalSeconds))
	}
	for alias := range p.Models {
		if alias == "" {
			errs = append(errs, errors.New("models: empty alias"))
		}
	}
	return errors.Join(errs...)
}

func validAPIVersion(v string) bool {
	switch v {
	case "v0.0.40", "v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44":
		return true
	}
	return false
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// ValidEnvName reports whether s can name an environment variable.
func ValidEnvName(s string) bool { return validEnvName(s) }

func validDirective(s string) bool {
	if s == "" || strings.HasPrefix(s, "-") {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isLocalPath(ref string) bool {
	return strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || strings.HasSuffix(ref, ".sqsh")
}

// SortedKeys returns m's keys in order, for deterministic output.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ParseOwner parses "UID:GID".
func ParseOwner(s string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(s, ":")
	if ok {
		uid, err = strconv.Atoi(u)
		if err == nil {
			gid, err = strconv.Atoi(g)
		}
	}
	if !ok || err != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("%q is not UID:GID (numbers)", s)
	}
	return uid, gid, nil
}

// ContainerRef resolves a container name from a recipe: a [containers]
// alias, else the name itself as an image reference or squash file. A name
// that is not an alias but looks like one — one word, with no registry,
// path, tag or digest — is refused for an operator's own profile: as an
// image it would silently mean docker.io/library/NAME:latest, which is
// never what a recipe written for an alias wanted. A profile derived from
// a runners.yaml record takes it as InferenceX's jobs do: srtctl leaves a
// name that is no alias of srtslurm.yaml as it is and pyxis pulls it
// (recordAliases), so `nginx_container: nginx` runs Docker Hub's nginx.
func (p *Profile) ContainerRef(name string) (string, error) {
	if v, ok := p.Containers[name]; ok {
		return v, nil
	}
	if p.Record == nil && name != "" && !strings.ContainsAny(name, "/:@") && !strings.HasSuffix(name, ".sqsh") {
		return "", fmt.Errorf("%q is not a [containers] alias of %s (aliases: %s); add it there, or write a full image reference (e.g. docker.io/library/%s:TAG)",
			name, p.Path, orNone(SortedKeys(p.Containers)), name)
	}
	return name, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Telemetry is the [telemetry] table: the cluster's defaults for DCGM power
// telemetry (docs/power.md). A recipe's own telemetry block wins; without
// one, Enabled turns telemetry on for the cluster's SA-Bench runs.
type Telemetry struct {
	Enabled  bool `toml:"enabled"`
	Required bool `toml:"required"`
	// ExporterImage is the DCGM exporter image (a [containers] alias or a
	// ref) when the recipe names none; Port its port (default 9401).
	ExporterImage string `toml:"exporter_image"`
	Port          int    `toml:"port"`
	// ExporterCommand replaces srtctl's exporter command line ({port} is
	// Port), as default_gpu_exporter.command does: with the image, it is
	// what a recipe that enables telemetry with no dcgm_exporter runs.
	ExporterCommand string `toml:"exporter_command"`
	// MockWatts > 0 runs slurmbench's mock DCGM exporter on each worker
	// node's host instead of an exporter image, reporting this power per
	// GPU: for test clusters without GPUs.
	MockWatts float64 `toml:"mock_watts"`
}

// Defaults is the [defaults] table: srtslurm.yaml's cluster-wide values
// for recipes that leave them out (a runners.yaml record's srt-slurm.extra
// sets them; docs/profile.md, "srtslurm.yaml keys").
type Defaults struct {
	// GPUType is resources.gpu_type of a recipe without one
	// (default_gpu_type).
	GPUType string `toml:"gpu_type"`
	// VisibleDevicesEnv is the variable a worker on part of a node gets
	// its GPUs in (visible_devices_env: ROCR_VISIBLE_DEVICES on ROCm);
	// "" is CUDA_VISIBLE_DEVICES.
	VisibleDevicesEnv string `toml:"visible_devices_env"`
	// BashPreamble runs before the command of every containerized step
	// that starts through bash (default_bash_preamble: cluster ulimits,
	// cache directories).
	BashPreamble string `toml:"bash_preamble"`
	// NginxRaiseUlimit is frontend.nginx_raise_ulimit of a recipe that
	// leaves it out (nginx_raise_ulimit); nil leaves srtctl's false.
	NginxRaiseUlimit *bool `toml:"nginx_raise_ulimit"`
	// HealthMaxAttempts and HealthIntervalSeconds are the health_check
	// block of a recipe that has none (default_health_check; 0 leaves
	// srtctl's own). A runners.yaml record's profile has InferenceX's 720
	// polls 10 s apart, which its launcher writes for every job. The
	// [health] table, by contrast, overrides every recipe.
	HealthMaxAttempts     int `toml:"health_max_attempts"`
	HealthIntervalSeconds int `toml:"health_interval_seconds"`
}

// VisibleDevices is the GPU mask variable of the cluster's workers.
func (d Defaults) VisibleDevices() string {
	if d.VisibleDevicesEnv != "" {
		return d.VisibleDevicesEnv
	}
	return "CUDA_VISIBLE_DEVICES"
}

func (t Telemetry) validate() []error {
	var errs []error
	if t.Port < 0 || t.Port > 65535 {
		errs = append(errs, fmt.Errorf("telemetry.port: %d is not in 1..65535", t.Port))
	}
	if t.MockWatts < 0 || t.MockWatts != t.MockWatts {
		errs = append(errs, fmt.Errorf("telemetry.mock_watts: must be a non-negative number of watts, got %v", t.MockWatts))
	}
	return errs
}
