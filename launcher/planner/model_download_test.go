package planner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestModelDownloadScript runs the pre-download script with fake `hf` and
// `huggingface-cli` programs: stale locks go, fresh ones stay; the offline
// probe comes first and a cached model downloads nothing; `hf` is
// preferred, `huggingface-cli` the fallback; the exit status is the
// download's.
func TestModelDownloadScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	// fake logs each call with HF_HOME and HF_HUB_OFFLINE, and succeeds
	// offline only when $FAKE_CACHED is set, online unless $FAKE_FAIL is.
	const fake = `#!/bin/sh
echo "$(basename "$0") $* home=$HF_HOME offline=${HF_HUB_OFFLINE:-0}" >> "$FAKE_LOG"
if [ "${HF_HUB_OFFLINE:-0}" = 1 ]; then [ -n "$FAKE_CACHED" ]; exit $?; fi
[ -z "$FAKE_FAIL" ]
`
	cases := []struct {
		name            string
		programs        []string // fakes on PATH
		cached, fail    bool
		wantCalls       []string
		wantOut         string
		wantExitNonzero bool
	}{
		{"hf, not cached", []string{"hf", "huggingface-cli"}, false, false,
			[]string{"hf download org/model --quiet home=HOME offline=1", "hf download org/model --quiet home=HOME offline=0"}, "Downloading model...", false},
		{"hf, cached", []string{"hf"}, true, false,
			[]string{"hf download org/model --quiet home=HOME offline=1"}, "Model already cached", false},
		{"huggingface-cli fallback", []string{"huggingface-cli"}, false, false,
			[]string{"huggingface-cli download org/model --quiet home=HOME offline=1", "huggingface-cli download org/model --quiet home=HOME offline=0"}, "Downloading model...", false},
		{"download fails", []string{"hf"}, false, true,
			[]string{"hf download org/model --quiet home=HOME offline=1", "hf download org/model --quiet home=HOME offline=0"}, "Downloading model...", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bin, home := filepath.Join(dir, "bin"), filepath.Join(dir, "hf home")
			for _, d := range []string{bin, filepath.Join(home, "hub")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range c.programs {
				writeFile(t, filepath.Join(bin, p), fake)
				if err := os.Chmod(filepath.Join(bin, p), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			stale, fresh := filepath.Join(home, "hub", "a.lock"), filepath.Join(home, "hub", "b.lock")
			writeFile(t, stale, "")
			writeFile(t, fresh, "")
			old := time.Now().Add(-31 * time.Minute)
			if err := os.Chtimes(stale, old, old); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, "model_download.sh")
			writeFile(t, script, modelDownloadScript)
			log := filepath.Join(dir, "calls")
			cmd := exec.Command(bash, script, home, "org/model")
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "FAKE_LOG=" + log}
			if c.cached {
				cmd.Env = append(cmd.Env, "FAKE_CACHED=1")
			}
			if c.fail {
				cmd.Env = append(cmd.Env, "FAKE_FAIL=1")
			}
			out, err := cmd.CombinedOutput()
			if (err != nil) != c.wantExitNonzero {
				t.Errorf("exit: %v, want nonzero %v\n%s", err, c.wantExitNonzero, out)
			}
			if strings.TrimSpace(string(out)) != c.wantOut {
				t.Errorf("output %q, want %q", out, c.wantOut)
			}
			calls, _ := os.ReadFile(log)
			want := strings.ReplaceAll(strings.Join(c.wantCalls, "\n"), "HOME", home) + "\n"
			if string(calls) != want {
				t.Errorf("calls:\n%s\nwant:\n%s", calls, want)
			}
			if _, err := os.Stat(stale); err == nil {
				t.Error("a lock older than 30 minutes was kept")
			}
			if _, err := os.Stat(fresh); err != nil {
				t.Errorf("a fresh lock was removed: %v", err)
			}
		})
	}
}
