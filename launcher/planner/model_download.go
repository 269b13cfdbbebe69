package planner

import (
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// modelDownloadScript is srtctl's model pre-download (do_sweep.py,
// _ensure_model_cached) as a fixed script: HF_HOME is $1 and the model id
// $2, where srtctl formats both, shell-quoted, into its `bash -c` string.
// It clears download locks older than 30 minutes that a crashed job left
// in the shared cache, asks the CLI offline first (a cached model costs no
// network), and downloads otherwise, with `hf download` or the older
// `huggingface-cli download` when the image has no `hf`. Its exit status
// is the download's. The command is the file's last line, word for word
// srtctl's once $1 and $2 are filled in (TestSrtctlParity compares them).
const modelDownloadScript = `# slurmbench: the model pre-download, before any worker starts.
# $1 = HF_HOME (the backend environment's), $2 = the Hugging Face model id.
export HF_HOME="$1"; find "$1" -name '*.lock' -mmin +30 -delete 2>/dev/null; DL_CMD='hf download'; command -v hf >/dev/null 2>&1 || DL_CMD='huggingface-cli download'; if HF_HUB_OFFLINE=1 $DL_CMD "$2" --quiet 2>/dev/null; then echo 'Model already cached'; else echo 'Downloading model...'; $DL_CMD "$2" --quiet; fi
`

// modelDownloadName names the step, its log and its script.
const modelDownloadName = "model_download"

// addModelDownload adds srtctl's model pre-download for an hf: model: one
// step on the first worker node, in the engine image with the job's mounts,
// that fills the Hugging Face cache before the workers start, so they do
// not all download the model at once and contend for the cache's locks.
// srtctl runs it only when a backend environment (prefill, then decode,
// then aggregated) sets HF_HOME, the cache the workers share; without one
// each worker downloads into its own default cache. Like srtctl's, the
// step gets no srun_options, no ENROOT_REMAP_ROOT and none of the
// environment srtctl sets on workers (it runs its command without the
// wrapper that exports it); HF_HOME is its first argument.
func (b *builder) addModelDownload(node int) {
	id, ok := strings.CutPrefix(b.plan.Model.Source, "hf:")
	if !ok || b.backendType() == "mock" {
		return
	}
	home := b.hfHome()
	if home == "" {
		return
	}
	script := filepath.Join(b.plan.Layout.Logs, modelDownloadName+".sh")
	proc := plan.Process{
		Name: modelDownloadName, Role: plan.RolePrepare, Nodes: []int{node},
		Container: true, Mounts: b.mounts(), Log: b.logPath(modelDownloadName),
		// /logs is the logs directory in the container.
		Argv:  []string{"bash", "/logs/" + filepath.Base(script), home, id},
		Files: map[string]string{script: modelDownloadScript},
		Env:   map[string]string{},
	}
	// The profile's fixed variables are the cluster's (a proxy, an HF
	// endpoint): srtctl's step inherits the job's environment.
	for k, v := range b.p.Env.Set {
		proc.Env[k] = v
	}
	b.add(proc)
}

// hfHome is srtctl's _get_hf_home: HF_HOME from the prefill, decode, then
// aggregated environment, untemplated; "" when none sets it.
func (b *builder) hfHome() string {
	for _, role := range []plan.Role{plan.RolePrefill, plan.RoleDecode, plan.RoleAgg} {
		if v, ok := b.roleEnv(role).Strings()["HF_HOME"]; ok {
			return v
		}
	}
	return ""
}
