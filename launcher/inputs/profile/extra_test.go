package profile

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// extraRecord writes a runners.yaml of one cluster "c" (runner r_00)
// whose slurm sub-record gets slurm's lines, its srt-slurm srt's, and
// srt-slurm.extra the lines of extra (each indented under it).
func extraRecord(t *testing.T, slurm, srt, extra string) string {
	t.Helper()
	indent := func(s, pad string) string {
		if s == "" {
			return ""
		}
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = pad + l
		}
		return strings.Join(lines, "\n") + "\n"
	}
	text := "labels:\n  cluster:c:\n    - r_00\nclusters:\n  c:\n    gpus-per-node: 8\n    arch: x86_64\n" +
		"    models:\n      entries: {}\n    scheduler: slurm\n    slurm:\n      partition: batch\n      exclusive: true\n" +
		"      volumes:\n        cache: {path: /shared/cache}\n" + indent(slurm, "      ") +
		"      srt-slurm:\n        network-interface: \"\"\n" + indent(srt, "        ")
	if extra != "" {
		text += "        extra:\n" + indent(extra, "          ")
	}
	path := filepath.Join(t.TempDir(), "runners.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadExtra(t *testing.T, path string, o RunnersOptions) (*Profile, error) {
	t.Helper()
	o.Runners, o.Runner, o.Home = path, "r_00", "/home/runner"
	if o.DefaultRunsDir == "" {
		o.DefaultRunsDir = "/ws/slurmbench-runs"
	}
	return LoadRunners(context.Background(), o)
}

