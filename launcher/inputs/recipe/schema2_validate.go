package recipe

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// Validation of the schema-2 fields with no v1 equivalent, by the rules of
// srt-slurm 2.x's dataclasses (services/config.py ServiceConfig and its
// kinds, schema.py PostEvalConfig, HostSetupConfig, CpuPowerExporterConfig).
// Values are checked as srtctl checks them; a valid srtctl feature
// slurmbench does not run is refused by name (checkSupportedV2).

// Service placements, start phases and per-instance modes srtctl 2.x has.
var (
	servicePlacements = map[string]bool{"head": true, "infra": true, "dedicated": true, "prefill": true, "decode": true, "agg": true, "workers": true, "compute": true, "all": true}
	serviceStarts     = map[string]bool{"infra": true, "before_workers": true, "after_frontend": true}
	// serviceOptionKeys are the options each kind understands; any other is
	// refused by the kind.
	serviceOptionKeys = map[string]map[string]bool{
		"generic": {}, "etcd": {}, "nats": {"max_payload_mb": true},
		"mooncake-master": {"store_config": true, "device_names_by_gpu": true},
	}
	// otherServiceKinds are srtctl kinds slurmbench does not launch.
	otherServiceKinds = map[string]bool{"mooncake-store": true, "mooncake-donor": true, "dcgm-exporter": true, "node-exporter": true,
		"process-exporter": true, "gms": true, "ray": true, "lmcache-server": true, "llm-d-sidecar": true}
)

// validateV2 checks the schema-2 fields; add reports a malformed value.
func (r *Recipe) validateV2(add func(field, format string, args ...any), report func(error)) {
	for i, s := range r.Services {
		r.validateService(i, s, report)
	}
	if p := r.PostEval; p != nil {
		for _, name := range p.PassthroughEnv {
			if !profile.ValidEnvName(name) {
				add("post_eval.passthrough_env", "%q is not an environment variable name", name)
			}
		}
		if p.Command != nil && len(p.Command) == 0 {
			add("post_eval.command", "if set, must be non-empty (omit it to use the lm-eval runner)")
		}
	}
	if h := r.HostSetup; h != nil {
		switch h.Nodes {
		case "", "all", "workers":
		default:
			add("host_setup.nodes", "%q is not all or workers", h.Nodes)
		}
		if h.TimeoutSeconds != nil && *h.TimeoutSeconds <= 0 {
			add("host_setup.timeout_seconds", "must be positive, got %d", *h.TimeoutSeconds)
		}
	}
	if t := r.Telemetry; t != nil && t.CPUPowerExporter != nil {
		e := t.CPUPowerExporter
		if e.Port != nil && (*e.Port < 1 || *e.Port > 65535) {
			add("telemetry.cpu_power_exporter.port", "%d is not in 1..65535", *e.Port)
		}
		switch e.Source {
		case "", "auto", "acpi", "dcgm":
		default:
			add("telemetry.cpu_power_exporter.source", "%q is not auto, acpi or dcgm", e.Source)
		}
		if d := t.DCGMExporter; d != nil && d.Port != nil && e.Port != nil && *d.Port == *e.Port {
			add("telemetry.cpu_power_exporter.port", "%d collides with telemetry.dcgm_exporter.port", *e.Port)
		}
	}
	for _, p := range []struct {
		field string
		pl    *Placement
		ok    map[string]bool
	}{
		{"frontend.placement.node", r.Frontend.Placement, map[string]bool{"head": true, "first_decode": true, "dedicated": true}},
		{"benchmark.placement.node", r.Benchmark.Placement, map[string]bool{"head": true, "first_decode": true, "last_decode": true, "dedicated": true}},
	} {
		if p.pl != nil && !p.ok[p.pl.Node] {
			add(p.field, "%q is not one of %s", p.pl.Node, strings.Join(SortedKeys(p.ok), ", "))
		}
	}
}

// SortedKeys returns m's keys in order.
func SortedKeys[V any](m map[string]V) []string { return profile.SortedKeys(m) }

