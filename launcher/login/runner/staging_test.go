package runner

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// CheckStaging is the plan-time refusal: a RESULT_FILENAME one byte too
// long for the plan's longest point tail is refused before anything is
// submitted, naming both lengths; one that fits passes, and its staged
// names keep it whole.
func TestCheckStagingRefusesAResultFilenameTooLong(t *testing.T) {
	pl := &plan.Plan{Name: "p", GPUs: plan.GPUCount{Total: 24, Prefill: 16, Decode: 8},
		Points:    []plan.BenchPoint{{Concurrency: 4}, {Concurrency: 2048}},
		Benchmark: plan.Benchmark{ResultDir: "/logs/sa-bench_isl_8192_osl_1024"}}
	// The longest point's tail leaves config its 21-byte "-<hash>"
	// stand-in (InferenceX's point_filename), and no more.
	longest := "_conc2048_gpus_24_ctx_16_gen_8.json"
	max := results.MaxStagedNameLen - len(longest) - len("_") - 21
	ok := strings.Repeat("r", max)
	if err := CheckStaging(pl, CollectOptions{ResultFilename: ok}); err != nil {
		t.Fatalf("%d-byte RESULT_FILENAME (the most that fits): %v", max, err)
	}
	for _, p := range pl.Points {
		name, err := results.StagedName(ok, "sa-bench_isl_8192_osl_1024", pl.ResultPoint(p.Concurrency))
		if err != nil || !strings.HasPrefix(name, ok+"_") {
			t.Errorf("conc %d: %q, %v", p.Concurrency, name, err)
		}
	}
	err := CheckStaging(pl, CollectOptions{ResultFilename: ok + "r"})
	var tl *results.NameTooLongError
	if !errors.As(err, &tl) {
		t.Fatalf("%d-byte RESULT_FILENAME: %v, want a NameTooLongError", max+1, err)
	}
	for _, want := range []string{"RESULT_FILENAME", strconv.Itoa(max+1) + " bytes", strconv.Itoa(max) + " bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
}

func TestSummaryListsStagedFiles(t *testing.T) {
	pl := &plan.Plan{Name: "p", GPUs: plan.GPUCount{Total: 8}, Mode: "aggregated"}
	res := &Result{Collected: &Collected{Staged: []results.StagedFile{
		{Dest: "/ws/RF_sa-bench_isl_1_osl_1_conc4_gpus_8.json"}, {Dest: "/ws/manifest.json"},
		{Dest: "/other/manifest.json"}, // a second copy of the same name is one file for the workflow
	}}}
	got := Summary(pl, res, nil).StagedFiles
	if strings.Join(got, ",") != "RF_sa-bench_isl_1_osl_1_conc4_gpus_8.json,manifest.json" {
		t.Errorf("staged files %q", got)
	}
}
