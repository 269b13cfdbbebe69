package workflow

import (
	"context"
	"path"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/login/configsdir"
)

// A lane's shared_run_root requests (gb200-nv: minimaxm3, kimik3, qwen3.5,
// glm5.2, dsv4 on dynamo-vllm, dsv4 AgentX on dynamo-sglang) run where the
// compute nodes may not see the runner's workspace: InferenceX puts their
// srt-slurm checkout on the record's shared-run-root and stages a copy of
// the workspace beside it, which the job mounts as /infmax-workspace
// (drivers/srt/checkout.py, stored id 71516409484: compute_workspace,
// _WORKSPACE_EXCLUDES). slurmbench's run directory is already under
// shared-run-root for every point on such a record; for these requests the
// workspace the job mounts — and the /configs staged in it — is a copy
// there too.

// workspaceExcludes are what the copy leaves out, as rsync's patterns
// without a leading '/' match an entry's name at any depth ("x/": only a
// directory): this repository's history, srt-slurm checkouts and outputs
// (the recipe mirror, srt-slurm-recipes, among them: the job reads its
// bound recipe from the run directory), staged logs, squash images — and
// slurmbench's own login-side files (.slurmbench: bound recipes; /configs
// is staged into the copy afresh) and run directories.
var workspaceExcludes = []string{".git/", "srt-slurm*/", "outputs/", "LOGS/", "*.sqsh", ".slurmbench/", "slurmbench-runs/"}

// excluded says whether the entry at rel (slash-separated) is left out.
func excluded(rel string, isDir bool) bool {
	name := path.Base(rel)
	for _, p := range workspaceExcludes {
		dirOnly := strings.HasSuffix(p, "/")
		if dirOnly && !isDir {
			continue
		}
		if ok, _ := path.Match(strings.TrimSuffix(p, "/"), name); ok {
			return true
		}
	}
	return false
}

// SharedWorkspaceDir is where, under the record's shared-run-root, the copy
// of runner's workspace lives: one per runner, replaced by its next run
// (the workflow cancels a runner's jobs before it starts another).
func SharedWorkspaceDir(sharedRunRoot, runner string) string {
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, runner)
	if safe == "" || safe == "." || safe == ".." {
		safe = "_" + safe
	}
	return filepath.Join(sharedRunRoot, "slurmbench-runs", "workspaces", "infmax-workspace-"+safe)
}

// StageWorkspace copies workspace to dest without workspaceExcludes,
// replacing an earlier copy whole, then stages the workspace's /configs in
// the copy (configsdir.Under).
func StageWorkspace(ctx context.Context, workspace, dest string) error {
	if err := configsdir.StageTree(ctx, workspace, dest, excluded); err != nil {
		return err
	}
	return configsdir.Stage(ctx, workspace, configsdir.Under(dest))
}