func serviceErr(path string, i int, s Service, report func(error), sub, format string, args ...any) {
	field := fmt.Sprintf("services[%d]", i)
	if s.Name != "" {
		field = fmt.Sprintf("services[%s]", s.Name)
	}
	if sub != "" {
		field += "." + sub
	}
	report(&Error{File: path, Line: s.Line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// validateService is ServiceConfig.__post_init__ with its kind's checks.
func (r *Recipe) validateService(i int, s Service, report func(error)) {
	fail := func(sub, format string, args ...any) { serviceErr(r.Path, i, s, report, sub, format, args...) }
	kind := s.EffectiveType()
	if _, known := serviceOptionKeys[kind]; !known && !otherServiceKinds[kind] {
		fail("type", "%q is not a service type srt-slurm 2.x has (generic, etcd, nats, mooncake-master, mooncake-store, ...)", kind)
		return
	}
	if s.Command != nil && len(s.Command) == 0 {
		fail("command", "if set, must be non-empty (omit it to use the type's default)")
	}
	if s.Command == nil && kind == "generic" {
		fail("command", "required for type generic (the argv to launch)")
	}
	for _, a := range append(append([]string{}, s.Command...), s.Args...) {
		if strings.TrimSpace(a) == "" {
			fail("command", "command/args must not contain empty arguments")
			break
		}
	}
	if s.Start != "" && !serviceStarts[s.Start] {
		fail("start", "%q is not one of after_frontend, before_workers, infra", s.Start)
	}
	placement := s.EffectivePlacement()
	if !servicePlacements[placement] {
		fail("placement.node", "%q is not one of %s", placement, strings.Join(SortedKeys(servicePlacements), ", "))
	}
	infraKind := kind == "etcd" || kind == "nats" || kind == "mooncake-master"
	if placement == "dedicated" && !infraKind {
		fail("placement.node", "dedicated is only for etcd, nats and mooncake-master; use head, infra or workers")
	}
	if (kind == "etcd" || kind == "nats") && placement != "head" && placement != "infra" && placement != "dedicated" {
		fail("placement.node", "type %s runs on head, infra or dedicated (the discovery plane lives on the infra node), not %q", kind, placement)
	}
	if p := s.Placement; p != nil {
		switch p.Per {
		case "", "node", "worker":
		default:
			fail("placement.per", "%q is not node or worker", p.Per)
		}
		if p.Pool != "" && p.Node != "" && p.Node != "head" {
			fail("placement", "give either node or pool, not both")
		}
	}
	if rd := s.Readiness; rd != nil {
		probes := []string{}
		if rd.Port != nil && rd.TCP != nil {
			fail("readiness", "give either port (shorthand) or tcp, not both")
		}
		if rd.Port != nil || rd.TCP != nil {
			probes = append(probes, "tcp")
		}
		if rd.HTTP != nil {
			probes = append(probes, "http")
		}
		if rd.Log != nil {
			probes = append(probes, "log")
		}
		if len(probes) != 1 {
			fail("readiness", "needs exactly one probe: port, tcp, http or log; got %s", strings.Join(append(probes, "none")[:max(len(probes), 1)], ", "))
		}
		port := func(sub string, p int) {
			if p < 1 || p > 65535 {
				fail("readiness."+sub, "%d is not in 1..65535", p)
			}
		}
		if rd.Port != nil {
			port("port", *rd.Port)
		}
		if rd.TCP != nil {
			port("tcp.port", rd.TCP.Port)
		}
		if h := rd.HTTP; h != nil {
			port("http.port", h.Port)
			if h.Path != "" && !strings.HasPrefix(h.Path, "/") {
				fail("readiness.http.path", "%q must start with '/'", h.Path)
			}
			if h.Status != nil && (*h.Status < 100 || *h.Status > 599) {
				fail("readiness.http.status", "%d is not an HTTP status code", *h.Status)
			}
		}
		if l := rd.Log; l != nil {
			if _, err := regexp.Compile(l.Pattern); err != nil || l.Pattern == "" {
				fail("readiness.log.pattern", "%q is not a regular expression slurmbench can match: %v", l.Pattern, err)
			}
		}
		if rd.TimeoutSeconds != nil && *rd.TimeoutSeconds <= 0 {
			fail("readiness.timeout_seconds", "must be positive, got %d", *rd.TimeoutSeconds)
		}
		if rd.IntervalSeconds != nil && *rd.IntervalSeconds <= 0 {
			fail("readiness.interval_seconds", "must be positive, got %d", *rd.IntervalSeconds)
		}
	}
	if s.Nodes != nil && *s.Nodes < 1 {
		fail("nodes", "must be at least 1, got %d", *s.Nodes)
	}
	if s.CPUsPerTask != nil && *s.CPUsPerTask <= 0 {
		fail("cpus_per_task", "must be positive, got %d", *s.CPUsPerTask)
	}
	if o := s.Options; o != nil && o.Node != nil && o.Node.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(o.Node.Content); j += 2 {
			if k := o.Node.Content[j].Value; !serviceOptionKeys[kind][k] && serviceOptionKeys[kind] != nil {
				fail("options."+k, "type %s does not understand this option (it has: %s)", kind, strings.Join(SortedKeys(serviceOptionKeys[kind]), ", "))
			}
		}
	}
	for _, k := range SortedKeys(s.Env) {
		if !profile.ValidEnvName(k) {
			fail("env", "%q is not a valid environment variable name", k)
		}
	}
}

// checkSupportedV2 refuses valid schema-2 features slurmbench does not run.
func (r *Recipe) checkSupportedV2() error {
	for _, s := range r.Services {
		if !s.IsEnabled() {
			if t := s.EffectiveType(); t == "etcd" || t == "nats" {
				// srtctl then launches no discovery plane; slurmbench's
				// Dynamo frontend always starts one.
				return &UnsupportedError{Error{File: r.Path, Line: s.Line, Field: fmt.Sprintf("services[%s].enabled", s.Name),
					Msg: "dropping the " + t + " service of the Dynamo discovery plane is " + ErrUnsupported.Error()}}
			}
			continue
		}
		label := fmt.Sprintf("services[%s]", s.Name)
		uns := func(sub, what string) error {
			return &UnsupportedError{Error{File: r.Path, Line: s.Line, Field: label + sub, Msg: what + " is " + ErrUnsupported.Error()}}
		}
		switch {
		case otherServiceKinds[s.EffectiveType()]:
			return uns(".type", fmt.Sprintf("service type %q", s.EffectiveType()))
		case s.External != "":
			return uns(".external", "an already-running external discovery endpoint")
		case s.Nodes != nil:
			return uns(".nodes", "a service that owns a pool of nodes")
		case s.Placement != nil && s.Placement.Pool != "":
			return uns(".placement.pool", "running a service on another service's pool")
		case s.Placement != nil && s.Placement.Per == "worker":
			return uns(".placement.per", "one service instance per engine worker")
		case s.Source != nil || s.BuildCommand != nil:
			return uns(".source", "cloning and building a service from source")
		case s.Terminal:
			return uns(".terminal", "a terminal service (the job ends when it exits)")
		case s.EffectiveType() == "mooncake-master" && s.Options != nil && mapGet(s.Options.Node, "device_names_by_gpu") != nil:
			return uns(".options.device_names_by_gpu", "mooncake device names per GPU")
		case s.EffectiveType() != "generic" && s.Command != nil:
			return uns(".command", "replacing the command of a "+s.EffectiveType()+" service")
		}
	}
	for _, x := range []struct {
		field string
		args  []string
	}{{"backend.prefill_extra_args", r.Backend.PrefillExtraArgs}, {"backend.decode_extra_args", r.Backend.DecodeExtraArgs}, {"backend.aggregated_extra_args", r.Backend.AggregatedExtraArgs}} {
		if len(x.args) > 0 && r.Frontend.Type != "trtllm_serve" {
			// srtctl appends them to trtllm-serve only; dynamo.trtllm, the
			// worker of every other frontend, takes another CLI.
			return r.unsupported(x.field, "raw trtllm-serve worker arguments (frontend trtllm_serve)")
		}
	}
	if o := r.Observability; o != nil && o.Tachometer != nil && o.Tachometer.Enabled != nil && *o.Tachometer.Enabled {
		return r.unsupported("observability.tachometer.enabled", "Tachometer metric collection")
	}
	return nil
}

// fillServiceLines sets each Service.Line from the document, for errors.
func (r *Recipe) fillServiceLines(doc *yaml.Node) {
	list := deAlias(mapGet(doc, "services"))
	if list == nil || list.Kind != yaml.SequenceNode {
		return
	}
	for i := range r.Services {
		if i < len(list.Content) {
			r.Services[i].Line = deAlias(list.Content[i]).Line
		}
	}
}
