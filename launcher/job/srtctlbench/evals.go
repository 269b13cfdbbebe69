package srtctlbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// defaultModel is the name srtctl's mmlu and gpqa scripts send when the
// server does not say (mmlu always; gpqa when /v1/models fails).
const defaultModel = "deepseek-ai/DeepSeek-R1"

// longbenchModel is the name srtctl's longbenchv2 script always sends.
const longbenchModel = "nvidia/DeepSeek-R1-0528-NVFP4-v2"

// sglangEval runs sglang's run_eval for mmlu, gpqa, longbenchv2 and gsm8k
// (srtctl's scripts/<type>/bench.sh and gsm8k/sglang-bench.sh @c88ef731):
// run_eval writes <eval>_*.json (and an HTML report for longbench_v2 and
// gsm8k) into /tmp; the newest of each is copied to /logs/accuracy.
//
// Arguments: mmlu and gpqa ENDPOINT [NUM_EXAMPLES] [MAX_TOKENS] [REPEAT]
// [NUM_THREADS]; longbenchv2 ENDPOINT [MAX_CONTEXT_LENGTH] [NUM_THREADS]
// [MAX_TOKENS] [NUM_EXAMPLES] [CATEGORIES]; gsm8k-sglang ENDPOINT
// [NUM_EXAMPLES] [MAX_TOKENS] [NUM_THREADS] [NUM_SHOTS] [TEMPERATURE]
// [TOP_P] [TOP_K].
func (r *run) sglangEval(ctx context.Context) error {
	endpoint := r.arg(0, "")
	if endpoint == "" {
		return fmt.Errorf("%s: the endpoint (first argument) is required", r.o.Type)
	}
	r.defaultEnv("OPENAI_API_KEY", "EMPTY")
	resultDir := filepath.Join(r.o.Logs, "accuracy")
	if err := os.MkdirAll(resultDir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", r.o.Type, err)
	}
	argv, prefix, html := r.runEvalArgv(ctx, endpoint)
	r.logf("%s: %s", r.o.Type, strings.Join(argv, " "))
	if err := r.exec(ctx, "", argv...); err != nil {
		return err
	}
	r.copyNewest(prefix+"*.json", resultDir, true)
	if html {
		r.copyNewest(prefix+"*.html", resultDir, false)
	}
	r.logf("%s evaluation complete", r.o.Type)
	return nil
}

// runEvalArgv is the run_eval command line for the type, the prefix of the
// files it leaves in /tmp, and whether it writes an HTML report.
func (r *run) runEvalArgv(ctx context.Context, endpoint string) ([]string, string, bool) {
	base := []string{"python3", "-m", "sglang.test.run_eval", "--base-url", endpoint}
	switch r.o.Type {
	case "mmlu", "gpqa":
		model := defaultModel
		if r.o.Type == "gpqa" {
			if m := r.servedModel(ctx, endpoint); m != "" {
				model = m
			} else {
				r.logf("Warning: the served model's name is not known (%s/v1/models); sending %s", endpoint, model)
			}
		}
		examples, tokens, repeat, threads := "200", "2048", "8", "512"
		if r.o.Type == "gpqa" {
			examples, tokens, threads = "198", "32768", "128"
		}
		return append(base, "--model", model, "--eval-name", r.o.Type,
			"--num-examples", r.arg(1, examples), "--max-tokens", r.arg(2, tokens),
			"--repeat", r.arg(3, repeat), "--num-threads", r.arg(4, threads)), r.o.Type + "_", false
	case "longbenchv2":
		// srtctl's script joins these into one string and evals it, so each
		// value is split at blanks; Fields does the same.
		argv := append(base, "--model", longbenchModel, "--eval-name", "longbench_v2", "--max-tokens")
		argv = append(argv, strings.Fields(r.arg(3, "16384"))...)
		argv = append(argv, "--max-context-length")
		argv = append(argv, strings.Fields(r.arg(1, "128000"))...)
		argv = append(argv, "--num-threads")
		argv = append(argv, strings.Fields(r.arg(2, "16"))...)
		if n := r.arg(4, ""); n != "" {
			argv = append(append(argv, "--num-examples"), strings.Fields(n)...)
		}
		if c := r.arg(5, ""); c != "" {
			argv = append(append(argv, "--categories"), strings.Fields(c)...)
		}
		return argv, "longbench_v2_", true
	default: // gsm8k-sglang: no --model, run_eval asks the server
		argv := append(base, "--eval-name", "gsm8k", "--num-examples", r.arg(1, "1319"), "--max-tokens", r.arg(2, "16384"),
			"--num-threads", r.arg(3, "512"), "--num-shots", r.arg(4, "5"))
		for _, o := range []struct {
			i    int
			flag string
		}{{5, "--temperature"}, {6, "--top-p"}, {7, "--top-k"}} {
			if v := r.arg(o.i, ""); v != "" {
				argv = append(argv, o.flag, v)
			}
		}
		return argv, "gsm8k_", true
	}
}

// servedModel is the first model the server lists at /v1/models, or ""
// when it cannot be read.
func (r *run) servedModel(ctx context.Context, endpoint string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/v1/models", nil)
	if err != nil {
		return ""
	}
	resp, err := r.o.HTTP.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return ""
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return ""
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil || len(list.Data) == 0 {
		return ""
	}
	return list.Data[0].ID
}

// copyNewest copies the most recently modified file of /tmp matching
// pattern into dir; a missing file is a warning when warn is set, as in
// srtctl's scripts, never an error.
func (r *run) copyNewest(pattern, dir string, warn bool) {
	matches, _ := filepath.Glob(filepath.Join(r.o.Tmp, pattern))
	var newest string
	var newestMod int64
	for _, m := range matches {
		st, err := os.Stat(m)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if mod := st.ModTime().UnixNano(); newest == "" || mod > newestMod {
			newest, newestMod = m, mod
		}
	}
	if newest == "" {
		if warn {
			r.logf("Warning: no %s in %s", pattern, r.o.Tmp)
		}
		return
	}
	dst := filepath.Join(dir, filepath.Base(newest))
	if err := atomicfile.CopyFile(newest, dst, atomicfile.Options{Overwrite: true}); err != nil {
		r.logf("Warning: %v", err)
		return
	}
	r.logf("Results saved to: %s", dst)
}

// copyMatches copies every file of src matching pattern into dir (lm-eval's
// cp -v, whose failures are ignored).
func (r *run) copyMatches(src, pattern, dir string) {
	matches, _ := filepath.Glob(filepath.Join(src, pattern))
	for _, m := range matches {
		dst := filepath.Join(dir, filepath.Base(m))
		if err := atomicfile.CopyFile(m, dst, atomicfile.Options{Overwrite: true}); err != nil {
			r.logf("Warning: %v", err)
			continue
		}
		r.logf("'%s' -> '%s'", m, dst)
	}
}
