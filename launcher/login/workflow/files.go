package workflow

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/slurm"
)

// The files InferenceX's multi-node launcher leaves in the workspace
// besides the results (infx/launch/drivers/srt/submit.py@43c3fcfc,
// MULTINODE_SUBMISSION; drivers/srt/checkout.py, run_setup): srtctl
// apply's --json answer, from which it takes the job id and output
// directory (single_node.py@fe28a8b8 submission_fields: status
// "submitted", slurm_job_id, output_dir), and the log of its setup (`make
// setup`), which the workflow uploads with the server logs
// (benchmark-multinode-tmpl.yml, "Upload server logs"). Nothing in the
// workflow reads srt-submission.json; a person, or a later step that
// wants the job, does.
const (
	SubmissionFile = "srt-submission.json"
	SetupLogFile   = "srt-setup.log"
)

// A single-node point's launch leaves its submission and its logs under
// names of their own (submit.py@43c3fcfc SINGLE_NODE_SUBMISSION;
// drivers/srt/collect.py@4847f2da SINGLE_NODE_LOGS, finish_single_node:
// the job's output directory tarred with its logs/ inside), never the
// multi-node ones: InferenceX's single-node template uploads
// srt-single-node-logs.tar.gz with srt-setup.log, and the site's reader
// lists its logs/ entries (server-log-artifacts tests, stored id
// 71556928812).
const (
	SingleNodeSubmissionFile = "srt-single-node-submission.json"
	SingleNodeLogsBundle     = "srt-single-node-logs.tar.gz"
)

// submissionFile is where a launch of this kind records its job.
func submissionFile(multinode bool) string {
	if multinode {
		return SubmissionFile
	}
	return SingleNodeSubmissionFile
}

// Submission is srt-submission.json: srtctl's three fields, so a reader of
// theirs reads ours, then what slurmbench adds (the run directory is the
// job's output directory: its logs/ and results/ are there).
type Submission struct {
	Status     string `json:"status"` // "submitted"
	SlurmJobID int64  `json:"slurm_job_id"`
	OutputDir  string `json:"output_dir"`
	JobName    string `json:"job_name"`
	RunID      string `json:"run_id"`
	RunDir     string `json:"run_dir"`
	Logs       string `json:"logs"`
	Results    string `json:"results"`
	Cluster    string `json:"cluster,omitempty"`
	// Tags are InferenceX's srtctl --tags for the job (JobTags), when the
	// record sets a job-tag: slurmbench has no job metadata to put them in.
	Tags        string `json:"tags,omitempty"`
	SubmittedAt string `json:"submitted_at"` // RFC 3339, UTC
	Producer    string `json:"producer"`
}

// NewSubmission is the record of job id of plan pl, submitted at t.
func NewSubmission(pl *plan.Plan, id slurm.JobID, cluster, producer string, t time.Time) Submission {
	return Submission{Status: "submitted", SlurmJobID: int64(id), OutputDir: pl.RunDir, JobName: pl.Name,
		RunID: pl.RunID, RunDir: pl.RunDir, Logs: pl.Layout.Logs, Results: pl.Layout.Results, Cluster: cluster,
		SubmittedAt: t.UTC().Format(time.RFC3339), Producer: producer}
}

// writeSubmission writes s to dir/name atomically.
func writeSubmission(dir, name string, s Submission) error {
	if dir == "" {
		return nil
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return writeFile(filepath.Join(dir, name), append(data, '\n'))
}

// removeStale removes what an earlier launch in the same workspace left
// under name, so a launch that fails before it submits leaves no record of
// another's job.
func removeStale(dir, name string) error {
	if dir == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing the earlier %s: %w", name, err)
	}
	return nil
}

// maxSetupLog bounds srt-setup.log: an import that prints without end
// keeps its head, and the note says how much was dropped.
const maxSetupLog = 4 << 20

// setupLog copies what the launch prints before its job is submitted —
// the plan, where each profile value came from, the preflight, the image
// import and model staging — into srt-setup.log, as InferenceX's launcher
// keeps its setup's output there. Write seals it: what follows (the job's
// own progress) stays on stderr only.
type setupLog struct {
	mu      sync.Mutex
	buf     []byte
	dropped int64
	sealed  bool
}

func (l *setupLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if l.sealed {
		return n, nil
	}
	if room := max(maxSetupLog-len(l.buf), 0); room < len(p) {
		l.dropped += int64(len(p) - room)
		p = p[:room]
	}
	l.buf = append(l.buf, p...)
	return n, nil // never a short write: the copy must not fail the launch's stderr
}

// Seal writes the log to dir/srt-setup.log atomically, once; later calls
// and writes do nothing.
func (l *setupLog) Seal(dir string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sealed || dir == "" {
		return nil
	}
	l.sealed = true
	data := l.buf
	if l.dropped > 0 {
		data = append(data[:len(data):len(data)], fmt.Sprintf("\n[slurmbench: %d more bytes of setup output not kept]\n", l.dropped)...)
	}
	return writeFile(filepath.Join(dir, SetupLogFile), data)
}

// createMountHosts creates the host directories of the volumes the job
// mounts before it is submitted (runners.Cluster.CreateMountHosts, which
// matrix calls too).
func createMountHosts(c *runners.Cluster, r srtlanes.Request) error {
	return c.CreateMountHosts(r)
}
