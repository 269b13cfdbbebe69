package runners

import (
	"slices"
	"strings"
	"testing"
)

func fixtureInventory(t *testing.T) *Inventory {
	t.Helper()
	inv, err := Parse(fixture, readFixture(t), Options{Home: "/home/runner"})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// TestSquashPolicy: a framework's location, a model prefix's (replacing
// the framework's: its unset fields are the cache's), a helper's, and the
// file and lock each key style and lock-file name.
func TestSquashPolicy(t *testing.T) {
	sq := fixtureInventory(t).Clusters["alpha"].Slurm.Squash
	const image = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.5.1"
	for _, tt := range []struct {
		name       string
		pol        SquashPolicy
		dir        string
		imp        ImportMode
		file, lock string
	}{
		{"the cache's", sq.Policy("", ""), "/shared/squash", ImportCompute,
			"/shared/squash/nvcr.io_nvidia_ai-dynamo_sglang-runtime_0.5.1.sqsh", "/shared/squash/.locks/nvcr.io_nvidia_ai-dynamo_sglang-runtime_0.5.1.lock"},
		{"an unlisted framework", sq.Policy("vllm", "dsr1"), "/shared/squash", ImportCompute,
			"/shared/squash/nvcr.io_nvidia_ai-dynamo_sglang-runtime_0.5.1.sqsh", ""},
		{"a framework's dir and key style", sq.Policy("dynamo-trt", "dsr1"), "/shared/trt", ImportCompute,
			"/shared/trt/nvidia+ai-dynamo+sglang-runtime+0.5.1.sqsh", "/shared/trt/.locks/nvcr.io_nvidia_ai-dynamo_sglang-runtime_0.5.1.lock"},
		{"a framework's key style and import", sq.Policy("dynamo-sglang", "kimik3"), "/shared/squash", ImportUnchecked,
			"/shared/squash/nvcr.io+nvidia+ai-dynamo+sglang-runtime+0.5.1.sqsh", ""},
		{"a model prefix replaces its framework", sq.Policy("dynamo-sglang", "dsv4"), "/shared/dsv4", ImportCompute,
			"/shared/dsv4/nvcr.io_nvidia_ai-dynamo_sglang-runtime_0.5.1.sqsh", ""},
		{"a helper's", sq.HelperPolicy(HelperNginx), "/shared/squash", ImportPreStaged,
			"/shared/squash/nvcr.io+nvidia+ai-dynamo+sglang-runtime+0.5.1.sqsh", ""},
		{"a helper without a location", sq.HelperPolicy(HelperDCGMExporter), "/shared/squash", ImportCompute, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pol
			if p.Dir != tt.dir || p.Import != tt.imp || p.LockTimeoutS != 600 || p.LockFile != LockLocksDir {
				t.Errorf("got %+v, want dir %s import %s", p, tt.dir, tt.imp)
			}
			if tt.file != "" && p.File(image) != tt.file {
				t.Errorf("file %s, want %s", p.File(image), tt.file)
			}
			if tt.lock != "" && p.Lock(image) != tt.lock {
				t.Errorf("lock %s, want %s", p.Lock(image), tt.lock)
			}
		})
	}
}

// TestSquashFileNames: the key styles on references with a registry
// separator (#), a digest and nvcr.io, and the lock beside the squash.
func TestSquashFileNames(t *testing.T) {
	for _, tt := range []struct {
		style KeyStyle
		image string
		want  string
	}{
		{KeyUnderscore, "nvcr.io#nvidia/dynamo:0.7", "/s/nvcr.io_nvidia_dynamo_0.7.sqsh"},
		{KeyPlus, "nvcr.io#nvidia/dynamo:0.7", "/s/nvcr.io+nvidia+dynamo+0.7.sqsh"},
		{KeyPlusStripNVCR, "nvcr.io#nvidia/dynamo:0.7", "/s/nvcr.io+nvidia+dynamo+0.7.sqsh"}, // only nvcr.io/ is stripped
		{KeyPlusStripNVCR, "nvcr.io/nvidia/dynamo:0.7", "/s/nvidia+dynamo+0.7.sqsh"},
		{KeyUnderscore, "lmsysorg/sglang@sha256:ab12", "/s/lmsysorg_sglang_sha256_ab12.sqsh"},
		{KeyPlus, "nginx:1.27.4", "/s/nginx+1.27.4.sqsh"},
	} {
		p := SquashPolicy{Dir: "/s", KeyStyle: tt.style, LockFile: LockBesideSquash}
		if got := p.File(tt.image); got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.style, tt.image, got, tt.want)
		}
		if got := p.Lock(tt.image); got != tt.want+".lock" {
			t.Errorf("%s %s: lock %s", tt.style, tt.image, got)
		}
	}
	if !(SquashPolicy{Visibility: NodeLocal}).NeedsJob() || !(SquashPolicy{Import: ImportAllNodes}).NeedsJob() || (SquashPolicy{Import: ImportCompute, Visibility: Shared}).NeedsJob() {
		t.Error("NeedsJob: node-local storage or all-nodes imports need the job, nothing else")
	}
}

