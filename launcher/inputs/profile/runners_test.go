package profile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// runnersFixture is the runners package's built fixture (two clusters,
// every record field set; beta's runners pick partitions by label).
func runnersFixture(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "runners", "testdata", "fixture.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func lineIn(t *testing.T, path, text string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), text)
	if i < 0 {
		t.Fatalf("%s lacks %q", path, text)
	}
	return strings.Count(string(data[:i]), "\n") + 1
}

// TestFromRecord: every profile value a record gives, and the line and
// field each Source names.
func TestFromRecord(t *testing.T) {
	file := runnersFixture(t)
	p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "a_00", Home: "/home/runner",
		Image: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.5.1", Framework: "dynamo-sglang", ModelPrefix: "dsr1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key       string
		got, want any
		at        string // the fixture text whose line the key's Source names
	}{
		{"cluster", p.Cluster, "alpha", "    - a_00\n    - a_01\n  cluster:beta"},
		{"slurm.partition", p.Slurm.Partition, "batch", "      partition: batch"},
		{"slurm.account", p.Slurm.Account, "bench", "      account: bench"},
		{"slurm.exclusive", p.Slurm.Exclusive, true, "      exclusive: true"},
		{"slurm.gpus_per_node", p.Slurm.GPUsPerNode, 8, "    gpus-per-node: 8"},
		{"slurm.compute_arch", p.Slurm.ComputeArch, "x86_64", "    arch: x86_64"},
		{"slurm.transport", p.Slurm.Transport, TransportCLI, "  alpha:"},
		{"slurm.time_limit", p.Slurm.TimeLimit, "4:00:00", "        default-time-limit"},
		{"slurm.directives.exclude", p.Slurm.Directives["exclude"], "node-3,node-4", "      exclude:"},
		{"slurm.gres_template", p.Slurm.GresTemplate, "gpu:{gpus}", "      gres:"},
		{"slurm.gpus_per_node_directive", *p.Slurm.GPUsPerNodeDirective, true, "        gpus-per-node-directive"},
		{"slurm.segment_directive", *p.Slurm.SegmentDirective, false, "        segment-directive"},
		{"telemetry.exporter_image", p.Telemetry.ExporterImage, "", "        extra:"},
		{"defaults.visible_devices_env", p.Defaults.VisibleDevicesEnv, "CUDA_VISIBLE_DEVICES", "        extra:"},
		{"slurm.directives.cpus-per-gpu", p.Slurm.Directives["cpus-per-gpu"], "24", "      cpus-per-gpu"},
		{"slurm.directives.mem", p.Slurm.Directives["mem"], "0", "      salloc-args"},
		{"slurm.directives.overcommit", p.Slurm.Directives["overcommit"], "", "      salloc-args"},
		{"slurm.srun_args", strings.Join(p.Slurm.SrunArgs, " "), "--container-remap-root", "      srun-args"},
		{"paths.runs_dir", p.Paths.RunsDir, "/shared/runs/slurmbench-runs", "        shared-run-root"},
		{"paths.squash_dir", p.Paths.SquashDir, "/shared/squash", "        dir: /shared/squash"},
		{"models.Model-A@local", p.Models["Model-A@local"], "/scratch/copies/Model-A", "        Model-A@local"},
		{"containers.dynamo-sglang", p.Containers["dynamo-sglang"], "/shared/squash/nvcr.io+nvidia+ai-dynamo+sglang-runtime+0.5.1.sqsh", "        container-aliases"},
		{"containers.nginx-sqsh", p.Containers["nginx-sqsh"], "/shared/squash/nginx+1.27.4.sqsh", "        nginx-aliases"},
		{"container.mounts", strings.Join(p.Container.Mounts, " "), "/home/runner/hf:/hf_hub_cache /dev/infiniband:/dev/infiniband", "      srt-slurm:"},
		{"env.set.UCX_NET_DEVICES", p.Env.Set["UCX_NET_DEVICES"], "mlx5_0:1", "      UCX_NET_DEVICES"},
		{"env.set.ENROOT_ROOTFS_WRITABLE", p.Env.Set["ENROOT_ROOTFS_WRITABLE"], "1", "        env: {ENROOT"},
		{"telemetry.port", p.Telemetry.Port, 9555, "        power-exporter-port"},
		{"fabric", p.Fabric.Rendered()["ib-devices"], "rdma0,rdma1", "        fabric:"},
		{"dram", p.DRAM, DRAM{AvailableMiB: 2063920, GPUsPerNode: 8}, "    available-cpu-dram-mib"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.key, c.got, c.want)
		}
		src, ok := p.SourceOf(c.key)
		if want := lineIn(t, file, c.at); !ok || src.File != file || src.Line != want {
			t.Errorf("%s: source %v, want %s:%d", c.key, src, file, want)
		}
	}
	// The framework's squash location (dynamo-sglang imports unchecked)
	// makes the main image's alias its staged file; hf:<model> is the
	// node-local checkpoint.
	if dir, ok := p.ModelDir("hf:org/Model-A"); !ok || dir != "/scratch/copies/Model-A" {
		t.Errorf("ModelDir(hf:org/Model-A) = %q, %v", dir, ok)
	}
	if _, ok := p.ModelDir("hf:org/Unstaged"); ok {
		t.Error("an unstaged model has a ModelDir")
	}
	if p.Record == nil || p.Record.Runner != "a_00" {
		t.Errorf("Record: %+v", p.Record)
	}
	// Another framework takes the cache's policy: compute imports, the
	// alias the reference slurmbench imports itself.
	p, err = LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "a_01", Home: "/h", Image: "lmsysorg/sglang:v0.5", Framework: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	if src, _ := p.SourceOf("container.import_on"); p.Container.ImportOn != "compute" || src.Line != lineIn(t, file, "        import: compute") || p.Containers["latest"] != "lmsysorg/sglang:v0.5" {
		t.Errorf("import_on %q from %v, latest = %q", p.Container.ImportOn, src, p.Containers["latest"])
	}
}

