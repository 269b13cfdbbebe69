package profile

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
)

// A record's srt-slurm.extra holds literal srtslurm.yaml keys: InferenceX's
// launcher writes them into the job's srtslurm.yaml after its own keys,
// refusing one that names a key it rendered itself
// (infx/launch/drivers/srt/config.py@eacb6075 render: "srt-slurm.extra
// sets rendered keys"), and srtctl reads the file with its ClusterConfig
// schema (srt-slurm src/srtctl/core/schema.py, stored id 71538013475;
// docs/schema-reference.md@1c3080ec "Cluster config"). That schema is a
// marshmallow dataclass with marshmallow's default unknown=RAISE, and
// srtctl's loader turns any error into a warning and drops the whole file
// (core/config.py@020fbc6c load_cluster_config): the job then runs with no
// cluster defaults at all. slurmbench refuses such a record instead, at the
// extra key's line, since no job of it would run as the record means.
//
// Every key of ClusterConfig is listed here with where it lands in the
// derived profile, or why it does not apply (docs/profile.md, "srtslurm.yaml
// keys").

// SrtctlDefaultGPUExporterImage and SrtctlDefaultGPUExporterPort are
// srtctl's default_gpu_exporter when srtslurm.yaml sets none
// (schema.py DEFAULT_DCGM_EXPORTER, stored id 71538013475; no command:
// srtctl derives the collect interval).
const (
	SrtctlDefaultGPUExporterImage = "nvcr.io#nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04"
	SrtctlDefaultGPUExporterPort  = 9401
)

// extraKey is one top-level srtslurm.yaml key: apply maps its value onto
// the profile (nil for a key InferenceX always renders itself), or
// ignored says why the key does not apply to slurmbench.
type extraKey struct {
	name    string
	apply   func(x *extraCtx, v any) error
	ignored string
	// notNull: the field is no Optional, so marshmallow refuses null
	// (every other null leaves srtctl's default).
	notNull bool
}

// extraCtx is what applying one extra key needs.
type extraCtx struct {
	p     *Profile
	res   *runners.Resolved
	o     RunnersOptions
	field string // "slurm.srt-slurm.extra.<key>", relative to the cluster
	from  func(key, field, note string)
}

