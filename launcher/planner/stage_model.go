package planner

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// stageDir settles model.stage_dir for a local model: the node-local copy
// is <stage_dir>/<the model directory's name> (srtctl's
// RuntimeContext.staged_model_path). srtctl ignores stage_dir for an hf:
// model, and so does slurmbench. srtctl expands $VARIABLES in it on the
// job's first node; a plan holds no value the login node cannot know, so
// the path must be written out, absolute.
func (b *builder) stageDir(m *plan.Model) error {
	dir := b.r.Model.StageDir
	if dir == "" || strings.HasPrefix(m.Source, "hf:") {
		return nil
	}
	const field = "model.stage_dir"
	switch {
	case strings.Contains(dir, "$"):
		return b.fail(field, "%q: write the node-local directory out; srtctl expands environment variables in it on the job's node, which a plan made on the login node cannot", dir)
	case !filepath.IsAbs(dir):
		return b.fail(field, "%q is not an absolute path", dir)
	case filepath.Clean(dir) == "/" || filepath.Dir(filepath.Clean(dir)) == "/":
		return b.fail(field, "%q: its parent directory is mounted into every container; name a directory below a node-local root (e.g. /raid/scratch/models)", dir)
	case strings.ContainsAny(dir, ",:"):
		return b.fail(field, "%q contains a comma or colon, which container mount lists cannot carry", dir)
	}
	m.Staged = filepath.Join(dir, filepath.Base(m.Source))
	return nil
}

// stageModelName names node n's staging step and its log.
func stageModelName(node int) string { return fmt.Sprintf("stage_model_%d", node) }

// addStageModel adds srtctl's model staging (do_sweep.py _stage_model
// @c88ef731): one step per worker node, all at once, each copying /model
// to the staged path in the engine image with the job's mounts, before any
// worker starts; the job fails if any node's copy fails. The copy is
// `slurmbench stage-model /model <staged path>` (launcher/job/stagemodel),
// with the arguments srtctl gives its runtime_scripts/stage_model.sh. Like
// srtctl's, the steps get no srun_options and no environment of srtctl's
// workers. Only TRT-LLM workers then load the staged copy (srtctl's
// worker_model_arg); SGLang and vLLM workers still read /model.
func (b *builder) addStageModel(workerNodes []int) {
	// The mock engine stages too: the copy is slurmbench's own, so the
	// test cluster's mock topology runs it as a real job would.
	staged := b.plan.Model.Staged
	if staged == "" {
		return
	}
	for _, node := range workerNodes {
		name := stageModelName(node)
		proc := plan.Process{
			Name: name, Role: plan.RolePrepare, Nodes: []int{node},
			Container: true, Mounts: b.mounts(), Log: b.logPath(name),
			Argv: []string{b.plan.Binary, "stage-model", "/model", staged},
			Env:  map[string]string{},
		}
		for k, v := range b.p.Env.Set {
			proc.Env[k] = v
		}
		b.add(proc)
	}
}

// workerModelArg is the model path a TRT-LLM worker loads (srtctl's
// worker_model_arg): the staged copy when model.stage_dir stages it.
func (b *builder) workerModelArg() string {
	if b.plan.Model.Staged != "" {
		return b.plan.Model.Staged
	}
	return b.plan.Model.Path
}