// TestRecordExtraKeys: each srtslurm.yaml key a record's srt-slurm.extra
// may set lands where srtctl applies it, and its Source names the extra
// line it came from.
func TestRecordExtraKeys(t *testing.T) {
	for _, c := range []struct {
		name              string
		slurm, srt, extra string
		get               func(p *Profile) any
		want              any
		key, at           string // the Source key, and the text on the line it names
	}{
		{name: "default_gpu_exporter image", extra: "default_gpu_exporter:\n  container_image: nvcr.io#nvidia/k8s/dcgm-exporter:4.6.0\n  port: 9402\n  command: \"dcgm-exporter --address :{port} -f /configs/x.csv\"",
			get: func(p *Profile) any { return p.Telemetry.ExporterImage }, want: "nvcr.io#nvidia/k8s/dcgm-exporter:4.6.0", key: "telemetry.exporter_image", at: "container_image:"},
		{name: "default_gpu_exporter port over power-exporter-port", srt: "power-exporter-port: 19401", extra: "default_gpu_exporter: {container_image: e, port: 9402}",
			get: func(p *Profile) any { return p.Telemetry.Port }, want: 9402, key: "telemetry.port", at: "default_gpu_exporter:"},
		{name: "default_gpu_exporter command", extra: "default_gpu_exporter:\n  container_image: e\n  port: \"9401\"\n  command: \"dcgm-exporter -f /configs/x.csv\"\n  kind: dcgm",
			get: func(p *Profile) any { return p.Telemetry.ExporterCommand }, want: "dcgm-exporter -f /configs/x.csv", key: "telemetry.exporter_command", at: "command:"},
		{name: "default_gpu_exporter null", srt: "power-exporter-port: 19401", extra: "default_gpu_exporter: null",
			get: func(p *Profile) any { return p.Telemetry.ExporterImage + "|" + p.Telemetry.ExporterCommand }, want: "|", key: "telemetry.exporter_image", at: "default_gpu_exporter: null"},
		{name: "visible_devices_env", extra: "visible_devices_env: ROCR_VISIBLE_DEVICES",
			get: func(p *Profile) any { return p.Defaults.VisibleDevices() }, want: "ROCR_VISIBLE_DEVICES", key: "defaults.visible_devices_env", at: "visible_devices_env"},
		{name: "default_bash_preamble", extra: "default_bash_preamble: |-\n  export A=1\n  ulimit -n 4096",
			get: func(p *Profile) any { return p.Defaults.BashPreamble }, want: "export A=1\nulimit -n 4096", key: "defaults.bash_preamble", at: "default_bash_preamble"},
		{name: "nginx_raise_ulimit", extra: "nginx_raise_ulimit: false",
			get: func(p *Profile) any { return p.Defaults.NginxRaiseUlimit != nil && !*p.Defaults.NginxRaiseUlimit }, want: true, key: "defaults.nginx_raise_ulimit", at: "nginx_raise_ulimit"},
		{name: "default_gpu_type", extra: "default_gpu_type: gb200",
			get: func(p *Profile) any { return p.Defaults.GPUType }, want: "gb200", key: "defaults.gpu_type", at: "default_gpu_type"},
		{name: "default_host_setup", extra: "default_host_setup:\n  commands: [\"sudo -n nvidia-smi -lgc 1980\", \"true\"]\n  teardown: [\"sudo -n nvidia-smi -rgc\"]\n  nodes: workers\n  ignore_failure: yes\n  timeout_seconds: 60",
			get:  func(p *Profile) any { return *p.HostSetup },
			want: HostSetup{Commands: []string{"sudo -n nvidia-smi -lgc 1980", "true"}, Teardown: []string{"sudo -n nvidia-smi -rgc"}, Nodes: "workers", IgnoreFailure: true, TimeoutSeconds: 60},
			key:  "host_setup", at: "default_host_setup:"},
		{name: "default_sbatch_directives", extra: "default_sbatch_directives: {qos: high, reservation: bench}",
			get: func(p *Profile) any { return p.Slurm.Directives["qos"] + "," + p.Slurm.Directives["reservation"] }, want: "high,bench", key: "slurm.directives.qos", at: "default_sbatch_directives"},
		{name: "default_mounts", extra: "default_mounts:\n  /dev/kfd: /dev/kfd",
			get: func(p *Profile) any { return strings.Join(p.Container.Mounts, " ") }, want: "/dev/kfd:/dev/kfd", key: "container.mounts", at: "default_mounts"},
		{name: "model_paths", extra: "model_paths: {dsr1: /models/dsr1}",
			get: func(p *Profile) any { return p.Models["dsr1"] }, want: "/models/dsr1", key: "models.dsr1", at: "model_paths"},
		{name: "default_account", extra: "default_account: bench",
			get: func(p *Profile) any { return p.Slurm.Account }, want: "bench", key: "slurm.account", at: "default_account"},
		{name: "output_dir", extra: "output_dir: /shared/out",
			get: func(p *Profile) any { return p.Paths.RunsDir }, want: "/shared/out/slurmbench-runs", key: "paths.runs_dir", at: "output_dir"},
		{name: "output_dir under a shared-run-root", srt: "shared-run-root: /shared/runs", extra: "output_dir: /shared/out",
			get: func(p *Profile) any { return p.Paths.RunsDir }, want: "/shared/runs/slurmbench-runs", key: "paths.runs_dir", at: "shared-run-root"},
		{name: "use_gpus_per_node_directive", extra: "use_gpus_per_node_directive: false",
			get: func(p *Profile) any { return *p.Slurm.GPUsPerNodeDirective }, want: false, key: "slurm.gpus_per_node_directive", at: "use_gpus_per_node_directive"},
		{name: "use_segment_sbatch_directive", extra: "use_segment_sbatch_directive: \"off\"",
			get: func(p *Profile) any { return *p.Slurm.SegmentDirective }, want: false, key: "slurm.segment_directive", at: "use_segment_sbatch_directive"},
		{name: "use_het_jobs false", extra: "use_het_jobs: false",
			get: func(p *Profile) any { return p.Slurm.Partition }, want: "batch", key: "slurm.partition", at: "partition: batch"},
		{name: "cloud shown as ignored", extra: "cloud: {provider: none}",
			get: func(p *Profile) any { return strings.Contains(p.Sources["ignored.cloud"].Note, "never reads") }, want: true, key: "ignored.cloud", at: "cloud:"},
		{name: "reporting shown as ignored", extra: "reporting:\n  status: {endpoint: \"http://status:8080\"}",
			get: func(p *Profile) any { return strings.HasPrefix(p.Sources["ignored.reporting"].Note, "does not apply") }, want: true, key: "ignored.reporting", at: "reporting:"},
		{name: "InferenceX's default_health_check", extra: "default_gpu_type: null",
			get: func(p *Profile) any { return [2]int{p.Defaults.HealthMaxAttempts, p.Defaults.HealthIntervalSeconds} }, want: [2]int{720, 10}, key: "defaults.health_max_attempts", at: "  c:"},
		{name: "a null optional key is unset", extra: "default_gpu_type: null\ndefault_bash_preamble: null",
			get: func(p *Profile) any { return p.Defaults.GPUType + p.Defaults.BashPreamble }, want: "", key: "slurm.partition", at: "partition: batch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := extraRecord(t, c.slurm, c.srt, c.extra)
			p, err := loadExtra(t, path, RunnersOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.get(p); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
			src, ok := p.SourceOf(c.key)
			if want := lineIn(t, path, c.at); !ok || src.File != path || src.Line != want {
				t.Errorf("%s: source %v, want %s:%d", c.key, src, path, want)
			}
		})
	}
}