// srtslurmKeys are ClusterConfig's fields, in its order.
var srtslurmKeys = []extraKey{
	{name: "cluster"},
	{name: "default_account", apply: func(x *extraCtx, v any) error {
		s, err := x.str(v)
		if err == nil && s != "" {
			x.p.Slurm.Account = s
			x.set("slurm.account", "")
		}
		return err
	}},
	{name: "default_partition"},
	{name: "default_time_limit"},
	{name: "gpus_per_node"},
	{name: "default_gpu_type", apply: func(x *extraCtx, v any) error {
		s, err := x.str(v)
		x.p.Defaults.GPUType = s
		x.set("defaults.gpu_type", "resources.gpu_type of a recipe that leaves it out")
		return err
	}},
	{name: "network_interface"},
	{name: "visible_devices_env", notNull: true, apply: func(x *extraCtx, v any) error {
		s, err := x.str(v)
		if err == nil && !validEnvName(s) {
			err = fmt.Errorf("%q is not an environment variable name", s)
		}
		x.p.Defaults.VisibleDevicesEnv = s
		x.set("defaults.visible_devices_env", "the GPU mask a worker on part of a node gets")
		return err
	}},
	{name: "default_gpu_exporter", apply: applyGPUExporter},
	{name: "use_gpus_per_node_directive", notNull: true, apply: func(x *extraCtx, v any) error {
		b, err := x.boolean(v)
		x.p.Slurm.GPUsPerNodeDirective = &b
		x.set("slurm.gpus_per_node_directive", "")
		return err
	}},
	{name: "use_segment_sbatch_directive", notNull: true, apply: func(x *extraCtx, v any) error {
		b, err := x.boolean(v)
		x.p.Slurm.SegmentDirective = &b
		x.set("slurm.segment_directive", "")
		return err
	}},
	{name: "use_exclusive_sbatch_directive"},
	{name: "use_het_jobs", notNull: true, apply: func(x *extraCtx, v any) error {
		b, err := x.boolean(v)
		if err == nil && b {
			// recipe.validate refuses resources.het_jobs the same way.
			err = fmt.Errorf("true: slurmbench submits one job, never heterogeneous components")
		}
		return err
	}},
	{name: "default_sbatch_directives", apply: func(x *extraCtx, v any) error {
		m, err := x.strMap(v)
		if err != nil {
			return err
		}
		if p := x.p; p.Slurm.Directives == nil && len(m) > 0 {
			p.Slurm.Directives = map[string]string{}
		}
		for _, k := range sortedKeys(m) {
			if !validDirective(k) {
				return fmt.Errorf("%q is not an sbatch option name", k)
			}
			x.p.Slurm.Directives[k] = m[k]
			x.setSub("slurm.directives."+k, k)
		}
		return nil
	}},
	{name: "default_health_check"},
	{name: "srtctl_root"},
	{name: "output_dir", apply: func(x *extraCtx, v any) error {
		s, err := x.str(v)
		// As srt-slurm.outputs: a given runs dir or a shared-run-root wins.
		srt := x.res.Cluster.Slurm.SrtSlurm
		if err == nil && x.o.RunsDir == "" && srt.SharedRunRoot == "" && s != "" {
			if !strings.HasPrefix(s, "/") {
				return fmt.Errorf("%q is not an absolute path", s)
			}
			x.p.Paths.RunsDir = strings.TrimSuffix(s, "/") + "/slurmbench-runs"
			x.set("paths.runs_dir", "slurmbench-runs/ under it")
		}
		return err
	}},
	{name: "record_launch_plan", notNull: true, apply: func(x *extraCtx, v any) error {
		_, err := x.boolean(v)
		return err
	}, ignored: "every slurmbench run records its plan (plan.json) and each step's argv"},
	{name: "model_paths", apply: func(x *extraCtx, v any) error {
		m, err := x.strMap(v)
		for _, k := range sortedKeys(m) {
			x.p.Models[k] = m[k]
			x.setSub("models."+k, k)
		}
		return err
	}},
	{name: "containers"},
	{name: "cloud", apply: func(x *extraCtx, v any) error {
		_, err := x.strMap(v)
		return err
	}, ignored: "srtctl accepts it for compatibility and never reads it"},
	{name: "default_mounts", apply: func(x *extraCtx, v any) error {
		m, err := x.strMap(v)
		for _, host := range sortedKeys(m) {
			if entry := host + ":" + m[host]; !slices.Contains(x.p.Container.Mounts, entry) {
				x.p.Container.Mounts = append(x.p.Container.Mounts, entry)
			}
		}
		if len(m) > 0 {
			x.set("container.mounts", "default_mounts (host path:container path)")
		}
		return err
	}},
	{name: "default_bash_preamble", apply: func(x *extraCtx, v any) error {
		s, err := x.str(v)
		x.p.Defaults.BashPreamble = s
		x.set("defaults.bash_preamble", "before every containerized step's command")
		return err
	}},
	{name: "default_host_setup", apply: applyHostSetup},
	{name: "reporting", apply: func(x *extraCtx, v any) error {
		_, err := x.mapping(v)
		return err
	}, ignored: "srtctl's status collectors, S3 log upload and AI failure analysis: slurmbench reports through its own run directory"},
	{name: "telemetry", apply: func(x *extraCtx, v any) error {
		_, err := x.mapping(v)
		return err
	}, ignored: "srtctl's resource snapshotter settings (try_start_snapshotter), which slurmbench does not run"},
	{name: "nginx_raise_ulimit", apply: func(x *extraCtx, v any) error {
		if v == nil {
			return nil
		}
		b, err := x.boolean(v)
		x.p.Defaults.NginxRaiseUlimit = &b
		x.set("defaults.nginx_raise_ulimit", "frontend.nginx_raise_ulimit of a recipe that leaves it out")
		return err
	}},
	{name: "git_http_version", apply: func(x *extraCtx, v any) error {
		_, err := x.str(v)
		return err
	}, ignored: "srtctl's git clones of its own sources; slurmbench clones nothing"},
	{name: "preflight", notNull: true, apply: func(x *extraCtx, v any) error {
		_, err := x.boolean(v)
		return err
	}, ignored: "srtctl's pre-submit path checks; slurmbench's preflight is its own (--no-preflight)"},
}

