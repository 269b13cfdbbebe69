package runners

import (
	"fmt"
	"slices"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// check is RunnerInventory._one_cluster_per_runner
// (infx/clusters/__init__.py@b5514a25): cluster: labels and cluster
// records name each other, every runner of any label is in exactly one
// cluster: label (a name listed twice under one counts twice), and where a
// cluster lists partitions its default is one of them and each of its
// runners has exactly one allowed partition: label.
func (inv *Inventory) check() error {
	clusterLabels := map[string]*Label{}
	for i := range inv.Labels {
		l := &inv.Labels[i]
		if id, ok := strings.CutPrefix(l.Name, ClusterLabelPrefix); ok {
			clusterLabels[id] = l
		}
	}
	for _, id := range inv.Order {
		if clusterLabels[id] == nil {
			c := inv.Clusters[id]
			return inv.errorf(c.Line, "clusters."+id, "cluster without a %s%s label: every cluster record needs the label listing its runners", ClusterLabelPrefix, id)
		}
	}
	for _, l := range inv.Labels {
		if id, ok := strings.CutPrefix(l.Name, ClusterLabelPrefix); ok && inv.Clusters[id] == nil {
			return inv.errorf(l.Line, "labels."+l.Name, "cluster label without a clusters.%s record", id)
		}
	}
	owners := map[string][]string{}
	firstLine := map[string]int{}
	for _, l := range inv.Labels {
		id, ok := strings.CutPrefix(l.Name, ClusterLabelPrefix)
		if !ok {
			continue
		}
		for j, r := range l.Runners {
			owners[r] = append(owners[r], id)
			if len(owners[r]) > 1 {
				return inv.errorf(l.Lines[j], "labels."+l.Name, "runner %q is listed under several clusters (%s; first at line %d): a runner is in exactly one cluster: label",
					r, strings.Join(owners[r], ", "), firstLine[r])
			}
			firstLine[r] = l.Lines[j]
		}
	}
	for _, l := range inv.Labels {
		for j, r := range l.Runners {
			if owners[r] == nil {
				return inv.errorf(l.Lines[j], "labels."+l.Name, "runner %q has no cluster: label: every runner is in exactly one", r)
			}
		}
	}
	for _, id := range inv.Order {
		c := inv.Clusters[id]
		if len(c.Slurm.Partitions) == 0 {
			continue
		}
		if !slices.Contains(c.Slurm.Partitions, c.Slurm.Partition) {
			return inv.errorf(c.LineOf("slurm.partition"), "clusters."+id+".slurm.partition", "cluster %q default partition %q is not one of its partitions (%s)", id, c.Slurm.Partition, strings.Join(c.Slurm.Partitions, ", "))
		}
		l := clusterLabels[id]
		for j, r := range l.Runners {
			if _, _, err := inv.partitionFor(r, c, l.Lines[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (inv *Inventory) errorf(line int, field, format string, args ...any) error {
	return &yamltree.Error{File: inv.Path, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// partitionFor is RunnerInventory.partition_for: the one partition:
// label listing runner, which must name a partition of c. line is where
// to point when the runner has none.
func (inv *Inventory) partitionFor(runner string, c *Cluster, line int) (string, int, error) {
	var names []string
	var lines []int
	for _, l := range inv.Labels {
		if p, ok := strings.CutPrefix(l.Name, PartitionLabelPrefix); ok && slices.Contains(l.Runners, runner) {
			names = append(names, p)
			lines = append(lines, l.Line)
		}
	}
	allowed := strings.Join(c.Slurm.Partitions, ", ")
	switch {
	case len(names) == 0:
		return "", 0, inv.errorf(line, "labels", "runner %q needs exactly one allowed partition label: cluster %q has partitions (%s) and no %s<name> label lists the runner", runner, c.ID, allowed, PartitionLabelPrefix)
	case len(names) > 1:
		return "", 0, inv.errorf(lines[1], "labels."+PartitionLabelPrefix+names[1], "runner %q needs exactly one allowed partition label; found %s", runner, strings.Join(names, ", "))
	case !slices.Contains(c.Slurm.Partitions, names[0]):
		return "", 0, inv.errorf(lines[0], "labels."+PartitionLabelPrefix+names[0], "runner %q needs exactly one allowed partition label; %q is not a partition of cluster %q (%s)", runner, names[0], c.ID, allowed)
	}
	return names[0], lines[0], nil
}

// Resolve is RunnerInventory.cluster_for: the cluster whose cluster:
// label lists runner (exactly one), with the job's partition: the
// runner's partition: label where the cluster lists partitions, else the
// record's slurm.partition. The inventory is not changed.
func (inv *Inventory) Resolve(runner string) (*Resolved, error) {
	if runner == "" {
		return nil, inv.errorf(inv.Line, "labels", "no runner name: set RUNNER_NAME or --runner to a runner one cluster: label lists")
	}
	var ids []string
	var lines []int
	for _, l := range inv.Labels {
		id, ok := strings.CutPrefix(l.Name, ClusterLabelPrefix)
		if j := slices.Index(l.Runners, runner); ok && j >= 0 {
			ids = append(ids, id)
			lines = append(lines, l.Lines[j])
		}
	}
	if len(ids) != 1 {
		line := inv.Line
		if len(ids) > 1 {
			line = lines[1]
		}
		return nil, inv.errorf(line, "labels", "runner %q must be in exactly one cluster label, found [%s]%s", runner, strings.Join(ids, ", "), inv.nearRunner(runner, len(ids)))
	}
	c := inv.Clusters[ids[0]]
	r := &Resolved{Inventory: inv, Runner: runner, Cluster: c, Partition: c.Slurm.Partition, LabelLine: lines[0]}
	if len(c.Slurm.Partitions) > 0 {
		p, line, err := inv.partitionFor(runner, c, lines[0])
		if err != nil {
			return nil, err
		}
		r.Partition, r.PartitionLine = p, line
	}
	return r, nil
}

// nearRunner names, for a runner in no cluster label, what the name may
// have meant: a label (the runner type the workflow passes is a label,
// not a runner name).
func (inv *Inventory) nearRunner(runner string, found int) string {
	if found != 0 {
		return ""
	}
	for _, l := range inv.Labels {
		if l.Name == runner {
			return fmt.Sprintf(" (%q is a label at line %d, not a runner: RUNNER_NAME is one of its runners, e.g. %q)", runner, l.Line, l.Runners[0])
		}
	}
	return ""
}

// LabelClusters are the clusters a label schedules on, in file order: a
// cluster:<id> label's own, else the distinct clusters of its runners (a
// broad SKU label may span several; a matrix point's record is known only
// when it spans one). An unknown label is an error.
func (inv *Inventory) LabelClusters(label string) ([]string, error) {
	i := slices.IndexFunc(inv.Labels, func(l Label) bool { return l.Name == label })
	if i < 0 {
		names := make([]string, len(inv.Labels))
		for j, l := range inv.Labels {
			names[j] = l.Name
		}
		return nil, inv.errorf(inv.Line, "labels", "no label %q (labels: %s)", label, strings.Join(names, ", "))
	}
	if id, ok := strings.CutPrefix(label, ClusterLabelPrefix); ok {
		return []string{id}, nil
	}
	var ids []string
	for _, r := range inv.Labels[i].Runners {
		for _, l := range inv.Labels {
			if id, ok := strings.CutPrefix(l.Name, ClusterLabelPrefix); ok && slices.Contains(l.Runners, r) && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}