// TestRecordExtraRefused: a key srtslurm.yaml does not define, one
// InferenceX's launcher renders itself for the record, a value of the
// wrong type or one slurmbench cannot honour is refused, naming the file,
// the line of the offending key and the field.
func TestRecordExtraRefused(t *testing.T) {
	for _, c := range []struct {
		name              string
		slurm, srt, extra string
		o                 RunnersOptions
		at, field, msg    string
	}{
		{name: "unknown key", extra: "default_gpu_exporters: {container_image: e, port: 1}",
			at: "default_gpu_exporters", field: "extra.default_gpu_exporters", msg: "is not an srtslurm.yaml key"},
		{name: "always rendered", extra: "containers: {a: b}", at: "containers:", field: "extra.containers", msg: "writes containers itself"},
		{name: "rendered from the record's account", slurm: "account: acct", extra: "default_account: other",
			at: "default_account", field: "extra.default_account", msg: "writes default_account itself"},
		{name: "rendered from the record's host-setup", srt: "host-setup: {script: hooks/setup.sh}", extra: "default_host_setup: {commands: [\"true\"]}",
			at: "default_host_setup", field: "extra.default_host_setup", msg: "writes default_host_setup itself"},
		{name: "rendered from the record's mounts", srt: "mounts: {/dev/kfd: /dev/kfd}", extra: "default_mounts: {/a: /b}",
			at: "default_mounts", field: "extra.default_mounts", msg: "writes default_mounts itself"},
		{name: "rendered for a single-node job", extra: "use_segment_sbatch_directive: true", o: RunnersOptions{SingleNode: true},
			at: "use_segment_sbatch_directive", field: "extra.use_segment_sbatch_directive", msg: "false for a single-node job"},
		{name: "rendered from the record's cpus", slurm: "cpus-per-task: 64", extra: "default_sbatch_directives: {qos: high}",
			at: "default_sbatch_directives", field: "extra.default_sbatch_directives", msg: "writes default_sbatch_directives itself"},
		{name: "a string that is a number", extra: "visible_devices_env: 5", at: "visible_devices_env", field: "extra.visible_devices_env", msg: "must be a string, got int 5"},
		{name: "not an environment variable", extra: "visible_devices_env: ROCR-DEVICES", at: "visible_devices_env", field: "extra.visible_devices_env", msg: "is not an environment variable name"},
		{name: "null where srtctl refuses it", extra: "use_het_jobs: null", at: "use_het_jobs", field: "extra.use_het_jobs", msg: "may not be null"},
		{name: "het jobs", extra: "use_het_jobs: true", at: "use_het_jobs", field: "extra.use_het_jobs", msg: "never heterogeneous"},
		{name: "not a boolean", extra: "nginx_raise_ulimit: maybe", at: "nginx_raise_ulimit", field: "extra.nginx_raise_ulimit", msg: "must be a boolean"},
		{name: "exporter kind", extra: "default_gpu_exporter:\n  container_image: e\n  port: 9401\n  kind: custom",
			at: "kind: custom", field: "extra.default_gpu_exporter.kind", msg: "kind dcgm"},
		{name: "exporter binary", extra: "default_gpu_exporter:\n  container_image: \"\"\n  port: 9401\n  binary: bin/exporter",
			at: "binary:", field: "extra.default_gpu_exporter.binary", msg: "not supported"},
		{name: "exporter unknown key", extra: "default_gpu_exporter:\n  container_image: e\n  port: 9401\n  commnd: x",
			at: "commnd:", field: "extra.default_gpu_exporter.commnd", msg: "unknown key"},
		{name: "exporter without a port", extra: "default_gpu_exporter: {container_image: e}",
			at: "default_gpu_exporter", field: "extra.default_gpu_exporter", msg: "port: required"},
		{name: "exporter port out of range", extra: "default_gpu_exporter:\n  container_image: e\n  port: 70000",
			at: "port: 70000", field: "extra.default_gpu_exporter.port", msg: "not in 1..65535"},
		{name: "exporter port a boolean", extra: "default_gpu_exporter:\n  container_image: e\n  port: true",
			at: "port: true", field: "extra.default_gpu_exporter.port", msg: "must be an integer"},
		{name: "host setup unknown key", extra: "default_host_setup:\n  commands: [\"true\"]\n  node: all",
			at: "node: all", field: "extra.default_host_setup.node", msg: "unknown key"},
		{name: "host setup nodes", extra: "default_host_setup:\n  nodes: head",
			at: "nodes: head", field: "extra.default_host_setup.nodes", msg: "not all or workers"},
		{name: "host setup commands", extra: "default_host_setup:\n  commands: \"true\"",
			at: "commands:", field: "extra.default_host_setup.commands", msg: "list of strings"},
		{name: "directive name", extra: "default_sbatch_directives: {\"--qos\": high}",
			at: "default_sbatch_directives", field: "extra.default_sbatch_directives", msg: "not an sbatch option name"},
		{name: "directive value", extra: "default_sbatch_directives:\n  segment: 2",
			at: "segment: 2", field: "extra.default_sbatch_directives.segment", msg: "must be a string"},
		{name: "mounts not a mapping", extra: "default_mounts: [/a]", at: "default_mounts", field: "extra.default_mounts", msg: "must be a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := extraRecord(t, c.slurm, c.srt, c.extra)
			_, err := loadExtra(t, path, c.o)
			if err == nil {
				t.Fatal("accepted")
			}
			loc := path + ":" + strconv.Itoa(lineIn(t, path, c.at)) + ": clusters.c.slurm.srt-slurm." + c.field + ": "
			if !strings.Contains(err.Error(), loc) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q, want %q ... %q", err, loc, c.msg)
			}
		})
	}
}