// recordExtra applies the record's srt-slurm.extra onto p, key by key in
// sorted order; a key srtslurm.yaml does not define, one InferenceX
// renders itself, or a value of the wrong type is refused at its line.
func (p *Profile) recordExtra(res *runners.Resolved, o RunnersOptions, srt *runners.SrtSlurm, from func(key, field, note string)) error {
	c, file := res.Cluster, res.Inventory.Path
	rendered := renderedKeys(res, o, srt)
	for _, name := range sortedKeys(srt.Extra) {
		field := "slurm.srt-slurm.extra." + name
		fail := func(format string, args ...any) error {
			return &yamltree.Error{File: file, Line: c.LineOf(field), Field: "clusters." + c.ID + "." + field, Msg: fmt.Sprintf(format, args...)}
		}
		i := slices.IndexFunc(srtslurmKeys, func(k extraKey) bool { return k.name == name })
		if i < 0 {
			names := make([]string, len(srtslurmKeys))
			for j, k := range srtslurmKeys {
				names[j] = k.name
			}
			return fail("%q is not an srtslurm.yaml key (srtctl's ClusterConfig refuses it, and srtctl then drops the whole file with a warning); keys: %s",
				name, strings.Join(names, ", "))
		}
		k := srtslurmKeys[i]
		if why, ok := rendered[name]; ok {
			return fail("InferenceX's launcher writes %s itself (%s) and refuses a record whose extra sets it: set it there instead", name, why)
		}
		v := srt.Extra[name]
		switch {
		case v == nil && k.notNull:
			return fail("may not be null (srtctl's ClusterConfig)")
		case v == nil && name != "default_gpu_exporter":
			continue // unset: srtctl's default
		}
		x := &extraCtx{p: p, res: res, o: o, field: field, from: from}
		if err := k.apply(x, v); err != nil {
			if ye := (*yamltree.Error)(nil); errors.As(err, &ye) {
				return ye
			}
			return fail("%v", err)
		}
		if k.ignored != "" {
			p.Sources["ignored."+name] = Source{File: file, Line: c.LineOf(field), Field: "clusters." + c.ID + "." + field, Note: "does not apply: " + k.ignored}
		}
	}
	return nil
}

