package slurm

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// indexEntry is a line of the samples' INDEX.tsv.
type indexEntry struct {
	name, method, path string
	status             int
}

func readIndex(t *testing.T, dir string) map[string]indexEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "INDEX.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]indexEntry{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 4 {
			continue
		}
		status, err := strconv.Atoi(cols[3])
		if err != nil {
			t.Fatalf("INDEX.tsv: bad status in %q", sc.Text())
		}
		out[cols[0]] = indexEntry{name: cols[0], method: cols[1], path: cols[2], status: status}
	}
	return out
}

var versionInPath = regexp.MustCompile(`/(v0\.0\.[0-9]+)/`)

// decoded is what one sample turned into.
type decoded struct {
	err        *APIError
	job        Job // GET job/{id}
	jobs       []Job
	submit     wireSubmit
	ping       []Controller
	nodes      []Node
	partitions []Partition
}

// decodeSample feeds a recorded response through the client's decoder,
// choosing the payload type from the recorded method and path.
func decodeSample(t *testing.T, c *Client, e indexEntry, body []byte) decoded {
	t.Helper()
	version := "v0.0.41"
	if m := versionInPath.FindStringSubmatch(e.path); m != nil {
		version = m[1]
	}
	var d decoded
	_, rest, _ := strings.Cut(e.path, version+"/")
	req := request{method: e.method, root: "slurm", path: rest}
	var out any
	var wj wireJobs
	var wn struct {
		Nodes []wireNode `json:"nodes"`
	}
	var wp struct {
		Partitions []wirePartition `json:"partitions"`
	}
	var wping wirePing
	switch {
	case e.method == http.MethodPost:
		out = &d.submit
	case strings.Contains(e.path, "/job/") || strings.HasSuffix(e.path, "/jobs") || strings.Contains(e.path, "/jobs/"):
		if e.method == http.MethodGet {
			out = &wj
		}
	case strings.Contains(e.path, "/ping"):
		out = &wping
	case strings.Contains(e.path, "/node"):
		out = &wn
	case strings.Contains(e.path, "/partitions"):
		out = &wp
	case strings.Contains(e.path, "/diag"):
		out = &struct{}{}
	}
	d.err = c.decode(req, version, e.status, body, out)
	for _, w := range wj.Jobs {
		d.jobs = append(d.jobs, w.job())
	}
	if len(wj.Jobs) > 0 {
		id, _ := strconv.ParseInt(strings.TrimPrefix(req.path, "job/"), 10, 64)
		j, err := pickJob(JobID(id), wj.Jobs)
		if err != nil {
			t.Fatal(err)
		}
		d.job = j
	}
	d.ping = wping.controllers()
	for _, n := range wn.Nodes {
		d.nodes = append(d.nodes, n.node())
	}
	for _, p := range wp.Partitions {
		d.partitions = append(d.partitions, Partition{Name: p.Name, TotalNodes: int(p.Nodes.Total.Value(0)), TotalCPUs: int(p.CPUs.Total.Value(0)), State: p.Partition.State, MaxTime: time.Duration(p.Maximums.Time.Value(0)) * time.Minute})
	}
	return d
}

// TestDecodeEveryRecordedSample decodes every recorded response: 2xx ones
// must decode without error and error ones must become an *APIError.
// Samples named in sampleExpectations are also checked field by field;
// a new sample without an expectation fails, so none goes unchecked.
func TestDecodeEveryRecordedSample(t *testing.T) {
	dir := samplesDir(t)
	index := readIndex(t, dir)
	files, err := filepath.Glob(filepath.Join(dir, "*.response.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.response.json in %s: %v", dir, err)
	}
	c := offlineClient(t)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".response.json")
		t.Run(name, func(t *testing.T) {
			e, ok := index[name]
			if !ok {
				t.Fatalf("%s is not in INDEX.tsv", name)
			}
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d := decodeSample(t, c, e, body)
			check, ok := sampleExpectations[name]
			if !ok {
				t.Fatalf("no expectation for sample %s: add one to sampleExpectations", name)
			}
			wantErr := e.status >= 300 || check.err != nil
			if wantErr != (d.err != nil) {
				t.Fatalf("status %d: decode error = %v, want error: %v", e.status, d.err, wantErr)
			}
			if check.check != nil {
				check.check(t, d)
			}
			if check.err != nil {
				check.err(t, d.err)
			}
		})
	}
}

