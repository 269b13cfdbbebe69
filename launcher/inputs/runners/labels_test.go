package runners

import (
	"errors"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// TestInventoryRules: the label rules RunnerInventory checks at load, each
// broken once, refused at the line of the label or record to blame.
func TestInventoryRules(t *testing.T) {
	for _, tt := range []struct {
		name, old, new string
		at, field, msg string
	}{
		{"cluster without a label", "  cluster:beta:\n    - b_00\n    - b_01\n", "  beta-runners:\n    - b_00\n    - b_01\n",
			"  beta:", "clusters.beta", "cluster without a cluster:beta label"},
		{"label without a cluster", "  partition:p1:\n", "  cluster:gamma:\n    - g_00\n  partition:p1:\n",
			"cluster:gamma", "labels.cluster:gamma", "without a clusters.gamma record"},
		{"runner under two clusters", "  cluster:beta:\n    - b_00\n", "  cluster:beta:\n    - a_01\n    - b_00\n",
			"    - a_01\n    - b_00\n    - b_01", "labels.cluster:beta", `runner "a_01" is listed under several clusters (alpha, beta`},
		{"runner twice under one cluster", "  cluster:alpha:\n    - a_00\n", "  cluster:alpha:\n    - a_00\n    - a_00\n",
			"    - a_00\n    - a_01\n  cluster:beta", "labels.cluster:alpha", `runner "a_00" is listed under several clusters (alpha, alpha`},
		{"runner in no cluster label", "  gpu-a:\n    - a_00\n", "  gpu-a:\n    - z_00\n    - a_00\n",
			"z_00", "labels.gpu-a", `runner "z_00" has no cluster: label`},
		{"partition label missing", "  partition:p2:\n    - b_01\n", "  partition:p2:\n    - a_00\n",
			"    - b_01\n  partition:p1", "labels", `runner "b_01" needs exactly one allowed partition label`},
		{"two partition labels", "  partition:p2:\n    - b_01\n", "  partition:p2:\n    - b_01\n    - b_00\n",
			"  partition:p2:", "labels.partition:p2", "found p1, p2"},
		{"partition not allowed", "  partition:p2:\n", "  partition:p3:\n",
			"  partition:p3:", "labels.partition:p3", `"p3" is not a partition of cluster "beta" (p1, p2)`},
		{"default partition not allowed", "      partition: p1\n", "      partition: p0\n",
			"partition: p0", "clusters.beta.slurm.partition", `default partition "p0" is not one of its partitions`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := edit(t, tt.old, tt.new)
			_, err := Parse(fixture, data, Options{Home: "/h"})
			var ye *yamltree.Error
			if !errors.As(err, &ye) {
				t.Fatalf("got %v, want a located error", err)
			}
			if !strings.Contains(ye.Msg, tt.msg) || ye.Field != tt.field {
				t.Errorf("got %v\nwant field %q, message with %q", err, tt.field, tt.msg)
			}
			if want := lineOfText(t, data, tt.at); ye.Line != want {
				t.Errorf("line %d, want %d (%q): %v", ye.Line, want, tt.at, err)
			}
		})
	}
}

// TestResolve: a runner name picks its cluster by its one cluster: label
// and, where the cluster lists partitions, its partition by its
// partition: label; a cluster without partitions keeps slurm.partition
// whatever partition: labels say.
func TestResolve(t *testing.T) {
	data := edit(t, "  partition:p1:\n    - b_00\n", "  partition:p1:\n    - b_00\n    - a_00\n")
	inv, err := Parse(fixture, data, Options{Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		runner, cluster, partition string
		labelAt, partitionAt       string // text of the lines named ("" : none)
		err                        string
	}{
		{runner: "a_01", cluster: "alpha", partition: "batch", labelAt: "    - a_01\n  cluster:beta"},
		{runner: "a_00", cluster: "alpha", partition: "batch", labelAt: "    - a_00\n    - a_01\n  cluster:beta"},
		{runner: "b_00", cluster: "beta", partition: "p1", labelAt: "    - b_00\n    - b_01\n  partition", partitionAt: "  partition:p1:"},
		{runner: "b_01", cluster: "beta", partition: "p2", labelAt: "    - b_01\n  partition:p1", partitionAt: "  partition:p2:"},
		{runner: "gpu-a", err: `runner "gpu-a" must be in exactly one cluster label, found [] ("gpu-a" is a label`},
		{runner: "cluster:alpha", err: `"cluster:alpha" is a label`},
		{runner: "nobody", err: `runner "nobody" must be in exactly one cluster label, found []`},
		{runner: "", err: "no runner name"},
	} {
		t.Run(tt.runner, func(t *testing.T) {
			r, err := inv.Resolve(tt.runner)
			if tt.err != "" {
				var ye *yamltree.Error
				if !errors.As(err, &ye) || !strings.Contains(err.Error(), tt.err) || ye.Line != lineOfText(t, data, "labels:") {
					t.Fatalf("got %v, want %q at the labels: line", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Cluster.ID != tt.cluster || r.Partition != tt.partition || r.Runner != tt.runner {
				t.Errorf("got %s/%s, want %s/%s", r.Cluster.ID, r.Partition, tt.cluster, tt.partition)
			}
			if want := lineOfText(t, data, tt.labelAt); r.LabelLine != want {
				t.Errorf("label line %d, want %d", r.LabelLine, want)
			}
			want := 0
			if tt.partitionAt != "" {
				want = lineOfText(t, data, tt.partitionAt)
			}
			if r.PartitionLine != want {
				t.Errorf("partition line %d, want %d", r.PartitionLine, want)
			}
			if inv.Clusters["beta"].Slurm.Partition != "p1" {
				t.Error("Resolve changed the inventory's record")
			}
		})
	}
}

// TestLabelClusters: the clusters a label schedules on.
func TestLabelClusters(t *testing.T) {
	inv, err := Parse(fixture, readFixture(t), Options{Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	for label, want := range map[string]string{
		"gpu-a":         "alpha beta",
		"cluster:alpha": "alpha",
		"partition:p2":  "beta",
	} {
		got, err := inv.LabelClusters(label)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%s: got %v, %v; want %s", label, got, err, want)
		}
	}
	if _, err := inv.LabelClusters("h100"); err == nil || !strings.Contains(err.Error(), `no label "h100"`) {
		t.Errorf("unknown label: %v", err)
	}
}
