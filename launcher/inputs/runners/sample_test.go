package runners

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// TestSampleRunners: InferenceX's runners.yaml (the sample at
// ../shared/data/inferencex-v3, commit 03eaa88a) reads whole, and every
// runner of every cluster: label resolves to that cluster, GB300's by
// their partition: labels.
func TestSampleRunners(t *testing.T) {
	path := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e", "configs", "runners.yaml")
	inv, err := Load(context.Background(), path, Options{Home: "/home/runner"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Labels) != 25 || len(inv.Clusters) != 13 {
		t.Fatalf("%d labels, %d clusters; the sample has 25 and 13", len(inv.Labels), len(inv.Clusters))
	}
	resolved := 0
	partitions := map[string]int{}
	for _, l := range inv.Labels {
		id, ok := strings.CutPrefix(l.Name, ClusterLabelPrefix)
		if !ok {
			continue
		}
		for _, r := range l.Runners {
			res, err := inv.Resolve(r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cluster.ID != id {
				t.Errorf("%s resolved to %s, its label says %s", r, res.Cluster.ID, id)
			}
			partitions[id+"/"+res.Partition]++
			resolved++
		}
	}
	if resolved != 151 || partitions["gb300-nv/batch_1"] != 18 || partitions["gb300-nv/batch_3"] != 18 {
		t.Errorf("%d runners resolved, gb300-nv partitions %v", resolved, partitions)
	}
	if got := inv.Clusters["b300-dsxe"].Slurm.Volumes["hf-home"].Path; got != "/home/runner/.cache/huggingface" {
		t.Errorf("b300-dsxe hf-home: %s", got)
	}
}

// TestLaxScalars: values Pydantic's lax mode takes, and the YAML 1.1
// readings InferenceX's loader gives plain scalars.
func TestLaxScalars(t *testing.T) {
	for _, tt := range []struct{ old, new, err string }{
		{"    gpus-per-node: 4\n", "    gpus-per-node: \"4\"\n", ""},
		{"    gpus-per-node: 4\n", "    gpus-per-node: 4.0\n", ""},
		{"    gpus-per-node: 4\n", "    gpus-per-node: 4.5\n", "must be an integer"},
		{"    gpus-per-node: 4\n", "    gpus-per-node: true\n", "must be an integer"},
		{"      exclusive: false\n", "      exclusive: no\n", ""},
		{"      exclusive: false\n", "      exclusive: \"off\"\n", ""},
		{"      exclusive: false\n", "      exclusive: 0\n", ""},
		{"      exclusive: false\n", "      exclusive: 2\n", "true or false"},
		{"      partition: p1\n", "      partition: yes\n", "YAML 1.1"},
		{"      partition: p1\n", "      partition: 2026-01-01\n", "must be a string"},
		{"      partition: p1\n", "      partition: ~\n", "must be a string"},
		{"      partition: p1\n", "      partition: \"\"\n", "must not be empty"},
	} {
		data := edit(t, tt.old, tt.new)
		_, err := Parse(fixture, data, Options{Home: "/h"})
		if (err != nil) != (tt.err != "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: got %v, want %q", strings.TrimSpace(tt.new), err, tt.err)
		}
	}
}

// TestLoadIsBounded: a file past MaxBytes is refused, not read.
func TestLoadIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runners.yaml")
	if err := os.WriteFile(path, []byte("labels: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, MaxBytes+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), path, Options{}); err == nil || !strings.Contains(err.Error(), "runners:") {
		t.Errorf("got %v, want a bounded-read error", err)
	}
	if _, err := Parse("empty.yaml", nil, Options{}); err == nil || !strings.Contains(err.Error(), "empty runners.yaml") {
		t.Errorf("empty: %v", err)
	}
}

// BenchmarkParseSample: reading and validating InferenceX's runners.yaml
// (13 clusters, 25 labels), as every command that takes a runner does once.
func BenchmarkParseSample(b *testing.B) {
	data, err := os.ReadFile(shareddata.Path(b, "data", "inferencex-v3", "inferencex-e2e", "configs", "runners.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse("runners.yaml", data, Options{Home: "/home/runner"}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSampleLanes: every cluster of the sample that InferenceX's lane table
// has a row for passes its table check (each lane mount's volume declared,
// a shared run root where the lane asks for one, no lane limit shadowed by
// default-time-limit), on both multi-node paths, so no workflow run on
// today's clusters is refused for its record.
func TestSampleLanes(t *testing.T) {
	path := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e", "configs", "runners.yaml")
	inv, err := Load(context.Background(), path, Options{Home: "/home/runner"})
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for key := range srtlanes.InferenceX.Lanes {
		c, ok := inv.Clusters[key.Cluster]
		if !ok {
			t.Errorf("lane row %s/%s: no such cluster in the sample", key.Cluster, key.Path)
			continue
		}
		l := srtlanes.InferenceX.Lanes[key]
		l.Cluster, l.Path = key.Cluster, key.Path
		if err := c.CheckLane(&l); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		rows++
	}
	if rows != 8 {
		t.Errorf("%d lane rows, the table has 8", rows)
	}
}