// TestRecordSegmentAndGres: srtctl asks --segment unless srtslurm.yaml
// turns it off, which InferenceX does for a single-node job and from
// segment-directive; GPUs go by GRES only where gpus-per-node-directive is
// false (config.py@eacb6075 render).
func TestRecordSegmentAndGres(t *testing.T) {
	for _, c := range []struct {
		name       string
		slurm, srt string
		o          RunnersOptions
		segment    bool
		gpn        string // slurm.gpus_per_node_directive: "", "true", "false"
		gres       string
	}{
		{name: "defaults", segment: true},
		{name: "segment off", srt: "segment-directive: false"},
		{name: "single-node", srt: "segment-directive: true", o: RunnersOptions{SingleNode: true}},
		{name: "gres with the directive on", slurm: "gres: \"gpu:{gpus}\"", srt: "gpus-per-node-directive: true", segment: true, gpn: "true"},
		{name: "gres without the directive", slurm: "gres: \"gpu:{gpus}\"", segment: true},
		{name: "gres with the directive off", slurm: "gres: \"gpu:{gpus}\"", srt: "gpus-per-node-directive: false", segment: true, gpn: "false", gres: "gpu:8"},
		{name: "directive off and no gres", srt: "gpus-per-node-directive: false", segment: true, gpn: "false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := loadExtra(t, extraRecord(t, c.slurm, c.srt, ""), c.o)
			if err != nil {
				t.Fatal(err)
			}
			gpn := ""
			if d := p.Slurm.GPUsPerNodeDirective; d != nil {
				gpn = map[bool]string{true: "true", false: "false"}[*d]
			}
			if got := p.Slurm.SegmentDirective != nil && *p.Slurm.SegmentDirective; got != c.segment || gpn != c.gpn || p.Slurm.Directives["gres"] != c.gres {
				t.Errorf("segment %v gpus-per-node %q gres %q, want %v %q %q", got, gpn, p.Slurm.Directives["gres"], c.segment, c.gpn, c.gres)
			}
		})
	}
}