// renderedKeys are the srtslurm.yaml keys InferenceX's launcher writes for
// a job of this record, each with why (config.py@eacb6075 render): extra
// may not set them.
func renderedKeys(res *runners.Resolved, o RunnersOptions, srt *runners.SrtSlurm) map[string]string {
	s := res.Cluster.Slurm
	r := map[string]string{
		"cluster": "the cluster id", "default_partition": "slurm.partition", "default_time_limit": "the lane's or the record's time limit",
		"gpus_per_node": "gpus-per-node", "network_interface": "srt-slurm.network-interface", "srtctl_root": "its srt-slurm checkout",
		"containers":                     "the staged images and srt-slurm.container-aliases, nginx-aliases",
		"use_exclusive_sbatch_directive": "slurm.exclusive (single-node-exclusive for a single-node job)",
		// A fork checkout leaves it out; the pinned srt-slurm is none.
		"default_health_check": "720 attempts of 10 s",
	}
	if s.Account != "" {
		r["default_account"] = "slurm.account"
	}
	if srt.Outputs != "" {
		r["output_dir"] = "srt-slurm.outputs"
	}
	if len(res.Cluster.Models.EntryOrder) > 0 {
		r["model_paths"] = "the staged checkpoint of the job's model (models.entries)"
	}
	if len(srt.VolumeMounts)+len(srt.Mounts) > 0 || o.AgenticMultiNode || o.Framework == FrameworkTileRT {
		r["default_mounts"] = "srt-slurm.volume-mounts and mounts, and the lane's mounts"
	}
	if srt.GPUsPerNodeDirective != nil {
		r["use_gpus_per_node_directive"] = "srt-slurm.gpus-per-node-directive"
	}
	switch {
	case o.SingleNode:
		r["use_segment_sbatch_directive"] = "false for a single-node job"
	case srt.SegmentDirective != nil:
		r["use_segment_sbatch_directive"] = "srt-slurm.segment-directive"
	}
	gres := srt.GPUsPerNodeDirective != nil && !*srt.GPUsPerNodeDirective && s.Gres != ""
	if len(s.Exclude) > 0 || len(s.CPUDirectives()) > 0 || gres {
		r["default_sbatch_directives"] = "slurm.exclude, cpus-per-task or cpus-per-gpu, gres"
	}
	if srt.HostSetup != nil {
		r["default_host_setup"] = "srt-slurm.host-setup"
	}
	return r
}

// applyGPUExporter maps default_gpu_exporter onto [telemetry]: the
// exporter a recipe that enables telemetry with no dcgm_exporter runs
// (srtctl's TelemetryConfig.dcgm_exporter: "When enabled with no exporter
// and no CPU leg, the cluster default_gpu_exporter is used";
// core/config.py@020fbc6c resolve_config_with_defaults). null disables the
// cluster default (schema-reference.md@1c3080ec ClusterConfig).
func applyGPUExporter(x *extraCtx, v any) error {
	t := &x.p.Telemetry
	if v == nil {
		t.ExporterImage, t.ExporterCommand = "", ""
		x.set("telemetry.exporter_image", "null: no cluster GPU exporter; a recipe that enables telemetry names its own")
		return nil
	}
	m, err := x.mapping(v)
	if err != nil {
		return err
	}
	var image, command string
	port := 0
	for _, k := range sortedKeys(m) {
		sub := x.sub(k)
		var err error
		switch k {
		case "container_image":
			image, err = sub.str(m[k])
		case "port":
			port, err = sub.integer(m[k])
			if err == nil && (port < 1 || port > 65535) {
				err = fmt.Errorf("%d is not in 1..65535", port)
			}
		case "command":
			if m[k] != nil {
				command, err = sub.str(m[k])
			}
		case "kind":
			var kind string
			if kind, err = sub.str(m[k]); err == nil && kind != "dcgm" {
				err = fmt.Errorf("%q: slurmbench reads DCGM's power metrics only (kind dcgm)", kind)
			}
		case "binary", "gpu_labels", "gpu_metrics":
			if m[k] != nil {
				err = fmt.Errorf("not supported: slurmbench runs the exporter image and reads DCGM's labels and metrics")
			}
		default:
			err = fmt.Errorf("unknown key (TelemetryExporterConfig takes container_image, port, command, binary, kind, gpu_labels, gpu_metrics)")
		}
		if err != nil {
			return sub.errorf("%v", err)
		}
	}
	for _, req := range []string{"container_image", "port"} {
		if _, ok := m[req]; !ok {
			return fmt.Errorf("default_gpu_exporter.%s: required", req)
		}
	}
	t.ExporterImage, t.Port, t.ExporterCommand = image, port, command
	x.setSub("telemetry.exporter_image", "container_image")
	x.setSub("telemetry.port", "port")
	if command != "" {
		x.setSub("telemetry.exporter_command", "command")
	}
	return nil
}

