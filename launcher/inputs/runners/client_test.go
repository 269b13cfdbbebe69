package runners

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// record builds a one-cluster runners.yaml: id, its volumes (name: path)
// and the srt-slurm lines given (volume-mounts, agentic-volume-mounts).
func record(id string, volumes map[string]string, srt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "labels:\n  cluster:%s: [r_00]\nclusters:\n  %s:\n    gpus-per-node: 8\n    arch: x86_64\n    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: true\n      volumes:\n", id, id)
	for _, name := range sortedKeys(volumes) {
		fmt.Fprintf(&b, "        %s: {path: %s}\n", name, volumes[name])
	}
	if len(volumes) == 0 {
		b.WriteString("        {}\n")
	}
	b.WriteString("      srt-slurm:\n        network-interface: eth0\n")
	for _, l := range strings.Split(strings.TrimSpace(srt), "\n") {
		if l != "" {
			b.WriteString("        " + l + "\n")
		}
	}
	return b.String()
}

// TestAgenticClientEnv builds records and checks the client paths a
// multi-node AgentX job gets: RESULT_DIR always (the lane's), the aiperf
// and Hub caches only where a mount puts their volume, the most specific
// mount winning.
func TestAgenticClientEnv(t *testing.T) {
	caches := map[string]string{"hf-hub-cache": "/srv/hf", "aiperf-cache": "/srv/aiperf"}
	for _, tc := range []struct {
		name    string
		id      string
		volumes map[string]string
		srt     string
		want    string // NAME=value, space-separated, in order
		mounts  string // AgenticMounts: volume:host:container
	}{
		{"infx generate's fixture: Hub cache on every job, aiperf AgentX-only", "fixture", caches,
			"volume-mounts: {hf-hub-cache: /hf}\nagentic-volume-mounts: {aiperf-cache: /aiperf}",
			"RESULT_DIR=/logs/agentic AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf HF_HUB_CACHE=/hf",
			"aiperf-cache:/srv/aiperf:/aiperf"},
		{"both caches in volume-mounts (gb300-nv's record)", "gb300-nv", caches,
			"volume-mounts: {aiperf-cache: /aiperf_mmap_cache, hf-hub-cache: /hf_hub_cache}",
			"RESULT_DIR=/logs/agentic AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache HF_HUB_CACHE=/hf_hub_cache", ""},
		{"volumes declared, none mounted: only the result directory", "b200", caches, "",
			"RESULT_DIR=/logs/agentic", ""},
		{"no cache volumes at all", "bare", nil, "",
			"RESULT_DIR=/logs/agentic", ""},
		{"agentic-volume-mounts wins over volume-mounts for one volume", "c", caches,
			"volume-mounts: {hf-hub-cache: /hf_hub_cache}\nagentic-volume-mounts: {hf-hub-cache: /agentx_hf}",
			"RESULT_DIR=/logs/agentic HF_HUB_CACHE=/agentx_hf", "hf-hub-cache:/srv/hf:/agentx_hf"},
		{"shared Hub cache stands in when hf-hub-cache is not mounted", "d",
			map[string]string{"hf-hub-cache": "/var/lib/hf", "shared-hf-hub-cache": "/share/hf"},
			"volume-mounts: {shared-hf-hub-cache: /hf_hub_cache/hub}",
			"RESULT_DIR=/logs/agentic HF_HUB_CACHE=/hf_hub_cache/hub", ""},
		{"hf-hub-cache wins over the shared one", "e",
			map[string]string{"hf-hub-cache": "/var/lib/hf", "shared-hf-hub-cache": "/share/hf"},
			"volume-mounts: {shared-hf-hub-cache: /shared_hub, hf-hub-cache: /hub}",
			"RESULT_DIR=/logs/agentic HF_HUB_CACHE=/hub", ""},
		{"mi355x-amds: its lane's result directory and aiperf mount", "mi355x-amds",
			map[string]string{"aiperf-cache": "/it-share/aiperf-cache", "shared-hf-hub-cache": "/it-share/hf-hub-cache"},
			"volume-mounts: {shared-hf-hub-cache: /hf_hub_cache/hub}",
			"RESULT_DIR=/infmax-workspace/LOGS/agentic AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache HF_HUB_CACHE=/hf_hub_cache/hub",
			"aiperf-cache:/it-share/aiperf-cache:/aiperf_mmap_cache"},
		{"mi355x-amds without the lane's volume: no aiperf mount", "mi355x-amds", nil, "",
			"RESULT_DIR=/infmax-workspace/LOGS/agentic", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := record(tc.id, tc.volumes, tc.srt)
			inv, err := Parse("runners.yaml", []byte(src), Options{Home: "/home/r"})
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			c := inv.Clusters[tc.id]
			var got []string
			agentic := srtlanes.Request{Agentic: true, MultiNode: true}
			for _, p := range c.AgenticClientEnv(agentic) {
				got = append(got, p.Name+"="+p.Value)
				if p.From == "" {
					t.Errorf("%s: no origin", p.Name)
				}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("client env %q, want %q", g, tc.want)
			}
			var mounts []string
			for _, m := range append(c.AgenticMounts(), c.LaneMounts(agentic)...) {
				mounts = append(mounts, m.Volume+":"+m.Host+":"+m.Container)
			}
			if g := strings.Join(mounts, " "); g != tc.mounts {
				t.Errorf("agentic mounts %q, want %q", g, tc.mounts)
			}
		})
	}
}

