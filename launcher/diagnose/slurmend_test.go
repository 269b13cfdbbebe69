package diagnose

import (
	"fmt"
	"testing"
)

// TestSlurmEnded builds each of Slurm's ending lines from its format
// string, as slurmstepd and srun print them for a job and for a step, and
// lines that only look alike.
func TestSlurmEnded(t *testing.T) {
	stepd := func(entity, host, tail string) string {
		return fmt.Sprintf("slurmstepd-%s: error: *** %s ON %s CANCELLED AT 2026-12-03T13:40:18%s ***", host, entity, host, tail)
	}
	ended := []string{
		stepd("JOB 44", "node4", ""),
		stepd("STEP 44.1", "node5", ""),
		stepd("STEP 44.0", "n1", " DUE TO TIME LIMIT"),
		stepd("JOB 7", "gb300-12", " DUE TO PREEMPTION"),
		stepd("STEP 7.3", "gb300-12", " DUE TO JOB REQUEUE"),
		"slurmstepd-node2: error: *** STEP 44.2 STEPD TERMINATED ON node2 AT 2026-12-03T13:40:18 DUE TO JOB NOT RUNNING ***",
		"srun: error: Slurm job 44 has expired",
		"srun: error: Job allocation 44 has been revoked",
		"srun: error: Unable to create step for job 44: Job/step already completing or completed",
	}
	for _, l := range ended {
		noise := []string{"srun: Check SLURM_JOB_ID environment variable. Expired or invalid job 44", "INFO: engine starting"}
		got, ok := SlurmEnded(append(noise, "  "+l+"  "))
		if !ok || got != l {
			t.Errorf("SlurmEnded(... %q) = %q, %v; want the line, true", l, got, ok)
		}
	}
	notEnded := []string{
		stepd("STEP 44.1", "node5", " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"),
		"slurmstepd-node5: error: *** STEP 44.1 ON node5 FAILED (non-zero exit code or other failure mode) ***",
		"srun: error: node5: task 0: Exited with exit code 1",
		"srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
		"srun: forcing job termination",
		"RuntimeError: request cancelled at shutdown",
		"INFO: job 44 has expired tokens", // not srun's line
		"srun: error: Unable to create step for job 44: Requested node configuration is not available",
	}
	for _, l := range notEnded {
		if got, ok := SlurmEnded([]string{l}); ok {
			t.Errorf("SlurmEnded(%q) = %q, true; Slurm did not say it ends the job", l, got)
		}
	}
	if got, ok := SlurmEnded(nil); ok || got != "" {
		t.Errorf("SlurmEnded(nil) = %q, %v", got, ok)
	}
}
