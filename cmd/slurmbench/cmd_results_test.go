package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/results"
)

// runResults runs "slurmbench results ..." in-process and returns stdout,
// stderr and the exit code main would use.
func runResults(t *testing.T, args ...string) (string, string, exitcode.Code) {
	t.Helper()
	return runCLI(t, append([]string{"results"}, args...)...)
}

func TestResultsName(t *testing.T) {
	tests := []struct {
		args     []string
		want     string
		wantCode exitcode.Code
		wantErr  string
	}{
		{args: []string{"name", "--result-filename", "RF", "--config", "sa-bench_isl_8192_osl_1024", "--conc", "2048", "--gpus", "24", "--ctx", "16", "--gen", "8"},
			want: "RF_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json\n"},
		{args: []string{"name", "--result-filename", "RF", "--config", "sa-bench_isl_1024_osl_1024", "--conc", "64", "--gpus", "8"},
			want: "RF_sa-bench_isl_1024_osl_1024_conc64_gpus_8.json\n"},
		{args: []string{"name", "--result-filename", "RF", "--config", "c", "--conc", "8", "--gpus", "24", "--ctx", "16"},
			wantCode: exitcode.Config, wantErr: "--ctx and --gen go together"},
		{args: []string{"name", "--result-filename", "R/F", "--config", "c", "--conc", "8", "--gpus", "8"},
			wantCode: exitcode.Config, wantErr: `result filename "R/F": must not contain '/'`},
		{args: []string{"name", "--config", "c", "--conc", "8", "--gpus", "8"},
			wantCode: exitcode.Config, wantErr: "--result-filename is required"},
		{args: []string{"name", "--result-filename", "RF", "--config", "c", "--conc", "x", "--gpus", "8"},
			wantCode: exitcode.Config, wantErr: `invalid value "x"`},
		{args: []string{"name", "--result-filename", "RF", "--config", "c", "--conc", "8", "--gpus", "25", "--ctx", "16", "--gen", "8"},
			wantCode: exitcode.Config, wantErr: "gpus 25 is not ctx 16 + gen 8"},
	}
	for _, tt := range tests {
		out, errOut, code := runResults(t, tt.args...)
		if code != tt.wantCode || out != tt.want || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("results %v:\n stdout %q, stderr %q, exit %d\n want %q, %q, exit %d", tt.args, out, errOut, code, tt.want, tt.wantErr, tt.wantCode)
		}
	}

	// A long RESULT_FILENAME is bounded the same way the library bounds
	// it, and kept whole.
	rf := strings.Repeat("dsr1_8k1k_fp4_", 12) // 168 bytes: config shortened
	out, _, code := runResults(t, "name", "--result-filename", rf, "--config", "sa-bench_isl_8192_osl_1024", "--conc", "2048", "--gpus", "24", "--ctx", "16", "--gen", "8")
	want, _ := results.StagedName(rf, "sa-bench_isl_8192_osl_1024", results.PointID{Concurrency: 2048, GPUs: 24, PrefillGPUs: 16, DecodeGPUs: 8})
	if code != 0 || out != want+"\n" || len(want) > results.MaxStagedNameLen || !strings.HasPrefix(want, rf+"_") {
		t.Errorf("long name: %q (exit %d), want %q", out, code, want)
	}
	// One too long for any staged name is refused, naming both lengths
	// (177 bytes leave the config its 21-byte "-<hash>" beside this tail).
	rf = strings.Repeat("dsr1_8k1k_fp4_", 16) // 224 bytes
	out, errOut, code := runResults(t, "name", "--result-filename", rf, "--config", "sa-bench_isl_8192_osl_1024", "--conc", "2048", "--gpus", "24", "--ctx", "16", "--gen", "8")
	if code != exitcode.Config || out != "" || !strings.Contains(errOut, "224 bytes") || !strings.Contains(errOut, "177 bytes") {
		t.Errorf("too long: %q %q (exit %d), want exit 2 naming 224 and 177 bytes", out, errOut, code)
	}
}

func TestResultsParse(t *testing.T) {
	out, _, code := runResults(t, "parse", "results_concurrency_64_gpus_8.json", "RF_cfg_conc2048_gpus_24_ctx_16_gen_8.json")
	want := "CONC=64 GPUS=8 PREFILL_GPUS=8 DECODE_GPUS=0\nCONC=2048 GPUS=24 PREFILL_GPUS=16 DECODE_GPUS=8\n"
	if code != 0 || out != want {
		t.Errorf("parse: %q (exit %d), want %q", out, code, want)
	}
	out, _, _ = runResults(t, "parse", "--json", "RF_cfg_conc2048_gpus_24_ctx_16_gen_8.json")
	if !strings.Contains(out, `"prefix":"RF_cfg"`) || !strings.Contains(out, `"form":"staged"`) {
		t.Errorf("parse --json: %s", out)
	}
	_, errOut, code := runResults(t, "parse", "RF_conc_gpus_.json")
	if code != exitcode.Config || !strings.Contains(errOut, "not a result name") {
		t.Errorf("unparsable name: %q exit %d", errOut, code)
	}
}

func TestResultsCompare(t *testing.T) {
	data := filepath.Join("..", "..", "results", "compare", "testdata", "compare")
	base, cand := filepath.Join(data, "baseline"), filepath.Join(data, "candidate")

	out, errOut, code := runResults(t, "compare", base, cand)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"| Point | Metric | Baseline | Candidate | Delta % |",
		"| ctx16/gen8 c2048 | tput/GPU | 8534.8 | 8783.7 | +2.9 % |",
		"| ctx16/gen8 c4096 | tput/GPU | N/A | 9100.0 | N/A |",
		"TTFT and TPOT in ms, E2E in s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}

	out, _, code = runResults(t, "compare", "--json", base, cand)
	if code != 0 || !strings.Contains(out, `"metric": "median_tpot_ms"`) || !strings.Contains(out, `"delta_pct": null`) {
		t.Errorf("compare --json: exit %d\n%s", code, out)
	}

	_, errOut, code = runResults(t, "compare", base)
	if code != exitcode.Config || !strings.Contains(errOut, "want BASELINE and CANDIDATE") {
		t.Errorf("one argument: %q exit %d", errOut, code)
	}
	empty := t.TempDir()
	_, errOut, code = runResults(t, "compare", empty, cand)
	if code != exitcode.Config || !strings.Contains(errOut, "baseline: loading results: no SA-Bench or gsm8k result files") {
		t.Errorf("empty baseline: %q exit %d", errOut, code)
	}
}
