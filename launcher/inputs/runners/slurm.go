package runners

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

var partitionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// readSlurm reads the `slurm:` sub-record (SlurmSettings).
func (d *decoder) readSlurm(n *yaml.Node, field string) Slurm {
	s := Slurm{Volumes: map[string]Volume{}}
	set := d.record(n, field, []key{
		{alias: "volumes", set: func(v *yaml.Node, f string) { s.Volumes = d.readVolumes(v, f) }},
		{alias: "partition", set: func(v *yaml.Node, f string) { s.Partition = d.nonEmpty(v, f) }},
		{alias: "partitions", set: func(v *yaml.Node, f string) {
			s.Partitions = d.strings(v, f, func(c *yaml.Node, cf, p string) {
				if !partitionName.MatchString(p) {
					d.failf(c, cf, "%q is not a partition name (%s)", p, partitionName)
				}
			})
		}},
		{alias: "account", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.Account = d.nonEmpty(v, f)
			}
		}},
		{alias: "exclusive", set: func(v *yaml.Node, f string) { s.Exclusive = d.boolean(v, f) }},
		{alias: "exclude", set: func(v *yaml.Node, f string) { s.Exclude = d.strings(v, f, nil) }},
		{alias: "gres", set: func(v *yaml.Node, f string) {
			if null(v) {
				return
			}
			s.Gres = d.str(v, f)
			if d.ok() {
				if err := checkGres(s.Gres); err != nil {
					d.failf(v, f, "%v", err)
				}
			}
		}},
		{alias: "cpus-per-task", name: "cpus_per_task", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.CPUsPerTask = d.positive(v, f)
			}
		}},
		{alias: "cpus-per-gpu", name: "cpus_per_gpu", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.CPUsPerGPU = d.positive(v, f)
			}
		}},
		{alias: "srun-args", name: "srun_args", set: func(v *yaml.Node, f string) { s.SrunArgs = d.longOptions(v, f) }},
		{alias: "salloc-args", name: "salloc_args", set: func(v *yaml.Node, f string) { s.SallocArgs = d.longOptions(v, f) }},
		{alias: "squash", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.Squash = d.readSquash(v, f)
			}
		}},
		{alias: "srt-slurm", name: "srt_slurm", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.SrtSlurm = d.readSrtSlurm(v, f)
			}
		}},
	})
	d.require(n, field, set, "partition", "exclusive")
	if !d.ok() {
		return s
	}
	// SlurmSettings' model validators.
	if s.CPUsPerTask > 0 && s.CPUsPerGPU > 0 {
		d.failRecord(n, field, "set cpus-per-task or cpus-per-gpu, not both (Slurm rejects the pair)")
	}
	if srt := s.SrtSlurm; srt != nil && d.ok() {
		for _, mounts := range []struct {
			name string
			m    map[string]string
		}{{"volume-mounts", srt.VolumeMounts}, {"agentic-volume-mounts", srt.AgenticVolumeMounts}} {
			var unknown []string
			for v := range mounts.m {
				if _, ok := s.Volumes[v]; !ok {
					unknown = append(unknown, v)
				}
			}
			if len(unknown) > 0 {
				sort.Strings(unknown)
				d.failf(n, field+".srt-slurm."+mounts.name, "names unknown volumes: %s (volumes: %s)", strings.Join(unknown, ", "), strings.Join(sortedKeys(s.Volumes), ", "))
				d.err.Line = d.lines[field+".srt-slurm."+mounts.name]
				return s
			}
		}
	}
	return s
}

func (d *decoder) readVolumes(n *yaml.Node, field string) map[string]Volume {
	out := map[string]Volume{}
	d.pairs(n, field, func(k, v *yaml.Node) {
		f := field + "." + k.Value
		d.lines[f] = k.Line
		vol := Volume{Visibility: Shared}
		set := d.record(v, f, []key{
			{alias: "path", set: func(v *yaml.Node, f string) { vol.Path = d.hostPath(v, f) }},
			{alias: "visibility", set: func(v *yaml.Node, f string) { vol.Visibility = d.visibility(v, f) }},
		})
		d.require(v, f, set, "path")
		out[k.Value] = vol
	})
	return out
}