type expectation struct {
	check func(*testing.T, decoded)
	err   func(*testing.T, error)
}

func wantJob(want Job) func(*testing.T, decoded) {
	return func(t *testing.T, d decoded) {
		t.Helper()
		compareJob(t, d.job, want)
	}
}

// compareJob checks the fields want sets (zero fields are not compared,
// except State and Exit, which are always compared).
func compareJob(t *testing.T, got, want Job) {
	t.Helper()
	if got.ID != want.ID || got.Name != want.Name || !got.State.Equal(want.State) || got.Exit.Code != want.Exit.Code || got.Exit.Signal != want.Exit.Signal {
		t.Errorf("job = %d %q %s exit %s, want %d %q %s exit %s", got.ID, got.Name, got.State, got.Exit, want.ID, want.Name, want.State, want.Exit)
	}
	if want.Reason != "" && got.Reason != want.Reason {
		t.Errorf("reason = %q, want %q", got.Reason, want.Reason)
	}
	if want.Nodes != "" && got.Nodes != want.Nodes {
		t.Errorf("nodes = %q, want %q", got.Nodes, want.Nodes)
	}
	if want.NodeCount != 0 && got.NodeCount != want.NodeCount {
		t.Errorf("node count = %d, want %d", got.NodeCount, want.NodeCount)
	}
	if want.TimeLimit != 0 && got.TimeLimit != want.TimeLimit {
		t.Errorf("time limit = %s, want %s", got.TimeLimit, want.TimeLimit)
	}
	if want.TRESPerNode != "" && got.TRESPerNode != want.TRESPerNode {
		t.Errorf("tres_per_node = %q, want %q", got.TRESPerNode, want.TRESPerNode)
	}
	if want.User != "" && got.User != want.User {
		t.Errorf("user = %q, want %q", got.User, want.User)
	}
	if want.Partition != "" && got.Partition != want.Partition {
		t.Errorf("partition = %q, want %q", got.Partition, want.Partition)
	}
	if want.Exit.SignalName != "" && got.Exit.SignalName != want.Exit.SignalName {
		t.Errorf("signal name = %q, want %q", got.Exit.SignalName, want.Exit.SignalName)
	}
	if want.StdOut != "" && got.StdOut != want.StdOut {
		t.Errorf("stdout = %q, want %q", got.StdOut, want.StdOut)
	}
	if want.Source != "" && got.Source != want.Source {
		t.Errorf("source = %q, want %q", got.Source, want.Source)
	}
}

func st(parts ...string) State { return ParseState(parts...) }

func wantSubmit(id JobID) expectation {
	return expectation{check: func(t *testing.T, d decoded) {
		t.Helper()
		got := d.submit.JobID
		if got == 0 && d.submit.Result != nil {
			got = d.submit.Result.JobID
		}
		if got != id {
			t.Errorf("submitted job id = %d, want %d", got, id)
		}
	}}
}

func wantAPIError(status int, msg string, predicates ...func(error) bool) expectation {
	return expectation{err: func(t *testing.T, err error) {
		t.Helper()
		var e *APIError
		if !errors.As(err, &e) {
			t.Fatalf("error %v is not an *APIError", err)
		}
		if e.Status != status {
			t.Errorf("status = %d, want %d", e.Status, status)
		}
		if got := err.Error(); got != msg {
			t.Errorf("message = %q\nwant      %q", got, msg)
		}
		for i, p := range predicates {
			if !p(err) {
				t.Errorf("predicate %d is false for %v", i, err)
			}
		}
	}}
}

