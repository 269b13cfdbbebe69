package runners

import (
	"fmt"
	"strings"
	"testing"
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
			for _, p := range c.AgenticClientEnv() {
				got = append(got, p.Name+"="+p.Value)
				if p.From == "" {
					t.Errorf("%s: no origin", p.Name)
				}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("client env %q, want %q", g, tc.want)
			}
			var mounts []string
			for _, m := range c.AgenticMounts() {
				mounts = append(mounts, m.Volume+":"+m.Host+":"+m.Container)
			}
			if g := strings.Join(mounts, " "); g != tc.mounts {
				t.Errorf("agentic mounts %q, want %q", g, tc.mounts)
			}
		})
	}
}