func (d *decoder) visibility(n *yaml.Node, field string) Visibility {
	return Visibility(d.literal(n, field, string(Shared), string(NodeLocal)))
}

// checkGres is SlurmSettings._gres_template: the template formats with
// gpus=1 as Python's str.format does, using only {gpus}, and must change
// when it does (so it holds the placeholder).
func checkGres(gres string) error {
	rendered, err := FormatGres(gres, 1)
	if err != nil {
		return fmt.Errorf("gres must only use the {gpus} placeholder: %q (%w)", gres, err)
	}
	if rendered == gres {
		return fmt.Errorf("gres must contain the {gpus} placeholder: %q", gres)
	}
	return nil
}

// FormatGres renders a GRES template for gpus GPUs as Python's
// template.format(gpus=gpus) does: {{ and }} are braces, {gpus} (with an
// optional !s/!r conversion) the number; any other field, a positional
// {} or a lone brace is an error. Format specs are refused.
func FormatGres(template string, gpus int) (string, error) {
	var b strings.Builder
	for i := 0; i < len(template); i++ {
		c := template[i]
		switch {
		case c == '{' && i+1 < len(template) && template[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(template) && template[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '}':
			return "", fmt.Errorf("single '}' encountered")
		case c == '{':
			end := strings.IndexByte(template[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("single '{' encountered")
			}
			name := template[i+1 : i+end]
			name, conv, _ := strings.Cut(name, "!")
			switch {
			case strings.ContainsAny(name, ":{"):
				return "", fmt.Errorf("format spec in %q", template[i:i+end+1])
			case name == "":
				return "", fmt.Errorf("positional field {} (only {gpus})")
			case name != "gpus":
				return "", fmt.Errorf("unknown field {%s}", name)
			case conv != "" && conv != "s" && conv != "r":
				return "", fmt.Errorf("unknown conversion !%s", conv)
			}
			b.WriteString(strconv.Itoa(gpus))
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// GresFor is the GRES request for gpus GPUs, "" when the cluster sets none.
func (s Slurm) GresFor(gpus int) string {
	if s.Gres == "" {
		return ""
	}
	g, _ := FormatGres(s.Gres, gpus) // checked at load
	return g
}

// CPUDirectives is the sbatch/salloc CPU request, option → value.
func (s Slurm) CPUDirectives() map[string]string {
	switch {
	case s.CPUsPerGPU > 0:
		return map[string]string{"cpus-per-gpu": strconv.Itoa(s.CPUsPerGPU)}
	case s.CPUsPerTask > 0:
		return map[string]string{"cpus-per-task": strconv.Itoa(s.CPUsPerTask)}
	}
	return nil
}

var importModes = []string{string(ImportSubmitHost), string(ImportCompute), string(ImportAllNodes), string(ImportPreStaged), string(ImportUnchecked)}
var keyStyles = []string{string(KeyUnderscore), string(KeyPlus), string(KeyPlusStripNVCR)}

func (d *decoder) readLocation(n *yaml.Node, field string, extra ...key) SquashLocation {
	var l SquashLocation
	keys := append([]key{
		{alias: "dir", set: func(v *yaml.Node, f string) {
			if !null(v) {
				l.Dir = d.hostPath(v, f)
			}
		}},
		{alias: "key-style", name: "key_style", set: func(v *yaml.Node, f string) {
			if !null(v) {
				l.KeyStyle = KeyStyle(d.literal(v, f, keyStyles...))
			}
		}},
		{alias: "import", name: "import_mode", set: func(v *yaml.Node, f string) {
			if !null(v) {
				l.Import = ImportMode(d.literal(v, f, importModes...))
			}
		}},
	}, extra...)
	d.record(n, field, keys)
	return l
}

func (d *decoder) readSquash(n *yaml.Node, field string) *Squash {
	s := &Squash{Visibility: Shared, LockTimeoutS: 1800, KeyStyle: KeyUnderscore, LockFile: LockBesideSquash, MultiNodeImport: true,
		FrameworkDirs: map[string]FrameworkLocation{}, HelperDirs: map[string]SquashLocation{}}
	set := d.record(n, field, []key{
		{alias: "dir", set: func(v *yaml.Node, f string) { s.Dir = d.hostPath(v, f) }},
		{alias: "visibility", set: func(v *yaml.Node, f string) { s.Visibility = d.visibility(v, f) }},
		{alias: "import", name: "import_mode", set: func(v *yaml.Node, f string) { s.Import = ImportMode(d.literal(v, f, importModes...)) }},
		{alias: "lock-timeout-s", name: "lock_timeout_s", set: func(v *yaml.Node, f string) { s.LockTimeoutS = d.positive(v, f) }},
		{alias: "key-style", name: "key_style", set: func(v *yaml.Node, f string) { s.KeyStyle = KeyStyle(d.literal(v, f, keyStyles...)) }},
		{alias: "lock-file", name: "lock_file", set: func(v *yaml.Node, f string) {
			s.LockFile = LockFile(d.literal(v, f, string(LockBesideSquash), string(LockLocksDir)))
		}},
		{alias: "import-step-args", name: "import_step_args", set: func(v *yaml.Node, f string) { s.ImportStepArgs = d.longOptions(v, f) }},
		{alias: "single-node-import", name: "single_node_import", set: func(v *yaml.Node, f string) { s.SingleNodeImport = d.boolean(v, f) }},
		{alias: "multi-node-import", name: "multi_node_import", set: func(v *yaml.Node, f string) { s.MultiNodeImport = d.boolean(v, f) }},
		{alias: "framework-dirs", name: "framework_dirs", set: func(v *yaml.Node, f string) {
			d.pairs(v, f, func(k, fv *yaml.Node) {
				ff := f + "." + k.Value
				d.lines[ff] = k.Line
				loc := FrameworkLocation{ModelPrefixes: map[string]SquashLocation{}}
				loc.SquashLocation = d.readLocation(fv, ff, key{alias: "model-prefixes", name: "model_prefixes", set: func(pv *yaml.Node, pf string) {
					d.pairs(pv, pf, func(pk, ppv *yaml.Node) {
						d.lines[pf+"."+pk.Value] = pk.Line
						loc.ModelPrefixes[pk.Value] = d.readLocation(ppv, pf+"."+pk.Value)
					})
				}})
				s.FrameworkDirs[k.Value] = loc
			})
		}},
		{alias: "helper-dirs", name: "helper_dirs", set: func(v *yaml.Node, f string) {
			d.pairs(v, f, func(k, hv *yaml.Node) {
				hf := f + "." + k.Value
				d.lines[hf] = k.Line
				if k.Value != HelperNginx && k.Value != HelperDCGMExporter {
					d.failf(k, hf, "%q is not a helper image (nginx, dcgm-exporter)", k.Value)
					return
				}
				s.HelperDirs[k.Value] = d.readLocation(hv, hf)
			})
		}},
	})
	d.require(n, field, set, "dir", "import")
	if !d.ok() {
		return s
	}
	// SquashCache._reachable: node-local storage cannot be filled from
	// the submit host, by the cache or by any location.
	if s.Visibility == NodeLocal {
		modes := []ImportMode{s.Import}
		for _, h := range s.HelperDirs {
			modes = append(modes, h.Import)
		}
		for _, fl := range s.FrameworkDirs {
			modes = append(modes, fl.Import)
			for _, p := range fl.ModelPrefixes {
				modes = append(modes, p.Import)
			}
		}
		if slices.Contains(modes, ImportSubmitHost) {
			d.failRecord(n, field, "submit-host import cannot populate node-local image storage")
		}
	}
	return s
}

func (d *decoder) readSrtSlurm(n *yaml.Node, field string) *SrtSlurm {
	s := &SrtSlurm{SingleNodeModels: "hub", Preflight: true, SingleNodeExclusive: true}
	optBool := func(v *yaml.Node, f string) *bool {
		if null(v) {
			return nil
		}
		b := d.boolean(v, f)
		return &b
	}
	set := d.record(n, field, []key{
		{alias: "network-interface", name: "network_interface", set: func(v *yaml.Node, f string) { s.NetworkInterface = d.str(v, f) }},
		{alias: "job-tag", name: "job_tag", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.JobTag = d.str(v, f)
			}
		}},
		{alias: "default-time-limit", name: "default_time_limit", set: func(v *yaml.Node, f string) {
			if null(v) {
				return
			}
			s.DefaultTimeLimit = d.str(v, f)
			if d.ok() && !timeLimit.MatchString(s.DefaultTimeLimit) {
				d.failf(v, f, "%q is not H:MM:SS", s.DefaultTimeLimit)
			}
		}},
		{alias: "single-node-time-limit", name: "single_node_time_limit", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.SingleNodeTimeLimit = d.positive(v, f)
			}
		}},
		{alias: "single-node-models", name: "single_node_models", set: func(v *yaml.Node, f string) { s.SingleNodeModels = d.literal(v, f, "staged", "hub") }},
		{alias: "preflight", set: func(v *yaml.Node, f string) { s.Preflight = d.boolean(v, f) }},
		{alias: "dist-timeout-s", name: "dist_timeout_s", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.DistTimeoutS = d.positive(v, f)
			}
		}},
		{alias: "gpus-per-node-directive", name: "gpus_per_node_directive", set: func(v *yaml.Node, f string) { s.GPUsPerNodeDirective = optBool(v, f) }},
		{alias: "segment-directive", name: "segment_directive", set: func(v *yaml.Node, f string) { s.SegmentDirective = optBool(v, f) }},
		{alias: "single-node-exclusive", name: "single_node_exclusive", set: func(v *yaml.Node, f string) { s.SingleNodeExclusive = d.boolean(v, f) }},
		{alias: "container-aliases", name: "container_aliases", set: func(v *yaml.Node, f string) { s.ContainerAliases = d.strings(v, f, nil) }},
		{alias: "nginx-aliases", name: "nginx_aliases", set: func(v *yaml.Node, f string) { s.NginxAliases = d.strings(v, f, nil) }},
		{alias: "host-setup", name: "host_setup", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.HostSetup = d.readHostSetup(v, f)
			}
		}},
		{alias: "power-telemetry", name: "power_telemetry", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.PowerTelemetry = d.readPower(v, f)
			}
		}},
		// power-exporter-port is an int with gt=0 and no upper bound in
		// infx/clusters/slurm.py@19c96be5 (SrtSlurmSettings), unlike
		// power-telemetry's ports (ge=1, le=65535): a record InferenceX
		// takes is read here too; the exporter refuses a port past 65535
		// when the job starts, as InferenceX's does.
		{alias: "power-exporter-port", name: "power_exporter_port", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.PowerExporterPort = d.positive(v, f)
			}
		}},
		{alias: "env", set: func(v *yaml.Node, f string) { s.Env = d.strMap(v, f) }},
		{alias: "outputs", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.Outputs = d.hostPath(v, f)
			}
		}},
		{alias: "shared-run-root", name: "shared_run_root", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.SharedRunRoot = d.hostPath(v, f)
			}
		}},
		{alias: "uv-cache-root", name: "uv_cache_root", set: func(v *yaml.Node, f string) {
			if !null(v) {
				s.UVCacheRoot = d.hostPath(v, f)
			}
		}},
		{alias: "volume-mounts", name: "volume_mounts", set: func(v *yaml.Node, f string) { s.VolumeMounts = d.strMap(v, f) }},
		{alias: "agentic-volume-mounts", name: "agentic_volume_mounts", set: func(v *yaml.Node, f string) { s.AgenticVolumeMounts = d.strMap(v, f) }},
		{alias: "mounts", set: func(v *yaml.Node, f string) { s.Mounts = d.strMap(v, f) }},
		{alias: "extra", set: func(v *yaml.Node, f string) {
			s.Extra = map[string]any{}
			d.pairs(v, f, func(k, ev *yaml.Node) {
				var x any
				if err := ev.Decode(&x); err != nil {
					d.failf(ev, f+"."+k.Value, "%v", err)
				}
				s.Extra[k.Value] = x
				d.keyLines(k, ev, f+"."+k.Value)
			})
		}},
		{alias: "fabric", set: func(v *yaml.Node, f string) { s.Fabric = d.readFabric(v, f) }},
	})
	d.require(n, field, set, "network-interface")
	if !d.ok() || s.HostSetup == nil {
		return s
	}
	// Host-setup env values take the fabric as the cluster's env does
	// (their lists keep their commas: IBDEVICES=rdma0,rdma1,...).
	for _, name := range sortedKeys(s.HostSetup.Env) {
		v, err := s.Fabric.Resolve(s.HostSetup.Env[name])
		if err != nil {
			f := field + ".host-setup.env." + name
			d.failf(n, f, "%v", err)
			d.err.Line = d.lines[f]
			return s
		}
		s.HostSetup.Env[name] = v
	}
	return s
}