// TestFromRecordPartitionAndDefaults: a partition chosen by the runner's
// label names that label as its source; a record without a squash cache,
// a shared run root or power telemetry leaves slurmbench's defaults.
func TestFromRecordPartitionAndDefaults(t *testing.T) {
	file := runnersFixture(t)
	p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "b_01", Home: "/h", DefaultRunsDir: "/ws/slurmbench-runs"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Slurm.Partition != "p2" {
		t.Errorf("partition %s, want p2", p.Slurm.Partition)
	}
	if src, _ := p.SourceOf("slurm.partition"); src.Line != lineIn(t, file, "  partition:p2:") || src.Field != "labels.partition:p2" {
		t.Errorf("partition source %v", src)
	}
	if p.Paths.RunsDir != "/ws/slurmbench-runs" || p.Paths.SquashDir != "/ws/slurmbench-runs/squash" || p.Telemetry.Port != SrtctlDefaultGPUExporterPort || p.Telemetry.ExporterImage != SrtctlDefaultGPUExporterImage || p.DRAM.AvailableMiB != 0 {
		t.Errorf("defaults: runs %s squash %s port %d dram %d", p.Paths.RunsDir, p.Paths.SquashDir, p.Telemetry.Port, p.DRAM.AvailableMiB)
	}
	if p.Container.Runtime != RuntimePyxis || p.Slurm.Directives != nil {
		t.Errorf("runtime %s directives %v", p.Container.Runtime, p.Slurm.Directives)
	}
	// Without a run directory anywhere the profile is refused, naming it.
	if _, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "b_01", Home: "/h"}); err == nil || !strings.Contains(err.Error(), "paths.runs_dir") {
		t.Errorf("no runs dir: %v", err)
	}
	// A bad runner is the reader's located error.
	if _, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "gpu-a", Home: "/h"}); err == nil || !strings.Contains(err.Error(), file+":") {
		t.Errorf("bad runner: %v", err)
	}
}