// TestJobMounts builds records for clusters of InferenceX's lane table and
// checks every job's mounts: volume-mounts always, agentic-volume-mounts
// on a multi-node AgentX job, the lane's mounts where their Match holds
// (model prefix, precision, framework, agentic), at the lane's target or
// the host path, world-writable as the lane says.
func TestJobMounts(t *testing.T) {
	vols := map[string]string{"hf-hub-cache": "/srv/hf", "aiperf-cache": "/srv/aiperf", "dynamo-wheels": "/srv/wheels", "it-share-data": "/it/data"}
	gb200 := func(prefix, prec, fw string, agentic, multi bool) srtlanes.Request {
		return srtlanes.Request{ModelPrefix: prefix, Precision: prec, Framework: fw, Agentic: agentic, MultiNode: multi}
	}
	for _, tc := range []struct {
		name, id, srt string
		r             srtlanes.Request
		want          string // volume:host:container[:ww] ...
	}{
		{"gb200-nv glm5.2 fp4 sglang AgentX: the wheels cache", "gb200-nv", "volume-mounts: {hf-hub-cache: /hf_hub_cache}\nshared-run-root: /srv/runs",
			gb200("glm5.2", "fp4", "dynamo-sglang", true, true),
			"hf-hub-cache:/srv/hf:/hf_hub_cache dynamo-wheels:/srv/wheels:/configs/dynamo-wheels:ww"},
		{"gb200-nv glm5.2 fp8: no wheels cache (precision)", "gb200-nv", "volume-mounts: {hf-hub-cache: /hf_hub_cache}\nshared-run-root: /srv/runs",
			gb200("glm5.2", "fp8", "dynamo-sglang", true, true), "hf-hub-cache:/srv/hf:/hf_hub_cache"},
		{"gb200-nv glm5.2 fp4 trt: no wheels cache (framework)", "gb200-nv", "shared-run-root: /srv/runs",
			gb200("glm5.2", "fp4", "dynamo-trt", true, true), ""},
		{"gb200-nv glm5.2 fp4 sglang fixed-sequence: no wheels cache (agentic)", "gb200-nv", "shared-run-root: /srv/runs",
			gb200("glm5.2", "fp4", "dynamo-sglang", false, true), ""},
		{"gb200-nv dsv4 fp4 sglang AgentX: no wheels cache (prefix)", "gb200-nv", "shared-run-root: /srv/runs",
			gb200("dsv4", "fp4", "dynamo-sglang", true, true), ""},
		{"mi355x-amds: aiperf on every multi-node job, not world-writable", "mi355x-amds", "",
			gb200("qwen3.5", "fp8", "sglang", false, true), "aiperf-cache:/srv/aiperf:/aiperf_mmap_cache"},
		{"mi355x-amds tilert: the data volume at /models too", "mi355x-amds", "",
			gb200("qwen3.5", "fp8", "tilert", false, true), "aiperf-cache:/srv/aiperf:/aiperf_mmap_cache it-share-data:/it/data:/models"},
		{"mi355x-amds single-node: no lane", "mi355x-amds", "", gb200("qwen3.5", "fp8", "tilert", false, false), ""},
		{"agentic-volume-mounts then the lane's", "mi355x-amds", "agentic-volume-mounts: {hf-hub-cache: /agentx_hf}",
			gb200("qwen3.5", "fp8", "sglang", true, true), "hf-hub-cache:/srv/hf:/agentx_hf:ww aiperf-cache:/srv/aiperf:/aiperf_mmap_cache"},
		{"agentic-volume-mounts only on multi-node AgentX jobs", "mine", "agentic-volume-mounts: {hf-hub-cache: /agentx_hf}",
			gb200("qwen3.5", "fp8", "sglang", true, false), ""},
		{"a cluster outside the table: the record's mounts only", "mine", "volume-mounts: {aiperf-cache: /a}",
			gb200("glm5.2", "fp4", "dynamo-sglang", true, true), "aiperf-cache:/srv/aiperf:/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Parse("runners.yaml", []byte(record(tc.id, vols, tc.srt)), Options{Home: "/home/r"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range inv.Clusters[tc.id].JobMounts(tc.r) {
				s := m.Volume + ":" + m.Host + ":" + m.Container
				if m.WorldWritable {
					s += ":ww"
				}
				got = append(got, s)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("mounts %q, want %q", g, tc.want)
			}
		})
	}
}

// TestCheckLane refuses what InferenceX's table check refuses: a lane
// mount of an undeclared volume, shared-run-root requests without a shared
// run root, lane limits under a fixed default-time-limit.
func TestCheckLane(t *testing.T) {
	multi := srtlanes.Request{MultiNode: true, Framework: "dynamo-sglang"}
	for _, tc := range []struct {
		name, id string
		vols     map[string]string
		srt      string
		want     string // "" : no problem
	}{
		{"gb200-nv complete", "gb200-nv", map[string]string{"dynamo-wheels": "/w"}, "shared-run-root: /runs", ""},
		{"gb200-nv without the wheels volume", "gb200-nv", nil, "shared-run-root: /runs", `no volume "dynamo-wheels"`},
		{"gb200-nv without a shared run root", "gb200-nv", map[string]string{"dynamo-wheels": "/w"}, "", "no srt-slurm.shared-run-root"},
		{"gb300-nv with a fixed default-time-limit", "gb300-nv", nil, `default-time-limit: "6:00:00"`, "shadowed by default-time-limit"},
		{"h100-dgxc with one: no lane limit to shadow", "h100-dgxc", nil, `default-time-limit: "6:00:00"`, ""},
		{"a cluster outside the table", "mine", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Parse("runners.yaml", []byte(record(tc.id, tc.vols, tc.srt)), Options{Home: "/home/r"})
			if err != nil {
				t.Fatal(err)
			}
			l, _ := srtlanes.InferenceX.Of(tc.id, multi)
			err = inv.Clusters[tc.id].CheckLane(l)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("CheckLane = %v, want %q", err, tc.want)
			}
		})
	}
}