// applyHostSetup maps default_host_setup (srtctl's HostSetupConfig) onto
// the profile's HostSetup, as commands.
func applyHostSetup(x *extraCtx, v any) error {
	if v == nil {
		return nil
	}
	m, err := x.mapping(v)
	if err != nil {
		return err
	}
	h := &HostSetup{}
	for _, k := range sortedKeys(m) {
		sub := x.sub(k)
		var err error
		switch k {
		case "commands":
			h.Commands, err = sub.strList(m[k])
		case "teardown":
			h.Teardown, err = sub.strList(m[k])
		case "nodes":
			if h.Nodes, err = sub.str(m[k]); err == nil && h.Nodes != "all" && h.Nodes != "workers" {
				err = fmt.Errorf("%q is not all or workers", h.Nodes)
			}
		case "ignore_failure":
			h.IgnoreFailure, err = sub.boolean(m[k])
		case "timeout_seconds":
			h.TimeoutSeconds, err = sub.integer(m[k])
			if err == nil && h.TimeoutSeconds <= 0 {
				err = fmt.Errorf("%d is not a positive number of seconds", h.TimeoutSeconds)
			}
		default:
			err = fmt.Errorf("unknown key (HostSetupConfig takes commands, teardown, nodes, ignore_failure, timeout_seconds)")
		}
		if err != nil {
			return sub.errorf("%v", err)
		}
	}
	x.p.HostSetup = h
	x.set("host_setup", "srtslurm.yaml's default_host_setup, as written")
	return nil
}

func (x *extraCtx) set(key, note string) { x.from(key, x.field, note) }

// setSub records key as coming from the sub-field sub of this key.
func (x *extraCtx) setSub(key, sub string) { x.from(key, x.field+"."+sub, "") }

func (x *extraCtx) sub(k string) *extraCtx {
	c := *x
	c.field = x.field + "." + k
	return &c
}

func (x *extraCtx) errorf(format string, args ...any) error {
	c := x.res.Cluster
	return &yamltree.Error{File: x.res.Inventory.Path, Line: c.LineOf(x.field), Field: "clusters." + c.ID + "." + x.field, Msg: fmt.Sprintf(format, args...)}
}

// The value checks follow the marshmallow fields srtctl's schema uses:
// String takes only strings; Integer (not strict) an integer or a string
// of one, never a boolean; Boolean its truthy and falsy spellings;
// Dict[str, str] a mapping of strings.

func (x *extraCtx) str(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("must be a string, got %s", valueKind(v))
	}
	return s, nil
}

func (x *extraCtx) integer(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n), nil
		}
	case string:
		if i, err := strconv.Atoi(strings.TrimSpace(n)); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("must be an integer, got %s", valueKind(v))
}

var (
	truthy = []string{"t", "true", "on", "y", "yes", "1"}
	falsy  = []string{"f", "false", "off", "n", "no", "0"}
)

func (x *extraCtx) boolean(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case int:
		if b == 0 || b == 1 {
			return b == 1, nil
		}
	case string:
		switch l := strings.ToLower(b); {
		case slices.Contains(truthy, l):
			return true, nil
		case slices.Contains(falsy, l):
			return false, nil
		}
	}
	return false, fmt.Errorf("must be a boolean, got %s", valueKind(v))
}

func (x *extraCtx) mapping(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be a mapping, got %s", valueKind(v))
	}
	return m, nil
}

func (x *extraCtx) strMap(v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, err := x.mapping(v)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		s, ok := m[k].(string)
		if !ok {
			return nil, x.sub(k).errorf("must be a string, got %s", valueKind(m[k]))
		}
		out[k] = s
	}
	return out, nil
}

func (x *extraCtx) strList(v any) ([]string, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be a list of strings, got %s", valueKind(v))
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("[%d] must be a string, got %s", i, valueKind(e))
		}
		out[i] = s
	}
	return out, nil
}

func valueKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool, int, float64:
		return fmt.Sprintf("%T %v", v, v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