// TestExtends: a TOML profile extending a record; the TOML's keys win,
// maps merge key by key, a REST URL turns the transport back to REST, and
// the sources say which file each value came from.
func TestExtends(t *testing.T) {
	file := runnersFixture(t)
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, file)
	if err != nil {
		t.Fatal(err)
	}
	write := func(text string) string {
		path := filepath.Join(dir, "p.toml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write(`extends = { runners = "` + rel + `", runner = "b_00" }
[slurm]
rest_url = "http://slurmrestd:6820"
partition = "p9"
[paths]
runs_dir = "/r"
[models]
extra = "/m/extra"
[env.set]
OWN = "1"
[slurm.directives]
mem = "512G"
`)
	p, err := LoadExtending(context.Background(), path, RunnersOptions{Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	real := realDir(t, dir)
	for _, c := range []struct {
		key       string
		got, want any
		source    string // the file the value came from
	}{
		{"slurm.partition", p.Slurm.Partition, "p9", filepath.Join(real, "p.toml")},
		{"slurm.rest_url", p.Slurm.RestURL, "http://slurmrestd:6820", filepath.Join(real, "p.toml")},
		{"slurm.gpus_per_node", p.Slurm.GPUsPerNode, 4, file},
		{"slurm.compute_arch", p.Slurm.ComputeArch, "aarch64", file},
		{"paths.runs_dir", p.Paths.RunsDir, "/r", filepath.Join(real, "p.toml")},
		{"models.extra", p.Models["extra"], "/m/extra", filepath.Join(real, "p.toml")},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.key, c.got, c.want)
		}
		if src, ok := p.SourceOf(c.key); !ok || src.File != c.source {
			t.Errorf("%s: source %v, want %s", c.key, src, c.source)
		}
	}
	if p.Env.Set["OWN"] != "1" || p.Slurm.Directives["mem"] != "512G" {
		t.Errorf("env %v directives %v", p.Env.Set, p.Slurm.Directives)
	}
	if p.Slurm.Transport != "" || p.Cluster != "beta" || p.Record == nil || p.Path != filepath.Join(real, "p.toml") {
		t.Errorf("transport %q cluster %s path %s", p.Slurm.Transport, p.Cluster, p.Path)
	}

	// The runner from the caller (RUNNER_NAME) when the table names none;
	// a cluster id instead of a runner; the runners file from the caller.
	path = write("extends = { cluster = \"alpha\" }\n[paths]\nruns_dir = \"/r\"\n[env.set]\nOWN = \"1\"\n[slurm.directives]\nmem = \"1G\"\n")
	p, err = LoadExtending(context.Background(), path, RunnersOptions{Runners: file, Runner: "b_00", Home: "/h"})
	if err != nil || p.Cluster != "alpha" || p.Slurm.Transport != TransportCLI || p.Models["Model-B"] != "/shared/models/b" {
		t.Fatalf("extends cluster: %v %+v", err, p)
	}
	// Tables merge with the record's: its env and directives stay.
	if p.Env.Set["OWN"] != "1" || p.Env.Set["PLAIN"] != "1" || p.Slurm.Directives["mem"] != "1G" || p.Slurm.Directives["exclude"] != "node-3,node-4" {
		t.Errorf("merge: env %v directives %v", p.Env.Set, p.Slurm.Directives)
	}
	path = write("[extends]\nrunners = \"" + rel + "\"\n[paths]\nruns_dir = \"/r\"\n")
	if p, err = LoadExtending(context.Background(), path, RunnersOptions{Runner: "b_01", Home: "/h"}); err != nil || p.Slurm.Partition != "p2" {
		t.Fatalf("runner from the caller: %v", err)
	}
	for text, want := range map[string]string{
		"extends = { runner = \"a_00\", cluster = \"alpha\" }\n":      "not both",
		"extends = { runner = \"a_00\" }\n":                           "no runners.yaml",
		"extends = { runners = \"" + rel + "\", runner = \"zz\" }\n":  `runner "zz" must be in exactly one cluster label`,
		"extends = { runners = \"" + rel + "\", cluster = \"zz\" }\n": "no clusters.zz record",
		"extends = { runners = \"" + rel + "\", runer = \"a_00\" }\n": "runer",
	} {
		if _, err := LoadExtending(context.Background(), write(text), RunnersOptions{Home: "/h"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
	// The transport is one of the three.
	if _, err := LoadExtending(context.Background(), write(strings.Replace(minimal, "[slurm]\n", "[slurm]\ntransport = \"grpc\"\n", 1)), RunnersOptions{}); err == nil || !strings.Contains(err.Error(), `slurm.transport: "grpc"`) {
		t.Errorf("transport grpc: %v", err)
	}
	// A profile that extends nothing records no sources, as before.
	if p, err := LoadExtending(context.Background(), write(minimal), RunnersOptions{Runners: file, Runner: "a_00"}); err != nil || p.Sources != nil || p.Record != nil {
		t.Errorf("plain profile: %v %v", err, p.Sources)
	}
}

// TestSampleEveryCluster: a profile derives from every cluster record of
// InferenceX's runners.yaml and validates.
func TestSampleEveryCluster(t *testing.T) {
	path := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e", "configs", "runners.yaml")
	inv, err := runners.Load(context.Background(), path, runners.Options{Home: "/home/runner"})
	if err != nil {
		t.Fatal(err)
	}
	derived := 0
	for _, id := range inv.Order {
		p, err := LoadRunners(context.Background(), RunnersOptions{Runners: path, Cluster: id, Home: "/home/runner",
			DefaultRunsDir: "/ws/slurmbench-runs", Image: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.5.1"})
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		c := inv.Clusters[id]
		if p.Cluster != id || p.Slurm.GPUsPerNode != c.GPUsPerNode || p.Slurm.Partition != c.Slurm.Partition || len(p.Models) != len(c.Models.Entries) {
			t.Errorf("%s: %+v", id, p.Slurm)
		}
		derived++
	}
	if derived != 13 {
		t.Errorf("%d of the sample's 13 clusters derived", derived)
	}
}

// TestAgenticMounts: a multi-node AgentX point's job also mounts the
// record's agentic-volume-mounts (once, beside volume-mounts); any other
// point's does not.
func TestAgenticMounts(t *testing.T) {
	const rec = "labels:\n  cluster:c: [r_00]\nclusters:\n  c:\n    gpus-per-node: 8\n    arch: x86_64\n    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: true\n" +
		"      volumes:\n        hf-hub-cache: {path: /srv/hf}\n        aiperf-cache: {path: /srv/aiperf}\n      srt-slurm:\n        network-interface: eth0\n" +
		"        volume-mounts: {hf-hub-cache: /hf_hub_cache}\n"
	for _, tc := range []struct {
		name, extra string
		agentic     bool
		want        string
	}{
		{"AgentX multi-node adds agentic-volume-mounts", "        agentic-volume-mounts: {aiperf-cache: /aiperf_mmap_cache}\n", true,
			"/srv/hf:/hf_hub_cache /srv/aiperf:/aiperf_mmap_cache"},
		{"other points do not", "        agentic-volume-mounts: {aiperf-cache: /aiperf_mmap_cache}\n", false, "/srv/hf:/hf_hub_cache"},
		{"a mount both name is mounted once", "        agentic-volume-mounts: {hf-hub-cache: /hf_hub_cache}\n", true, "/srv/hf:/hf_hub_cache"},
		{"no agentic mounts", "", true, "/srv/hf:/hf_hub_cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "runners.yaml")
			if err := os.WriteFile(file, []byte(rec+tc.extra), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "r_00", DefaultRunsDir: "/runs", AgenticMultiNode: tc.agentic})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Container.Mounts, " "); got != tc.want {
				t.Errorf("mounts %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSingleNodeModelDir: a single-node point's hf:<model> is the staged
// checkpoint only where the record's single-node-models is "staged"; a
// multi-node point's always where one is staged.
func TestSingleNodeModelDir(t *testing.T) {
	const rec = "labels:\n  cluster:c: [r_00]\nclusters:\n  c:\n    gpus-per-node: 8\n    arch: x86_64\n    models:\n      entries:\n        M: {root: models, dir: M-v2}\n    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: true\n" +
		"      volumes:\n        models: {path: /srv/models}\n      srt-slurm:\n        network-interface: eth0\n"
	for _, tc := range []struct {
		name, extra string
		single      bool
		model, want string // want "" : not resolved (the Hub id is served)
	}{
		{"multi-node: the staged checkpoint", "", false, "hf:org/M", "/srv/models/M-v2"},
		{"single-node with hub (the default): the Hub", "", true, "hf:org/M", ""},
		{"single-node with hub named", "        single-node-models: hub\n", true, "hf:org/M", ""},
		{"single-node with staged", "        single-node-models: staged\n", true, "hf:org/M", "/srv/models/M-v2"},
		{"single-node with staged but none for this model", "        single-node-models: staged\n", true, "hf:org/Other", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "runners.yaml")
			if err := os.WriteFile(file, []byte(rec+tc.extra), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "r_00", DefaultRunsDir: "/runs", SingleNode: tc.single})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := p.ModelDir(tc.model)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("ModelDir(%s) = %q, %v; want %q", tc.model, got, ok, tc.want)
			}
		})
	}
}

// TestSquashImportOn: where the record's squash policy has the image
// imported — every node of the job for all-nodes or a node-local cache, a
// compute node, the login node, or nowhere for a staged file.
func TestSquashImportOn(t *testing.T) {
	const rec = "labels:\n  cluster:c: [r_00]\nclusters:\n  c:\n    gpus-per-node: 8\n    arch: x86_64\n    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: true\n" +
		"      volumes: {}\n      squash:\n        dir: /raid/squash\n"
	for _, tc := range []struct {
		name, squash string
		want         string
		image        string // containers.a: "" the reference itself
	}{
		{"all-nodes on shared storage", "        import: all-nodes\n", ImportOnNodes, ""},
		{"all-nodes on node-local storage", "        import: all-nodes\n        visibility: node-local\n", ImportOnNodes, ""},
		{"compute into a node-local cache", "        import: compute\n        visibility: node-local\n", ImportOnNodes, ""},
		{"compute into a shared cache", "        import: compute\n", "compute", ""},
		{"submit-host", "        import: submit-host\n", "login", ""},
		{"pre-staged node-local: nothing imported", "        import: pre-staged\n        visibility: node-local\n", "", "/raid/squash/nvcr.io_nvidia_x_1.sqsh"},
		{"a framework's all-nodes location", "        import: submit-host\n        framework-dirs:\n          sglang: {import: all-nodes}\n", ImportOnNodes, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "runners.yaml")
			src := rec + tc.squash + "      srt-slurm:\n        network-interface: eth0\n        container-aliases: [a]\n"
			if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "r_00", DefaultRunsDir: "/runs",
				Image: "nvcr.io/nvidia/x:1", Framework: "sglang"})
			if err != nil {
				t.Fatal(err)
			}
			if p.Container.ImportOn != tc.want || p.ImportOnNodes() != (tc.want == ImportOnNodes) {
				t.Errorf("import_on %q, want %q", p.Container.ImportOn, tc.want)
			}
			want := tc.image
			if want == "" {
				want = "nvcr.io/nvidia/x:1"
			}
			if p.Containers["a"] != want {
				t.Errorf("containers.a %q, want %q", p.Containers["a"], want)
			}
		})
	}
	// An OCI runtime has no enroot to import squash files on the nodes.
	p := &Profile{Container: Container{ImportOn: ImportOnNodes, Runtime: RuntimeOCI}}
	if err := p.validate(); err == nil || !strings.Contains(err.Error(), "container.import_on") {
		t.Errorf("nodes with the oci runtime: %v", err)
	}
}

// TestSingleNodeJobFacts: a single-node point's job takes the record's
// single-node-exclusive (default true) and, without a default-time-limit,
// its single-node-time-limit; a multi-node point's takes slurm.exclusive
// and default-time-limit only.
func TestSingleNodeJobFacts(t *testing.T) {
	const rec = "labels:\n  cluster:c: [r_00]\nclusters:\n  c:\n    gpus-per-node: 8\n    arch: x86_64\n    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: false\n" +
		"      volumes: {}\n      srt-slurm:\n        network-interface: eth0\n"
	for _, tc := range []struct {
		name, extra string
		single      bool
		exclusive   bool
		limit       string
	}{
		{"multi-node", "        single-node-time-limit: 500\n", false, false, ""},
		{"single-node defaults", "", true, true, ""},
		{"single-node limit and no exclusivity", "        single-node-time-limit: 500\n        single-node-exclusive: false\n", true, false, "500"},
		{"default-time-limit wins", "        single-node-time-limit: 500\n        default-time-limit: \"2:00:00\"\n", true, true, "2:00:00"},
		{"multi-node default-time-limit", "        default-time-limit: \"2:00:00\"\n", false, false, "2:00:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "runners.yaml")
			if err := os.WriteFile(file, []byte(rec+tc.extra), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "r_00", DefaultRunsDir: "/runs", SingleNode: tc.single})
			if err != nil {
				t.Fatal(err)
			}
			if p.Slurm.Exclusive != tc.exclusive || p.Slurm.TimeLimit != tc.limit {
				t.Errorf("exclusive %v, time limit %q; want %v, %q", p.Slurm.Exclusive, p.Slurm.TimeLimit, tc.exclusive, tc.limit)
			}
		})
	}
}

// TestLaneProfile: given the launch as the lane tables read it, a record's
// profile takes the mounts of the cluster's lane that match it and
// srt_time_limit's limit, each with its source: the lane's limit or long
// limit, a single-node point's single-node-time-limit or time bump,
// SALLOC_TIME_LIMIT; the record's default-time-limit before all of them.
func TestLaneProfile(t *testing.T) {
	rec := func(id, extra string) string {
		return "labels:\n  cluster:" + id + ": [r_00]\nclusters:\n  " + id + ":\n    gpus-per-node: 8\n    arch: x86_64\n    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: true\n" +
			"      volumes:\n        aiperf-cache: {path: /srv/aiperf}\n        it-share-data: {path: /srv/data}\n      srt-slurm:\n        network-interface: eth0\n" + extra
	}
	multi := func(prefix, fw string, agentic bool) *srtlanes.Request {
		return &srtlanes.Request{ModelPrefix: prefix, Framework: fw, Agentic: agentic, MultiNode: true, SallocTimeLimit: 480}
	}
	for _, tc := range []struct {
		name, record string
		lane         *srtlanes.Request
		single       bool
		mounts       string
		limit, from  string
	}{
		{"mi355x-amds: the aiperf mount and the lane's hour", rec("mi355x-amds", ""), multi("qwen3.5", "sglang", false),
			false, "/srv/aiperf:/aiperf_mmap_cache", "01:00:00", "InferenceX's lanes.py SRT_LANES time_limit"},
		{"mi355x-amds tilert: the data volume too", rec("mi355x-amds", ""), multi("qwen3.5", "tilert", false),
			false, "/srv/aiperf:/aiperf_mmap_cache /srv/data:/models", "01:00:00", "InferenceX's lanes.py SRT_LANES time_limit"},
		{"gb300-nv dsv4 AgentX sglang: the long limit", rec("gb300-nv", ""), multi("dsv4", "dynamo-sglang", true),
			false, "", "8:00:00", "InferenceX's lanes.py SRT_LANES long_time_limit"},
		{"gb300-nv dsv4 fixed-sequence: the lane's", rec("gb300-nv", ""), multi("dsv4", "dynamo-sglang", false),
			false, "", "4:00:00", "InferenceX's lanes.py SRT_LANES time_limit"},
		{"b300-dsxe without a lane limit takes SALLOC_TIME_LIMIT", rec("b300-dsxe", ""), multi("dsv4", "dynamo-sglang", false),
			false, "", "480", "SALLOC_TIME_LIMIT (the workflow's, minutes)"},
		{"the record's default-time-limit first", rec("b300-dsxe", "        default-time-limit: \"3:00:00\"\n"), multi("dsv4", "dynamo-sglang", false),
			false, "", "3:00:00", ""},
		{"h200-dgxc single-node bump", rec("h200-dgxc", ""),
			&srtlanes.Request{ModelPrefix: "dsv41flash", Framework: "sglang", Agentic: true, Conc: 64, SallocTimeLimit: 60},
			true, "", "1440", "InferenceX's SALLOC_TIME_BUMPS[h200-dgxc] (minutes; CONC >= 64)"},
		{"single-node-time-limit before the bump", rec("h200-dgxc", "        single-node-time-limit: 500\n"),
			&srtlanes.Request{ModelPrefix: "dsv41flash", Framework: "sglang", Agentic: true, Conc: 64, SallocTimeLimit: 60},
			true, "", "500", ""},
		{"no lane request: no lane rule", rec("mi355x-amds", ""), nil, false, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "runners.yaml")
			if err := os.WriteFile(file, []byte(tc.record), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "r_00", DefaultRunsDir: "/runs", SingleNode: tc.single, Lane: tc.lane})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Container.Mounts, " "); got != tc.mounts {
				t.Errorf("mounts %q, want %q", got, tc.mounts)
			}
			if p.Slurm.TimeLimit != tc.limit {
				t.Errorf("time limit %q, want %q", p.Slurm.TimeLimit, tc.limit)
			}
			if src := p.Sources["slurm.time_limit"]; tc.from != "" && src.File != tc.from {
				t.Errorf("time limit from %+v, want %q", src, tc.from)
			}
		})
	}
}