// TestFormatGres: Python's str.format(gpus=N) on GRES templates.
func TestFormatGres(t *testing.T) {
	for _, tt := range []struct {
		template, want, err string
	}{
		{"gpu:{gpus}", "gpu:4", ""},
		{"gpu:h200:{gpus}", "gpu:h200:4", ""},
		{"gpu:{gpus!s}", "gpu:4", ""},
		{"{{x}}:{gpus}", "{x}:4", ""},
		{"gpu:{gpus:02d}", "", "format spec"},
		{"gpu:{n}", "", "unknown field {n}"},
		{"gpu:{0}", "", "unknown field {0}"},
		{"gpu:{}", "", "positional"},
		{"gpu:{gpus", "", "single '{'"},
		{"gpu:}", "", "single '}'"},
	} {
		got, err := FormatGres(tt.template, 4)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: got %q, %v; want error %q", tt.template, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.template, got, err, tt.want)
		}
	}
	// Python accepts a template whose only braces are escaped ones, as
	// long as formatting changes it; one that formats to itself is refused.
	if checkGres("{{gpus}}") != nil || checkGres("gpu:8") == nil {
		t.Error("checkGres: {{gpus}} formats to {gpus} (accepted), gpu:8 to itself (refused)")
	}
}

// TestCheckpoint: a model's staged checkpoint by basename, the node-local
// copy first, else the first in file order; none for an unstaged model.
func TestCheckpoint(t *testing.T) {
	data := edit(t, "        Model-B: {root: shared-models, dir: b}\n",
		"        Model-B: {root: shared-models, dir: b}\n        Model-B@hf: {root: hf-hub-cache, dir: b2}\n")
	inv, err := Parse(fixture, data, Options{Home: "/home/runner"})
	if err != nil {
		t.Fatal(err)
	}
	a := inv.Clusters["alpha"]
	for _, tt := range []struct{ model, key, path string }{
		{"org/Model-A", "Model-A@local", "/scratch/copies/Model-A"},
		{"hf:org/Model-A", "Model-A@local", "/scratch/copies/Model-A"},
		{"other-org/Model-B", "Model-B", "/shared/models/b"},
		{"Model-B", "Model-B", "/shared/models/b"},
		{"org/Model-C", "", ""},
		{"org/Model", "", ""},
	} {
		cp, ok := a.Checkpoint(tt.model)
		if ok != (tt.key != "") || cp.Key != tt.key || cp.Path != tt.path {
			t.Errorf("%s: got %+v %v, want %s %s", tt.model, cp, ok, tt.key, tt.path)
		}
	}
}

// TestSingleNodeModel: staged where the record says single-node points
// serve staged checkpoints and one is staged, else the Hub.
func TestSingleNodeModel(t *testing.T) {
	for _, tt := range []struct{ models, model, want string }{
		{"staged", "org/Model-B", "/shared/models/b"},
		{"staged", "hf:org/Model-A", "/scratch/copies/Model-A"},
		{"staged", "org/Unstaged", "hf:org/Unstaged"},
		{"hub", "org/Model-B", "hf:org/Model-B"},
	} {
		data := edit(t, "single-node-models: staged", "single-node-models: "+tt.models)
		inv, err := Parse(fixture, data, Options{Home: "/h"})
		if err != nil {
			t.Fatal(err)
		}
		if got := inv.Clusters["alpha"].SingleNodeModel(tt.model); got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.models, tt.model, got, tt.want)
		}
	}
	if got := fixtureInventory(t).Clusters["beta"].SingleNodeModel("org/Model-B"); got != "hf:org/Model-B" {
		t.Errorf("no srt-slurm profile: %s", got)
	}
}

// TestFabric: whole references resolve to the cluster's rendering (lists
// comma-joined, numbers decimal); embedded, unknown and unset ones fail.
func TestFabric(t *testing.T) {
	f := fixtureInventory(t).Clusters["alpha"].Slurm.SrtSlurm.Fabric
	for _, tt := range []struct{ in, want, err string }{
		{"@fabric.ib-devices", "rdma0,rdma1", ""},
		{"@fabric.mooncake-gid-index", "3", ""},
		{"mlx5_9:1", "mlx5_9:1", ""},
		{"@fabric.nccl-ib-hca", "", "sets no srt-slurm.fabric.nccl-ib-hca"},
		{"@fabric.ib-device", "", "not a whole"},
		{"IBDEVICES=@fabric.ib-devices", "", "not a whole"},
		{"@fabric.", "", "not a whole"},
	} {
		got, err := f.Resolve(tt.in)
		if (err != nil) != (tt.err != "") || (err != nil && !strings.Contains(err.Error(), tt.err)) || got != tt.want {
			t.Errorf("%q: got %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
	want := map[string]string{"ucx-net-devices": "mlx5_0:1", "ib-devices": "rdma0,rdma1", "mooncake-gid-index": "3", "mori-rdma-tc": "104"}
	got := f.Rendered()
	if len(got) != len(want) {
		t.Errorf("Rendered: %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Rendered[%s] = %q, want %q", k, got[k], v)
		}
	}
	if n, ok := f.Int("mori-rdma-tc"); !ok || n != 104 {
		t.Errorf("Int(mori-rdma-tc) = %d, %v", n, ok)
	}
	if _, ok := f.Int("ib-devices"); ok {
		t.Error("Int of a list field")
	}
	// CONFIGS.md@01381e4e's eight, and rdma-devices the stored Kimi K3
	// fragments name.
	if len(FabricNames()) != 9 || !slices.Contains(FabricNames(), "rdma-devices") {
		t.Errorf("FabricNames: %v", FabricNames())
	}
	withRDMA, err := Parse(fixture, edit(t, "          mooncake-gid-index: 3\n", "          mooncake-gid-index: 3\n          rdma-devices: [mlx5_1, mlx5_2]\n"), Options{Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := withRDMA.Clusters["alpha"].Slurm.SrtSlurm.Fabric.Resolve("@fabric.rdma-devices"); err != nil || got != "mlx5_1,mlx5_2" {
		t.Errorf("rdma-devices: %q, %v; want mlx5_1,mlx5_2", got, err)
	}
}