// keyLines records the line of every mapping key at and below k (value
// v), so what reads extra's literal srtslurm.yaml keys can name the line
// of a nested one (extra.default_gpu_exporter.port).
func (d *decoder) keyLines(k, v *yaml.Node, field string) {
	if d.lines == nil {
		return
	}
	d.lines[field] = k.Line
	if v = yamltree.DeAlias(v); v == nil || v.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		d.keyLines(v.Content[i], v.Content[i+1], field+"."+v.Content[i].Value)
	}
}

var timeLimit = regexp.MustCompile(`^\d+:\d{2}:\d{2}$`)

func (d *decoder) readHostSetup(n *yaml.Node, field string) *HostSetup {
	h := &HostSetup{}
	set := d.record(n, field, []key{
		{alias: "script", set: func(v *yaml.Node, f string) {
			h.Script = d.str(v, f)
			if d.ok() && !relativeInside(h.Script) {
				d.failf(v, f, "host-setup script must be repository-relative: %s", h.Script)
			}
		}},
		{alias: "env", set: func(v *yaml.Node, f string) { h.Env = d.strMap(v, f) }},
		{alias: "timeout-s", name: "timeout_s", set: func(v *yaml.Node, f string) {
			if !null(v) {
				h.TimeoutS = d.positive(v, f)
			}
		}},
		{alias: "nodes", set: func(v *yaml.Node, f string) {
			if !null(v) {
				h.Nodes = d.literal(v, f, "all")
			}
		}},
	})
	d.require(n, field, set, "script")
	return h
}

func (d *decoder) readPower(n *yaml.Node, field string) *PowerTelemetry {
	p := &PowerTelemetry{CPUPort: 9405}
	set := d.record(n, field, []key{
		{alias: "dcgm-port", name: "dcgm_port", set: func(v *yaml.Node, f string) { p.DCGMPort = d.port(v, f) }},
		{alias: "cpu-port", name: "cpu_port", set: func(v *yaml.Node, f string) { p.CPUPort = d.port(v, f) }},
		{alias: "cpu-source", name: "cpu_source", set: func(v *yaml.Node, f string) { p.CPUSource = d.literal(v, f, "acpi", "dcgm") }},
	})
	d.require(n, field, set, "dcgm-port", "cpu-source")
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