// TestTileRTAliases: a TileRT point's job names its two images
// tilert-decode (IMAGE, the framework's squash location) and
// tilert-prefill (PREFILL_IMAGE, the cache's own), as InferenceX's
// write_lane_config does; without PREFILL_IMAGE it is refused; any other
// framework has neither alias.
func TestTileRTAliases(t *testing.T) {
	slurm := "squash:\n  dir: /sq\n  import: pre-staged\n  framework-dirs:\n    tilert: {dir: /sq/tilert}"
	path := extraRecord(t, slurm, "", "")
	for _, c := range []struct {
		name                 string
		o                    RunnersOptions
		decode, prefill, err string
	}{
		{name: "tilert", o: RunnersOptions{Framework: "tilert", Image: "rocm/tilert:decode", PrefillImage: "rocm/tilert:prefill"},
			decode: "/sq/tilert/rocm_tilert_decode.sqsh", prefill: "/sq/rocm_tilert_prefill.sqsh"},
		{name: "no prefill image", o: RunnersOptions{Framework: "tilert", Image: "rocm/tilert:decode"}, err: "PREFILL_IMAGE"},
		{name: "another framework", o: RunnersOptions{Framework: "sglang", Image: "rocm/sglang:1", PrefillImage: "rocm/tilert:prefill"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := loadExtra(t, path, c.o)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and %q", err, path, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Containers[TileRTDecodeAlias] != c.decode || p.Containers[TileRTPrefillAlias] != c.prefill {
				t.Errorf("tilert-decode %q tilert-prefill %q, want %q %q", p.Containers[TileRTDecodeAlias], p.Containers[TileRTPrefillAlias], c.decode, c.prefill)
			}
			if c.prefill != "" {
				if src, ok := p.SourceOf("containers." + TileRTPrefillAlias); !ok || src.File != "PREFILL_IMAGE" {
					t.Errorf("tilert-prefill source %v", src)
				}
			}
		})
	}
}

