package runners

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

const fixture = "testdata/fixture.yaml"

func readFixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestFixtureReads: every field of the built fixture lands typed, with
// defaults where it sets none, '~' expanded and '@fabric' env resolved.
func TestFixtureReads(t *testing.T) {
	inv, err := Parse(fixture, readFixture(t), Options{Home: "/home/runner"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Labels) != 5 || !slices.Equal(inv.Order, []string{"alpha", "beta"}) {
		t.Fatalf("labels %d, clusters %v", len(inv.Labels), inv.Order)
	}
	a, b := inv.Clusters["alpha"], inv.Clusters["beta"]
	s := a.Slurm
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"gpus-per-node", a.GPUsPerNode, 8},
		{"available-cpu-dram-mib (YAML 1.1 underscores)", a.AvailableCPUDRAMMiB, 2063920},
		{"arch", b.Arch, AArch64},
		{"env fabric list", a.Env["UCX_NET_DEVICES"], "mlx5_0:1"},
		{"env fabric number", a.Env["MORI_RDMA_TC"], "104"},
		{"download-root", a.Models.DownloadRoot, "shared-models"},
		{"entry order", strings.Join(a.Models.EntryOrder, " "), "Model-A Model-A@local Model-B"},
		{"exclude", strings.Join(s.Exclude, ","), "node-3,node-4"},
		{"gres for 4", s.GresFor(4), "gpu:4"},
		{"cpu directives", s.CPUDirectives()["cpus-per-gpu"], "24"},
		{"salloc-args", strings.Join(s.SallocArgs, " "), "--mem=0 --overcommit"},
		{"home volume", s.Volumes["hf-hub-cache"].Path, "/home/runner/hf"},
		{"default visibility", s.Volumes["shared-models"].Visibility, Shared},
		{"squash lock timeout", s.Squash.LockTimeoutS, 600},
		{"squash default key style", s.Squash.KeyStyle, KeyUnderscore},
		{"multi-node-import default", s.Squash.MultiNodeImport, true},
		{"srt time limit", s.SrtSlurm.DefaultTimeLimit, "4:00:00"},
		{"preflight", s.SrtSlurm.Preflight, false},
		{"segment-directive", *s.SrtSlurm.SegmentDirective, false},
		{"host-setup env fabric keeps commas", s.SrtSlurm.HostSetup.Env["IBDEVICES"], "rdma0,rdma1"},
		{"cpu-port default", s.SrtSlurm.PowerTelemetry.CPUPort, 9405},
		{"power-exporter-port", s.SrtSlurm.PowerExporterPort, 9555},
		{"extra null", s.SrtSlurm.Extra["default_gpu_exporter"], nil},
		{"fabric gid", *s.SrtSlurm.Fabric.MooncakeGIDIndex, 3},
		{"beta defaults: no squash", b.Slurm.Squash == nil, true},
		{"beta defaults: no srt-slurm", b.Slurm.SrtSlurm == nil, true},
		{"line of slurm.partition", a.LineOf("slurm.partition"), lineOfText(t, readFixture(t), "      partition: batch")},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// lineOfText is the 1-based line where text first starts in data.
func lineOfText(t *testing.T, data []byte, text string) int {
	t.Helper()
	i := strings.Index(string(data), text)
	if i < 0 {
		t.Fatalf("%q is not in the document", text)
	}
	return strings.Count(string(data[:i]), "\n") + 1
}

// edit replaces the first old in the fixture by new (old must be there).
func edit(t *testing.T, old, new string) []byte {
	t.Helper()
	data := string(readFixture(t))
	if !strings.Contains(data, old) {
		t.Fatalf("fixture lacks %q", old)
	}
	return []byte(strings.Replace(data, old, new, 1))
}

// TestRefusals: each broken record is refused at the line (of the text
// `at`, in the edited file) and field to blame, saying which rule.
func TestRefusals(t *testing.T) {
	for _, tt := range []struct {
		name, old, new string
		at             string // text whose line the error names ("" : no line check)
		field, msg     string
	}{
		// Unknown keys, as extra="forbid" refuses them, at every level.
		{"unknown top-level key", "labels:\n", "hardware: {}\nlabels:\n", "hardware:", "hardware", "unknown key"},
		{"unknown cluster key", "    gpus-per-node: 4\n", "    gpus-per-node: 4\n    gpu-type: gb300\n", "gpu-type", "clusters.beta.gpu-type", "unknown key"},
		{"unknown slurm key", "      partitions: [p1, p2]\n", "      partitions: [p1, p2]\n      partiton: p3\n", "partiton", "clusters.beta.slurm.partiton", "unknown key"},
		{"unknown srt-slurm key", "        job-tag: alpha\n", "        job-tag: alpha\n        rest-url: http://x\n", "rest-url", "clusters.alpha.slurm.srt-slurm.rest-url", "unknown key"},
		{"unknown squash key", "        lock-timeout-s: 600\n", "        lock-timeout-s: 600\n        lock-timout-s: 60\n", "lock-timout-s", "clusters.alpha.slurm.squash.lock-timout-s", "unknown key"},
		{"unknown fabric key", "          mooncake-gid-index: 3\n", "          mooncake-gid-index: 3\n          rdma-device: [mlx5_0]\n", "rdma-device", "clusters.alpha.slurm.srt-slurm.fabric.rdma-device", "unknown key"},
		{"unknown volume key", "{path: /scratch, visibility: node-local}", "{path: /scratch, visibility: node-local, size: 1T}", "local: {path", "clusters.alpha.slurm.volumes.local.size", "unknown key"},
		{"unknown model entry key", "{root: shared-models, dir: b}", "{root: shared-models, dir: b, rev: main}", "Model-B:", "clusters.alpha.models.entries.Model-B.rev", "unknown key"},
		{"unknown host-setup key", "          nodes: all\n", "          nodes: all\n          user: root\n", "user: root", "clusters.alpha.slurm.srt-slurm.host-setup.user", "unknown key"},
		{"unknown power key", "{dcgm-port: 19401, cpu-source: acpi}", "{dcgm-port: 19401, cpu-source: acpi, gpu-port: 1}", "power-telemetry:", "clusters.alpha.slurm.srt-slurm.power-telemetry.gpu-port", "unknown key"},
		{"unknown framework-dir key", "{dir: /shared/trt, key-style: plus-strip-nvcr}", "{dir: /shared/trt, key-style: plus-strip-nvcr, lock-file: x}", "dynamo-trt:", "clusters.alpha.slurm.squash.framework-dirs.dynamo-trt.lock-file", "unknown key"},
		{"scheduler_settings is no key", "    scheduler: slurm\n    slurm:\n      partition: p1", "    scheduler: slurm\n    scheduler_settings: {}\n    slurm:\n      partition: p1", "scheduler_settings", "clusters.beta.scheduler_settings", "not a key"},
		// Keys set twice, and a field spelled both ways.
		{"duplicate key", "        job-tag: alpha\n", "        job-tag: alpha\n        job-tag: beta\n", "job-tag: beta", "clusters.alpha.slurm.srt-slurm.job-tag", "set twice"},
		{"duplicate label", "  partition:p2:\n", "  partition:p1:\n    - b_01\n  partition:p2:\n", "  partition:p1:\n    - b_01", "labels.partition:p1", "set twice"},
		{"alias and name both", "      cpus-per-gpu: 24\n", "      cpus-per-gpu: 24\n      cpus_per_gpu: 24\n", "cpus_per_gpu", "clusters.alpha.slurm.cpus-per-gpu", "set twice"},
		// Types and values.
		{"int as words", "    gpus-per-node: 4\n", "    gpus-per-node: four\n", "gpus-per-node: four", "clusters.beta.gpus-per-node", "must be an integer"},
		{"int not positive", "    gpus-per-node: 4\n", "    gpus-per-node: 0\n", "gpus-per-node: 0", "clusters.beta.gpus-per-node", "greater than 0"},
		{"arch not allowed", "    arch: aarch64\n", "    arch: arm64\n", "arch: arm64", "clusters.beta.arch", "not one of x86_64, aarch64"},
		{"bool not a bool", "      exclusive: false\n", "      exclusive: sometimes\n", "exclusive: sometimes", "clusters.beta.slurm.exclusive", "true or false"},
		{"sexagesimal time limit", `default-time-limit: "4:00:00"`, `default-time-limit: 4:00:00`, "default-time-limit", "clusters.alpha.slurm.srt-slurm.default-time-limit", "YAML 1.1"},
		{"time limit pattern", `default-time-limit: "4:00:00"`, `default-time-limit: "4h"`, "default-time-limit", "clusters.alpha.slurm.srt-slurm.default-time-limit", "H:MM:SS"},
		{"number where a string is", "      partition: p1\n", "      partition: 12\n", "partition: 12", "clusters.beta.slurm.partition", "must be a string"},
		{"port out of range", "dcgm-port: 19401", "dcgm-port: 70000", "power-telemetry:", "clusters.alpha.slurm.srt-slurm.power-telemetry.dcgm-port", "1..65535"},
		{"both cpu requests", "      cpus-per-gpu: 24\n", "      cpus-per-gpu: 24\n      cpus-per-task: 8\n", "    slurm:\n      partition: batch", "clusters.alpha.slurm", "not both"},
		{"gres without placeholder", `gres: "gpu:{gpus}"`, `gres: "gpu:8"`, "gres:", "clusters.alpha.slurm.gres", "must contain the {gpus}"},
		{"gres other field", `gres: "gpu:{gpus}"`, `gres: "gpu:{n}"`, "gres:", "clusters.alpha.slurm.gres", "only use the {gpus}"},
		{"gres positional", `gres: "gpu:{gpus}"`, `gres: "gpu:{}"`, "gres:", "clusters.alpha.slurm.gres", "only use the {gpus}"},
		{"short option", "srun-args: [--container-remap-root]", "srun-args: [-x]", "srun-args", "clusters.alpha.slurm.srun-args[0]", "long option"},
		{"bare --", "salloc-args: [--mem=0, --overcommit]", "salloc-args: [--mem=0, --]", "salloc-args", "clusters.alpha.slurm.salloc-args[1]", "long option"},
		{"visibility", "visibility: node-local}", "visibility: local}", "local: {path", "clusters.alpha.slurm.volumes.local.visibility", "not one of shared, node-local"},
		{"import mode", "        import: compute\n", "        import: lazy\n", "import: lazy", "clusters.alpha.slurm.squash.import", "not one of submit-host"},
		{"key style", "key-style: plus-strip-nvcr}", "key-style: dash}", "dynamo-trt:", "clusters.alpha.slurm.squash.framework-dirs.dynamo-trt.key-style", "not one of underscore"},
		{"helper image", "          nginx: {key-style: plus", "          haproxy: {key-style: plus", "haproxy", "clusters.alpha.slurm.squash.helper-dirs.haproxy", "not a helper image"},
		{"relative volume path", "{path: /shared/models}", "{path: shared/models}", "shared-models: {path", "clusters.alpha.slurm.volumes.shared-models.path", "must be absolute"},
		{"escaping model dir", "{root: shared-models, dir: b}", "{root: shared-models, dir: ../b}", "Model-B:", "clusters.alpha.models.entries.Model-B.dir", "relative to its root"},
		{"model on unknown volume", "{root: shared-models, dir: b}", "{root: nfs, dir: b}", "Model-B:", "clusters.alpha.models.entries.Model-B.root", "unknown volume"},
		{"node-local download root", "download-root: shared-models", "download-root: local", "download-root", "clusters.alpha.models.download-root", "must be a shared volume"},
		{"mount of unknown volume", "volume-mounts: {hf-hub-cache: /hf_hub_cache}", "volume-mounts: {hf-cache: /hf_hub_cache}", "volume-mounts", "clusters.alpha.slurm.srt-slurm.volume-mounts", "unknown volumes: hf-cache"},
		{"agentic mount of unknown volume", "agentic-volume-mounts: {shared-models: /models}", "agentic-volume-mounts: {aiperf: /models}", "agentic-volume-mounts", "clusters.alpha.slurm.srt-slurm.agentic-volume-mounts", "unknown volumes: aiperf"},
		{"absolute hook", "script: hooks/alpha/setup.sh", "script: /opt/setup.sh", "script:", "clusters.alpha.slurm.srt-slurm.host-setup.script", "repository-relative"},
		{"env comma", `PLAIN: "1"`, `PLAIN: "a,b"`, "    env:\n", "clusters.alpha.env", "cannot contain ','"},
		{"env fabric list of two", "ucx-net-devices: [mlx5_0:1]", "ucx-net-devices: [mlx5_0:1, mlx5_1:1]", "    env:\n", "clusters.alpha.env", "cannot contain ','"},
		{"env fabric unset", `MORI_RDMA_TC: "@fabric.mori-rdma-tc"`, `MORI_RDMA_TC: "@fabric.mori-io-tc"`, "MORI_RDMA_TC", "clusters.alpha.env.MORI_RDMA_TC", "sets no srt-slurm.fabric.mori-io-tc"},
		{"env fabric embedded", `MORI_RDMA_TC: "@fabric.mori-rdma-tc"`, `MORI_RDMA_TC: "tc=@fabric.mori-rdma-tc"`, "MORI_RDMA_TC", "clusters.alpha.env.MORI_RDMA_TC", "not a whole '@fabric.<name>' value"},
		{"host-setup env fabric unset", `IBDEVICES: "@fabric.ib-devices"`, `IBDEVICES: "@fabric.nccl-ib-hca"`, "IBDEVICES:", "clusters.alpha.slurm.srt-slurm.host-setup.env.IBDEVICES", "sets no srt-slurm.fabric.nccl-ib-hca"},
		{"fabric list not a list", "ib-devices: [rdma0, rdma1]", "ib-devices: rdma0", "ib-devices: rdma0", "clusters.alpha.slurm.srt-slurm.fabric.ib-devices", "must be a list"},
		{"unknown scheduler", "    scheduler: slurm\n    slurm:\n      partition: p1", "    scheduler: pbs\n    slurm:\n      partition: p1", "scheduler: pbs", "clusters.beta.scheduler", "must be one of [slurm]"},
		{"scheduler record missing", "    scheduler: slurm\n    slurm:\n      partition: p1\n      partitions: [p1, p2]\n      exclusive: false\n", "    scheduler: slurm\n", "  beta:", "clusters.beta", `needs its "slurm" record`},
		{"required field", "    arch: aarch64\n", "", "  beta:", "clusters.beta", "arch: required"},
		{"network-interface required", "        network-interface: eth0\n", "", "      srt-slurm:", "clusters.alpha.slurm.srt-slurm", "network-interface: required"},
		{"submit-host into node-local", "        import: compute\n", "        import: compute\n        visibility: node-local\n", "      squash:", "clusters.alpha.slurm.squash", ""},
		{"partition name", "partitions: [p1, p2]", "partitions: [p1, 'p 2']", "partitions:", "clusters.beta.slurm.partitions[1]", "not a partition name"},
		{"empty label", "  partition:p2:\n    - b_01\n", "  partition:p2: []\n", "partition:p2", "labels.partition:p2", "at least one runner"},
		{"merge key", "  beta:\n    gpus-per-node: 4\n", "  beta:\n    <<: {gpus-per-node: 4}\n", "<<:", "clusters.beta", "merge keys"},
		{"second document", "labels:\n", "labels:\n", "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := edit(t, tt.old, tt.new)
			if tt.name == "second document" {
				data = append(data, []byte("---\nlabels: {}\n")...)
				tt.msg = "second YAML document"
			}
			if tt.name == "submit-host into node-local" {
				// Only a framework location imports from the submit host.
				data = []byte(strings.Replace(string(data), "import: unchecked", "import: submit-host", 1))
				tt.msg = "submit-host import cannot populate node-local"
			}
			_, err := Parse(fixture, data, Options{Home: "/home/runner"})
			var ye *yamltree.Error
			if !errors.As(err, &ye) {
				t.Fatalf("got %v, want a located error", err)
			}
			if !strings.Contains(ye.Msg, tt.msg) || ye.Field != tt.field || ye.File != fixture {
				t.Errorf("got %v\nwant field %q, message with %q", err, tt.field, tt.msg)
			}
			if tt.at != "" {
				if want := lineOfText(t, data, tt.at); ye.Line != want {
					t.Errorf("line %d, want %d (%q): %v", ye.Line, want, tt.at, err)
				}
			}
		})
	}
}
