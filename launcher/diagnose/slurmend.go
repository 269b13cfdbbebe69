package diagnose

import "strings"

// slurmEnding are the lines Slurm itself prints when it is ending a job or
// a step: scancel, the time limit, preemption, a requeue. They are the
// evidence that a step died because its job is going away, not because
// the engine failed. Cancelling a job signals every node's steps and the
// driver's batch step independently, so a worker's srun may report the job
// gone seconds before the driver's own SIGTERM arrives.
//
// The texts are slurmstepd's and srun's format strings (Slurm 24.11, the
// test cluster's Debian build: `strings slurmstepd-wlm srun`):
//
//	*** %s ON %s CANCELLED AT %s ***                  (%s: "JOB 44" or "STEP 44.1")
//	*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***
//	*** %s ON %s CANCELLED AT %s DUE TO PREEMPTION ***
//	*** %s ON %s CANCELLED AT %s DUE TO JOB REQUEUE ***
//	*** %s STEPD TERMINATED ON %s AT %s DUE TO JOB NOT RUNNING ***
//	srun: error: Slurm job %u has expired
//	srun: error: Job allocation %u has been revoked
//	srun: error: Unable to create step for job %u: Job/step already completing or completed
//
// "CANCELLED AT ... DUE TO NODE FAILURE" is not among them: a node that
// failed is a fault of the run, and Classify reports it.
var slurmEnding = res(
	`\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT \S+( DUE TO (TIME LIMIT|PREEMPTION|JOB REQUEUE))? \*\*\*`,
	`\*\*\* (JOB|STEP) \S+ STEPD TERMINATED ON \S+ AT \S+ DUE TO JOB NOT RUNNING \*\*\*`,
	`\bsrun: error: Slurm job \d+ has expired`,
	`\bJob allocation \d+ has been revoked`,
	`\bUnable to create step for job \d+: Job/step already completing or completed`,
)

// SlurmEnded returns the first line in which Slurm says it is ending the
// job or the step, trimmed; ok is false when there is none.
func SlurmEnded(lines []string) (line string, ok bool) {
	for _, l := range lines {
		for _, re := range slurmEnding {
			if re.MatchString(l) {
				return strings.TrimSpace(l), true
			}
		}
	}
	return "", false
}