func not(p func(error) bool) func(error) bool { return func(err error) bool { return !p(err) } }

func wantPing(pinged string) expectation {
	return expectation{check: func(t *testing.T, d decoded) {
		t.Helper()
		if len(d.ping) != 1 || d.ping[0].Pinged != pinged || d.ping[0].Hostname != "slurmctl" || d.ping[0].Latency <= 0 {
			t.Errorf("ping = %+v, want one slurmctl %s with a latency", d.ping, pinged)
		}
	}}
}

func noErrors() expectation { return expectation{} }

var sampleExpectations = map[string]expectation{
	"ping.v0.0.40":          wantPing("UP"),
	"ping.v0.0.41":          wantPing("UP"),
	"ping.v0.0.42":          wantPing("UP"),
	"ok-no-username-header": wantPing("UP"),
	"root-token-ping":       wantPing("UP"),
	// slurmrestd answers a bad token on /ping with 200 and DOWN.
	"err-bad-token.ping": wantPing("DOWN"),

	"get-job-completed": {check: wantJob(Job{ID: 3, Name: "simple", User: "slurmtest", Partition: "debug", State: st("COMPLETED"), Nodes: "n1", NodeCount: 1, StdOut: "/srv/lab/shared/jobs/simple-3.out"})},
	"v0.0.42-get-job":   {check: wantJob(Job{ID: 3, Name: "simple", User: "slurmtest", State: st("COMPLETED"), Nodes: "n1", NodeCount: 1})},
	"get-job-failed":    {check: wantJob(Job{ID: 12, Name: "fail", State: st("FAILED"), Exit: ExitStatus{Code: 3}, Reason: "NonZeroExitCode"})},
	"get-job-cancelled": {check: wantJob(Job{ID: 10, Name: "hog", State: st("CANCELLED"), Exit: ExitStatus{Signal: 15, SignalName: "TERM"}, Nodes: "n[1-4]", NodeCount: 4, TRESPerNode: "gres/gpu:4"})},
	"get-job-timeout":   {check: wantJob(Job{ID: 2, Name: "timeout", State: st("TIMEOUT"), Exit: ExitStatus{Signal: 15, SignalName: "TERM"}, Reason: "TimeLimit", TimeLimit: time.Minute})},
	"get-job-pending":   {check: wantJob(Job{ID: 11, Name: "hog", State: st("PENDING"), Reason: "Resources", TRESPerNode: "gres/gpu:4", NodeCount: 4})},
	"get-job-running": {check: func(t *testing.T, d decoded) {
		compareJob(t, d.job, Job{ID: 5, Name: "disagg", State: st("RUNNING"), Nodes: "n[1-3]", NodeCount: 3, TimeLimit: 5 * time.Minute, TRESPerNode: "gres/gpu:4"})
		if want := []string{"gpu:4(IDX:0-3)", "gpu:4(IDX:0-3)", "gpu:4(IDX:0-3)"}; !slices.Equal(d.job.GRESDetail, want) {
			t.Errorf("gres_detail = %q, want %q", d.job.GRESDetail, want)
		}
		if d.job.StartTime.IsZero() || d.job.SubmitTime.IsZero() || !d.job.EndTime.After(d.job.StartTime) {
			t.Errorf("times = submit %v start %v end %v", d.job.SubmitTime, d.job.StartTime, d.job.EndTime)
		}
	}},
	"get-hetjob-completed": {check: func(t *testing.T, d decoded) {
		compareJob(t, d.job, Job{ID: 6, Name: "het", State: st("COMPLETED")})
		if len(d.job.Components) != 3 {
			t.Fatalf("components = %d, want 3", len(d.job.Components))
		}
		for i, c := range d.job.Components {
			if c.HetJobID != 6 || c.HetJobOffset != i || c.ID != JobID(6+i) {
				t.Errorf("component %d = id %d het %d+%d", i, c.ID, c.HetJobID, c.HetJobOffset)
			}
		}
	}},
	"jobs-list": {check: func(t *testing.T, d decoded) {
		var got []string
		for _, j := range d.jobs {
			got = append(got, j.ID.String()+":"+j.Name+":"+j.State.String())
		}
		want := []string{"1:smoke:COMPLETED", "2:timeout:RUNNING", "3:simple:COMPLETED", "4:toplevel:COMPLETED", "5:disagg:RUNNING"}
		if !slices.Equal(got, want) {
			t.Errorf("jobs = %q, want %q", got, want)
		}
	}},
	// Job ids come back as strings here, and the state field is "state".
	"jobs-state": {check: func(t *testing.T, d decoded) {
		if len(d.jobs) != 2 || d.jobs[0].ID != 10 || d.jobs[0].State.Base != StateRunning || d.jobs[1].ID != 11 || d.jobs[1].State.Base != StatePending {
			t.Errorf("jobs = %+v", d.jobs)
		}
	}},

	"submit-simple":          wantSubmit(3),
	"submit-timeout":         wantSubmit(2),
	"submit-toplevel-script": wantSubmit(4),
	"submit-disagg-3nodes":   wantSubmit(5),
	"submit-hetjob":          wantSubmit(6),
	"submit-allnodes":        wantSubmit(10),
	"submit-allnodes-2":      wantSubmit(11),
	"submit-fail":            wantSubmit(12),
	"root-token-submit":      wantSubmit(17),
	"v0.0.40-submit":         wantSubmit(19),
	"v0.0.42-submit":         wantSubmit(18), // no deprecated "result" any more
	"err-unknown-field": {check: func(t *testing.T, d decoded) {
		wantSubmit(16).check(t, d)
		if len(d.submit.Warnings) != 1 || !strings.Contains(d.submit.Warnings[0].String(), "bogus_field") {
			t.Errorf("warnings = %+v, want the unknown-field warning", d.submit.Warnings)
		}
	}},

	"nodes": {check: func(t *testing.T, d decoded) {
		if len(d.nodes) != 4 {
			t.Fatalf("nodes = %d, want 4", len(d.nodes))
		}
		n := d.nodes[0]
		if n.Name != "n1" || n.CPUs != 8 || n.RealMemory != 16000 || n.GPUs() != 4 || n.GPUsUsed() != 0 || !slices.Equal(n.State, []string{"IDLE"}) || !slices.Equal(n.Partitions, []string{"debug"}) {
			t.Errorf("node = %+v", n)
		}
	}},
	"node-n1": {check: func(t *testing.T, d decoded) {
		if len(d.nodes) != 1 || d.nodes[0].Name != "n1" || d.nodes[0].GPUs() != 4 {
			t.Errorf("nodes = %+v", d.nodes)
		}
	}},
	"partitions": {check: func(t *testing.T, d decoded) {
		if len(d.partitions) != 1 {
			t.Fatalf("partitions = %d", len(d.partitions))
		}
		p := d.partitions[0]
		if p.Name != "debug" || p.TotalNodes != 4 || p.TotalCPUs != 32 || p.MaxTime != 0 || !slices.Equal(p.State, []string{"UP"}) {
			t.Errorf("partition = %+v", p)
		}
	}},
	"diag":           noErrors(),
	"cancel-pending": noErrors(),
	"cancel-running": noErrors(),
	"cancel-again":   noErrors(),
	"cancel-signal":  noErrors(),
	// v0.0.41 says nothing when cancelling an unknown job...
	"err-cancel-not-found": noErrors(),
	// ...v0.0.42 reports it in status[].
	"err-cancel-not-found.v0.0.42": wantAPIError(200, "slurmrestd 200: Invalid job id specified", IsNotFound, not(IsAuth)),

	"err-bad-partition":  wantAPIError(500, "slurmrestd 500: Invalid partition name specified (Batch job submission failed)", IsRejected, not(IsAuth), not(IsNotFound)),
	"err-too-many-nodes": wantAPIError(500, "slurmrestd 500: Requested node configuration is not available (Batch job submission failed)", IsRejected),
	"err-too-many-gpus":  wantAPIError(500, "slurmrestd 500: Requested node configuration is not available (Batch job submission failed)", IsRejected),
	"err-no-environment": wantAPIError(500, "slurmrestd 500: I/O error writing script/environment to file (Batch job submission failed)", IsRejected),
	"err-no-script":      wantAPIError(422, `slurmrestd 422: Query empty or not RFC7320 compliant (Populated "script" field is required for job submission)`, IsRejected),
	"err-hetjob-no-cwd":  wantAPIError(500, "slurmrestd 500: Job cannot be submitted without the current working directory specified. (HetJob submission failed)", IsRejected),
	"err-bad-json":       wantAPIError(400, "slurmrestd 400: Unable to parse query.", IsRejected, not(IsUnsupported)),
	"err-jobs-state-csv": wantAPIError(400, "slurmrestd 400: Unable to parse query.", IsRejected),
	"err-job-not-found":  wantAPIError(404, "slurmrestd 404: Invalid job id specified (Unable to query JobId=999999)", IsNotFound, not(IsUnsupported)),
	"err-bad-version":    wantAPIError(404, "slurmrestd 404: Unable find requested URL. Please view /openapi/v3 for API reference.", IsUnsupported, not(IsNotFound)),
	"err-no-token":       wantAPIError(401, "slurmrestd 401: Authentication failure", IsAuth, not(IsRejected)),

	"err-bad-token.nodes":      wantAPIError(511, "slurmrestd 511: Protocol authentication error (Failure to query nodes)", IsAuth, not(IsRejected)),
	"err-bad-token.submit":     wantAPIError(511, "slurmrestd 511: Protocol authentication error (Batch job submission failed)", IsAuth, not(IsRejected)),
	"err-bad-token.get-job":    wantAPIError(511, "slurmrestd 511: Protocol authentication error (Unable to query JobId=3)", IsAuth, not(IsNotFound)),
	"err-bad-token.cancel":     wantAPIError(511, "slurmrestd 511: Protocol authentication error (Signal request failed)", IsAuth),
	"err-bad-signature":        wantAPIError(511, "slurmrestd 511: Protocol authentication error (Failure to query nodes)", IsAuth),
	"err-expired-token":        wantAPIError(511, "slurmrestd 511: Protocol authentication error (Failure to query nodes)", IsAuth),
	"err-expired-token.submit": wantAPIError(511, "slurmrestd 511: Protocol authentication error (Batch job submission failed)", IsAuth),
	"err-username-mismatch":    wantAPIError(511, "slurmrestd 511: Protocol authentication error (Failure to query nodes)", IsAuth),
	"err-username-unknown":     wantAPIError(511, "slurmrestd 511: Protocol authentication error (Failure to query nodes)", IsAuth),
}

// TestSamplesRecordServerVersion checks that any response teaches the
// client the Slurm release (meta.slurm).
func TestSamplesRecordServerVersion(t *testing.T) {
	dir := samplesDir(t)
	body, err := os.ReadFile(filepath.Join(dir, "ping.v0.0.42.response.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := offlineClient(t)
	if err := c.decode(request{method: "GET", root: "slurm", path: "ping/"}, "v0.0.42", 200, body, &wirePing{}); err != nil {
		t.Fatal(err)
	}
	got := c.Server()
	if got.SlurmRelease != "24.11.5" || got.Cluster != "lab" || got.DataParser != "data_parser/v0.0.42" {
		t.Errorf("server = %+v", got)
	}
}
