package runners

import "strings"

// Checkpoint is a model's staged checkpoint on a cluster.
type Checkpoint struct {
	Key       string // the models.entries key that served it
	Volume    string
	Dir       string
	Path      string // the volume's path joined with Dir
	NodeLocal bool
}

// Checkpoint is the staged checkpoint of model (an HF id such as
// "deepseek-ai/DeepSeek-R1-0528", or "hf:<id>") on c: the entry keyed by
// its basename or "<basename>@<root>", a node-local copy first, else the
// first in file order (checkpoint, infx/launch/drivers/srt/models.py@0f5081e3).
// ok is false when the cluster stages none. models.py's OVERRIDES table
// (per-cluster exceptions chosen by model prefix, precision and
// framework) is launcher policy, not the record, and is not applied here.
func (c *Cluster) Checkpoint(model string) (Checkpoint, bool) {
	model = strings.TrimPrefix(model, "hf:")
	base := model[strings.LastIndex(model, "/")+1:]
	best := ""
	for _, key := range c.Models.EntryOrder {
		name, _, _ := strings.Cut(key, "@")
		if name != base {
			continue
		}
		if best == "" || !c.nodeLocal(best) && c.nodeLocal(key) {
			best = key
		}
	}
	if best == "" {
		return Checkpoint{}, false
	}
	e := c.Models.Entries[best]
	vol := c.Slurm.Volumes[e.Root]
	return Checkpoint{Key: best, Volume: e.Root, Dir: e.Dir, Path: strings.TrimSuffix(vol.Path, "/") + "/" + e.Dir, NodeLocal: vol.Visibility == NodeLocal}, true
}

func (c *Cluster) nodeLocal(key string) bool {
	return c.Slurm.Volumes[c.Models.Entries[key].Root].Visibility == NodeLocal
}

// SingleNodeModel is what a single-node recipe's hf:<model> serves on c:
// the staged checkpoint where srt-slurm.single-node-models is "staged"
// and the cluster stages one, else the Hub id ("hf:<model>"), as
// single_node_model_path does (models.py@0f5081e3).
func (c *Cluster) SingleNodeModel(model string) string {
	id := strings.TrimPrefix(model, "hf:")
	if srt := c.Slurm.SrtSlurm; srt != nil && srt.SingleNodeModels == "staged" {
		if cp, ok := c.Checkpoint(id); ok {
			return cp.Path
		}
	}
	return "hf:" + id
}
