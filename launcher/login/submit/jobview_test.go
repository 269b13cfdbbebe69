package submit

import (
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

func jobViewPlan() *plan.Plan {
	return &plan.Plan{
		RunID: "r1", RunDir: "/shared/runs/r1", Binary: "/shared/runs/r1/bin/slurmbench", PlanFile: "/shared/runs/r1/plan.json",
		Layout:         rundir.New("/shared/runs/r1"),
		EnvPassthrough: []string{"HF_TOKEN"},
		Slurm: plan.Slurm{
			JobName: "dsr1-4p1d", Partition: "batch_1", Account: "benchmarks", TimeLimitMinutes: 240,
			Nodes: 9, GPUsPerNode: 4, Exclusive: true, Comment: "slurmbench:r1",
			Directives: map[string]string{"segment": "9", "mem": "0", "comment": "reaper-exempt"},
		},
	}
}

// TestJobView pins the job section of render: every request field, the
// directives with the job-description fields they become, and the script.
func TestJobView(t *testing.T) {
	got, err := JobView(jobViewPlan())
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/jobview.golden", []byte(got))
}

// TestJobViewRefusesWhatRunRefuses: a directive run could not submit fails
// the view with the same error JobSpec gives.
func TestJobViewRefusesWhatRunRefuses(t *testing.T) {
	p := jobViewPlan()
	p.Slurm.Directives = map[string]string{"segmnet": "9"}
	_, err := JobView(p)
	_, specErr := JobSpec(p, nil)
	if err == nil || specErr == nil || err.Error() != specErr.Error() || !strings.Contains(err.Error(), `"segmnet"`) {
		t.Fatalf("JobView error %v, JobSpec error %v; want the same error naming the directive", err, specErr)
	}
}