// TestSampleExtra: the sample's records' extra (default_gpu_exporter on
// every NVIDIA cluster, null and ROCm settings on the AMD ones) all load
// and land where srtctl applies them.
func TestSampleExtra(t *testing.T) {
	path := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e", "configs", "runners.yaml")
	for _, c := range []struct {
		cluster, image, command, visible, preamble string
		port                                       int
	}{
		{cluster: "gb300-nv", image: "nvcr.io#nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless", port: 9402,
			command: "dcgm-exporter --collect-interval=1000 --address :{port} -f /configs/dcgm-counters-noprof.csv", visible: "CUDA_VISIBLE_DEVICES"},
		{cluster: "mi355x-amds", visible: "ROCR_VISIBLE_DEVICES"},
		{cluster: "mi325x-amd", image: SrtctlDefaultGPUExporterImage, port: SrtctlDefaultGPUExporterPort, visible: "ROCR_VISIBLE_DEVICES",
			preamble: "export XDG_CACHE_HOME=\"/tmp/xdg-cache-$SLURM_JOB_ID\"\nexport TRITON_CACHE_DIR=\"/tmp/triton-cache-$SLURM_JOB_ID\""},
	} {
		p, err := LoadRunners(context.Background(), RunnersOptions{Runners: path, Cluster: c.cluster, Home: "/home/runner", DefaultRunsDir: "/ws/slurmbench-runs"})
		if err != nil {
			t.Errorf("%s: %v", c.cluster, err)
			continue
		}
		tl := p.Telemetry
		if tl.ExporterImage != c.image || tl.ExporterCommand != c.command || (c.image != "" && tl.Port != c.port) ||
			p.Defaults.VisibleDevices() != c.visible || p.Defaults.BashPreamble != c.preamble {
			t.Errorf("%s: telemetry %+v, defaults %+v", c.cluster, tl, p.Defaults)
		}
	}
}

// TestExtendsOverExtra: a TOML profile that extends a record overrides
// what the record's extra gave, key by key, and names itself as the
// source; what it leaves keeps the extra line.
func TestExtendsOverExtra(t *testing.T) {
	runners := extraRecord(t, "", "", "visible_devices_env: ROCR_VISIBLE_DEVICES\ndefault_gpu_exporter: {container_image: e, port: 9402, command: \"x -p {port}\"}")
	path := filepath.Join(t.TempDir(), "p.toml")
	toml := "extends = { runners = \"" + runners + "\", runner = \"r_00\" }\n[paths]\nruns_dir = \"/r\"\n[defaults]\nvisible_devices_env = \"CUDA_VISIBLE_DEVICES\"\n[telemetry]\nport = 9555\n"
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadExtending(context.Background(), path, RunnersOptions{Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	self := realDir(t, filepath.Dir(path))
	for _, c := range []struct {
		key       string
		got, want any
		file      string
	}{
		{"defaults.visible_devices_env", p.Defaults.VisibleDevicesEnv, "CUDA_VISIBLE_DEVICES", filepath.Join(self, "p.toml")},
		{"telemetry.port", p.Telemetry.Port, 9555, filepath.Join(self, "p.toml")},
		{"telemetry.exporter_image", p.Telemetry.ExporterImage, "e", runners},
		{"telemetry.exporter_command", p.Telemetry.ExporterCommand, "x -p {port}", runners},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.key, c.got, c.want)
		}
		if src, ok := p.SourceOf(c.key); !ok || src.File != c.file {
			t.Errorf("%s: source %v, want %s", c.key, src, c.file)
		}
	}
}

// TestSrtslurmKeysDocumented: every srtslurm.yaml key the reader knows is
// a row of docs/profile.md's "srtslurm.yaml keys" table, which says where
// it lands or why it does not apply.
func TestSrtslurmKeysDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "profile.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "**srtslurm.yaml keys.**")
	if start < 0 {
		t.Fatal("docs/profile.md has no srtslurm.yaml keys section")
	}
	end := strings.Index(text[start:], "\n\n**")
	if end < 0 {
		end = len(text) - start
	}
	var rows []string
	for _, l := range strings.Split(text[start:start+end], "\n") {
		if strings.HasPrefix(l, "| `") {
			first, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " |")
			rows = append(rows, first)
		}
	}
	for _, k := range srtslurmKeys {
		found := false
		for _, r := range rows {
			if strings.Contains(r, "`"+k.name+"`") {
				found = true
			}
		}
		if !found {
			t.Errorf("srtslurm.yaml key %s has no row in docs/profile.md's table", k.name)
		}
	}
}
