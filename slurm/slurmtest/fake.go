// Package slurmtest helps test code that talks to slurmrestd: a fake
// slurmrestd serving recorded responses, a fault-injecting proxy, and the
// real-cluster settings for integration tests.
package slurmtest

import (
	"bufio"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed samples/*.json
var samples embed.FS

func sample(name string) []byte {
	b, err := samples.ReadFile("samples/" + name)
	if err != nil {
		panic("slurmtest: missing embedded sample " + name)
	}
	return b
}

// Step is one stage of a fake job's life: the job reports State for Polls
// GETs of job/{id}, then moves on. The last step lasts forever.
type Step struct {
	State  []string // job_state, e.g. {"RUNNING"} or {"COMPLETED","COMPLETING"}
	Polls  int
	Exit   int    // return code once ended
	Signal int    // signal number once ended (0 for none)
	Reason string // state_reason ("" = None)
}

// DefaultLifecycle: one poll PENDING, two RUNNING, then COMPLETED 0:0.
var DefaultLifecycle = []Step{
	{State: []string{"PENDING"}, Polls: 1, Reason: "Resources"},
	{State: []string{"RUNNING"}, Polls: 2},
	{State: []string{"COMPLETED"}},
}

// FakeJob is a job the fake holds.
type FakeJob struct {
	ID        int64
	Name      string
	Comment   string
	Partition string
	// Desc is the job description as submitted.
	Desc map[string]any
	// Forgotten jobs are gone from slurmctld (MinJobAge passed).
	Forgotten bool
	// Submitted is when slurmctld took the job.
	Submitted time.Time
	// User owns the job ("" renders the recorded sample's, slurmtest).
	User string

	steps []Step
	step  int
	polls int
}

func (j *FakeJob) current() Step { return j.steps[j.step] }

// advance counts one GET and moves to the next step when due.
func (j *FakeJob) advance() {
	j.polls++
	if s := j.current(); s.Polls > 0 && j.polls >= s.Polls && j.step < len(j.steps)-1 {
		j.step++
		j.polls = 0
	}
}

// Fake is an in-memory slurmrestd that answers with recorded 24.11
// responses. Jobs follow a scripted lifecycle, advanced by each GET of
// job/{id}, so tests are deterministic and need no clock.
type Fake struct {
	URL string

	srv       *httptest.Server
	inProcess bool

	mu           sync.Mutex
	faults       []*Fault
	visibleAfter time.Duration
	versions     []string
	accepted     map[string]bool // empty: any non-empty token
	revoked      map[string]bool
	partitions   []string
	nodes        int
	gpusPerNode  int
	nodeStates   map[string][]string // node name → state, overriding IDLE
	accounting   bool
	lifecycle    []Step
	jobs         map[int64]*FakeJob
	nextID       int64
	jobTemplates map[string]map[string]any // parsed job-info samples, by name
}

// FakeOption configures a Fake.
type FakeOption func(*Fake)

// WithVersions sets the API versions served (default v0.0.40..v0.0.42, as
// Slurm 24.11). v0.0.43+ answer in v0.0.42's shapes.
func WithVersions(v ...string) FakeOption { return func(f *Fake) { f.versions = v } }

// WithTokens sets the tokens accepted; others get 511 (ping: DOWN). By
// default any non-empty token is accepted.
func WithTokens(tokens ...string) FakeOption {
	return func(f *Fake) {
		for _, t := range tokens {
			f.accepted[t] = true
		}
	}
}

// WithAccounting serves /slurmdb job lookups (as with slurmdbd).
func WithAccounting() FakeOption { return func(f *Fake) { f.accounting = true } }

// WithLifecycle sets the steps every new job goes through.
func WithLifecycle(steps ...Step) FakeOption { return func(f *Fake) { f.lifecycle = steps } }

// WithPartitions sets the partitions (default "debug"; the first is the
// default partition). Every node is in every partition.
func WithPartitions(names ...string) FakeOption { return func(f *Fake) { f.partitions = names } }

// WithCluster sets the node count and GPUs per node (default 4 and 4); the
// nodes and partitions listings show them.
func WithCluster(nodes, gpusPerNode int) FakeOption {
	return func(f *Fake) { f.nodes, f.gpusPerNode = nodes, gpusPerNode }
}

// InProcess serves the fake without a socket: point the client's transport
// at Transport() (URL is a placeholder). Under testing/synctest a real
// socket would keep the bubble's clock from advancing; in process, a test
// waits out minutes of slurmrestd time in microseconds.
func InProcess() FakeOption { return func(f *Fake) { f.inProcess = true } }

// WithVisibleAfter makes a submitted job show up in GET job/{id} and the
// job listing only d after slurmctld took it, as a loaded slurmctld's
// queue latency does; until then it is "not found".
func WithVisibleAfter(d time.Duration) FakeOption { return func(f *Fake) { f.visibleAfter = d } }

// NewFake starts a fake slurmrestd, closed when the test ends.
func NewFake(t testing.TB, opts ...FakeOption) *Fake {
	t.Helper()
	f := &Fake{
		versions:    []string{"v0.0.40", "v0.0.41", "v0.0.42"},
		accepted:    map[string]bool{},
		revoked:     map[string]bool{},
		partitions:  []string{"debug"},
		nodeStates:  map[string][]string{},
		nodes:       4,
		gpusPerNode: 4,
		lifecycle:   DefaultLifecycle,
		jobs:        map[int64]*FakeJob{},
		nextID:      100,
	}
	for _, o := range opts {
		o(f)
	}
	if f.inProcess {
		f.URL = "http://slurmrestd.invalid:6820"
		return f
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.handle(w, r) {
			hangUp(w, false)
		}
	}))
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// AddFaults makes the fake itself misbehave, as slurmrestd in front of a
// loaded slurmctld does: the same Fault rules as FaultProxy, applied in
// process (so they also work with InProcess under testing/synctest).
func (f *Fake) AddFaults(faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range faults {
		fault := faults[i]
		f.faults = append(f.faults, &fault)
	}
}

// ClearFaults removes every fault AddFaults installed.
func (f *Fake) ClearFaults() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = nil
}

// Transport serves requests in process (see InProcess); it works for a
// listening fake too.
func (f *Fake) Transport() http.RoundTripper { return fakeTransport{f} }

type fakeTransport struct{ f *Fake }

// errHungUp is what a client sees when the fake closes without answering.
var errHungUp = errors.New("fake slurmrestd closed the connection without answering")

func (t fakeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	sw := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	hung := make(chan bool, 1)
	go func() {
		hang := t.f.handle(sw, r)
		if !hang {
			sw.WriteHeader(http.StatusOK) // a handler that wrote nothing answered 200
		}
		_ = pw.Close()
		hung <- hang
	}()
	select {
	case <-sw.ready:
		// The body streams from the handler as the client reads it.
		return &http.Response{Status: fmt.Sprintf("%d %s", sw.status, http.StatusText(sw.status)), StatusCode: sw.status,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: sw.header, Body: pr, ContentLength: -1, Request: r}, nil
	case <-hung:
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		return nil, errHungUp
	}
}

// pipeWriter is the in-process transport's ResponseWriter: the header is
// handed over when written, the body through a pipe.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	status int
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	close(w.ready)
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// handle applies the first due fault around serve. It reports whether the
// connection is to be closed without an answer.
func (f *Fake) handle(w http.ResponseWriter, r *http.Request) (hangUp bool) {
	f.mu.Lock()
	var fault Fault
	for _, ft := range f.faults {
		if ft.take(r) {
			fault = *ft
			break
		}
	}
	f.mu.Unlock()
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	switch fault.Action {
	case Drop, Reset:
		return true
	case Respond:
		writeFault(w, fault)
		return false
	case Stall:
		if !wait(fault.Delay) {
			return true // the client gave up; slurmctld never sees it
		}
	}
	if fault.Action == 0 {
		f.serve(w, r) // streamed: a listing of 50,000 jobs is never held whole
		return false
	}
	rec := httptest.NewRecorder()
	f.serve(rec, r)
	switch fault.Action {
	case DropAfterForward:
		return true
	case RespondAfterForward:
		writeFault(w, fault)
		return false
	case StallResponse:
		if !wait(fault.Delay) {
			return true
		}
	}
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	return false
}

func writeFault(w http.ResponseWriter, fault Fault) {
	status := fault.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if strings.HasPrefix(strings.TrimSpace(fault.Body), "{") {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, fault.Body)
}

// AcceptToken adds a token to the accepted set.
func (f *Fake) AcceptToken(tok string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accepted[tok] = true
	delete(f.revoked, tok)
}

// RevokeToken makes a token fail as an expired one does (511).
func (f *Fake) RevokeToken(tok string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.accepted, tok)
	f.revoked[tok] = true
}

// SetNodeState sets node name's state as the nodes listing reports it,
// e.g. SetNodeState("n2", "IDLE", "DRAIN"). Nodes are n1..nN.
func (f *Fake) SetNodeState(name string, state ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodeStates[name] = state
}

// Jobs returns a snapshot of every job submitted, in id order.
func (f *Fake) Jobs() []FakeJob {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []FakeJob
	for _, j := range f.jobs {
		out = append(out, *j)
	}
	slices.SortFunc(out, func(a, b FakeJob) int { return int(a.ID - b.ID) })
	return out
}

// SetSteps replaces the remaining life of job id.
func (f *Fake) SetSteps(id int64, steps ...Step) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j := f.jobs[id]; j != nil {
		j.steps, j.step, j.polls = steps, 0, 0
	}
}

// Forget drops job id from slurmctld's view, as MinJobAge does; with
// accounting it stays visible under /slurmdb.
func (f *Fake) Forget(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j := f.jobs[id]; j != nil {
		j.Forgotten = true
	}
}

var pathPattern = regexp.MustCompile(`^/(slurm|slurmdb)/(v0\.0\.[0-9]+)/(.*?)/?$`)

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	m := pathPattern.FindStringSubmatch(r.URL.Path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if m == nil || !slices.Contains(f.versions, m[2]) || (m[1] == "slurmdb" && !f.accounting) {
		writeText(w, http.StatusNotFound, sample("err-bad-version.response.json"))
		return
	}
	root, version, rest := m[1], m[2], m[3]
	tok := r.Header.Get("X-SLURM-USER-TOKEN")
	if tok == "" {
		writeText(w, http.StatusUnauthorized, sample("err-no-token.response.json"))
		return
	}
	authed := !f.revoked[tok] && (len(f.accepted) == 0 || f.accepted[tok])
	route := r.Method + " " + root + "/" + rest
	switch {
	case route == "GET slurm/ping":
		if !authed {
			f.reply(w, version, http.StatusOK, sample("err-bad-token.ping.response.json"), nil)
			return
		}
		name := "ping." + version + ".response.json"
		if _, err := samples.ReadFile("samples/" + name); err != nil {
			name = "ping.v0.0.42.response.json"
		}
		f.reply(w, version, http.StatusOK, sample(name), nil)
	case !authed:
		f.replyAuthFailure(w, version, r.Method, rest)
	case route == "POST slurm/job/submit":
		f.submit(w, r, version)
	case route == "GET slurm/jobs":
		f.replyJobs(w, version, f.visible())
	case route == "GET slurm/jobs/state":
		f.replyStates(w, version, f.visible())
	case r.Method == http.MethodGet && root == "slurm" && strings.HasPrefix(rest, "job/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(rest, "job/"), 10, 64)
		j := f.jobs[id]
		if j == nil || j.Forgotten || !f.isVisible(j) {
			f.reply(w, version, http.StatusNotFound, sample("err-job-not-found.response.json"), nil)
			return
		}
		f.replyJobs(w, version, []*FakeJob{j})
		j.advance()
	case r.Method == http.MethodDelete && root == "slurm" && strings.HasPrefix(rest, "job/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(rest, "job/"), 10, 64)
		f.cancel(w, version, id, r.URL.Query().Get("signal"))
	case route == "GET slurm/nodes":
		f.reply(w, version, http.StatusOK, sample("nodes.response.json"), f.editNodes)
	case route == "GET slurm/partitions":
		f.reply(w, version, http.StatusOK, sample("partitions.response.json"), f.editPartitions)
	case route == "GET slurmdb/jobs":
		f.replyAccountingJobs(w, version, r.URL.Query())
	case r.Method == http.MethodGet && root == "slurmdb" && strings.HasPrefix(rest, "job/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(rest, "job/"), 10, 64)
		f.replyAccounting(w, version, id)
	default:
		writeText(w, http.StatusNotFound, sample("err-bad-version.response.json"))
	}
}

// editNodes makes the recorded listing (four idle 4-GPU nodes) show the
// fake's nodes: n1..nN, each with its GPUs, partitions and state.
func (f *Fake) editNodes(m map[string]any) {
	recorded := m["nodes"].([]any)
	nodes := make([]any, 0, f.nodes)
	for i := 1; i <= f.nodes; i++ {
		n := deepCopy(recorded[min(i, len(recorded))-1]).(map[string]any)
		name := fmt.Sprintf("n%d", i)
		n["name"], n["hostname"] = name, name
		n["gres"] = fmt.Sprintf("gpu:%d", f.gpusPerNode)
		n["partitions"] = f.partitions
		if st, ok := f.nodeStates[name]; ok {
			n["state"] = st
		}
		nodes = append(nodes, n)
	}
	m["nodes"] = nodes
}

// editPartitions lists the fake's partitions, each holding every node.
func (f *Fake) editPartitions(m map[string]any) {
	tmpl := m["partitions"].([]any)[0]
	parts := make([]any, 0, len(f.partitions))
	for _, name := range f.partitions {
		p := deepCopy(tmpl).(map[string]any)
		p["name"] = name
		nodes := p["nodes"].(map[string]any)
		nodes["configured"], nodes["total"] = fmt.Sprintf("n[1-%d]", f.nodes), f.nodes
		parts = append(parts, p)
	}
	m["partitions"] = parts
}

func (f *Fake) visible() []*FakeJob {
	var out []*FakeJob
	for _, j := range f.jobs {
		if !j.Forgotten && f.isVisible(j) {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *FakeJob) int { return int(a.ID - b.ID) })
	return out
}

// isVisible: slurmctld has processed the job (see WithVisibleAfter).
func (f *Fake) isVisible(j *FakeJob) bool {
	return f.visibleAfter <= 0 || time.Since(j.Submitted) >= f.visibleAfter
}

func (f *Fake) replyAuthFailure(w http.ResponseWriter, version, method, rest string) {
	name := "err-bad-token.nodes.response.json"
	switch {
	case method == http.MethodPost:
		name = "err-bad-token.submit.response.json"
	case method == http.MethodDelete:
		name = "err-bad-token.cancel.response.json"
	case strings.HasPrefix(rest, "job"):
		name = "err-bad-token.get-job.response.json"
	}
	f.reply(w, version, 511, sample(name), nil)
}

func (f *Fake) submit(w http.ResponseWriter, r *http.Request, version string) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Job    map[string]any `json:"job"`
		Script string         `json:"script"`
	}
	if ct != "application/json" || json.Unmarshal(body, &req) != nil || req.Job == nil {
		writeText(w, http.StatusBadRequest, sample("err-bad-json.response.json"))
		return
	}
	desc := req.Job
	if s, _ := desc["script"].(string); s == "" && req.Script == "" {
		f.reply(w, version, 422, sample("err-no-script.response.json"), nil)
		return
	}
	if env, _ := desc["environment"].([]any); len(env) == 0 {
		f.reply(w, version, http.StatusInternalServerError, sample("err-no-environment.response.json"), nil)
		return
	}
	part, _ := desc["partition"].(string)
	if part == "" {
		part = f.partitions[0]
	}
	if !slices.Contains(f.partitions, part) {
		f.reply(w, version, http.StatusInternalServerError, sample("err-bad-partition.response.json"), nil)
		return
	}
	j := &FakeJob{ID: f.nextID, Desc: desc, Partition: part, steps: f.lifecycle, Submitted: time.Now()}
	f.nextID++
	j.Name, _ = desc["name"].(string)
	j.Comment, _ = desc["comment"].(string)
	if nodeCount(desc) > f.nodes || gpusPerNode(desc) > f.gpusPerNode {
		// Like slurmctld, a job that can never run is refused but leaves a
		// FAILED record behind.
		j.steps = []Step{{State: []string{"FAILED"}, Reason: "BadConstraints", Exit: 1}}
		f.jobs[j.ID] = j
		f.reply(w, version, http.StatusInternalServerError, sample("err-too-many-nodes.response.json"), nil)
		return
	}
	f.jobs[j.ID] = j
	name := "submit-simple.response.json"
	if version >= "v0.0.42" {
		name = "v0.0.42-submit.response.json"
	}
	f.reply(w, version, http.StatusOK, sample(name), func(m map[string]any) {
		m["job_id"] = j.ID
		if res, ok := m["result"].(map[string]any); ok {
			res["job_id"] = j.ID
		}
	})
}

func nodeCount(desc map[string]any) int {
	switch v := desc["nodes"].(type) {
	case float64:
		return int(v)
	case string:
		lo, _, _ := strings.Cut(v, "-")
		n, _ := strconv.Atoi(lo)
		return n
	}
	return 1
}

func gpusPerNode(desc map[string]any) int {
	s, _ := desc["tres_per_node"].(string)
	if i := strings.LastIndexAny(s, ":="); i >= 0 && strings.Contains(s, "gpu") {
		n, _ := strconv.Atoi(s[i+1:])
		return n
	}
	return 0
}

func (f *Fake) cancel(w http.ResponseWriter, version string, id int64, signal string) {
	j := f.jobs[id]
	if j == nil || j.Forgotten || !f.isVisible(j) {
		if version >= "v0.0.42" {
			f.reply(w, version, http.StatusOK, sample("err-cancel-not-found.v0.0.42.response.json"), nil)
			return
		}
		f.reply(w, version, http.StatusOK, sample("cancel-running.response.json"), nil)
		return
	}
	ended := slices.Contains([]string{"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT"}, j.current().State[0])
	if !ended && (signal == "" || strings.TrimPrefix(signal, "SIG") == "KILL" || strings.TrimPrefix(signal, "SIG") == "TERM") {
		j.steps = []Step{{State: []string{"CANCELLED"}, Signal: 15}}
		j.step, j.polls = 0, 0
	}
	f.reply(w, version, http.StatusOK, sample("cancel-running.response.json"), nil)
}

// replyJobs renders jobs into the recorded job-info template, streaming
// one job at a time: a listing of 50,000 jobs is never held whole. The
// template is parsed once per version; renderJob replaces top-level
// members only, so a shallow copy of it is each job's record.
func (f *Fake) replyJobs(w http.ResponseWriter, version string, jobs []*FakeJob) {
	tmplName := "get-job-completed.response.json"
	if version >= "v0.0.42" {
		tmplName = "v0.0.42-get-job.response.json"
	}
	if f.jobTemplates == nil {
		f.jobTemplates = map[string]map[string]any{}
	}
	tmpl := f.jobTemplates[tmplName]
	if tmpl == nil {
		if err := json.Unmarshal(sample(tmplName), &tmpl); err != nil {
			panic(err)
		}
		f.jobTemplates[tmplName] = tmpl
	}
	jobTmpl := tmpl["jobs"].([]any)[0].(map[string]any)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	_, _ = bw.WriteString("{\n  \"jobs\": [")
	for i, j := range jobs {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		// Indented as slurmrestd indents.
		b, _ := json.MarshalIndent(f.renderJob(maps.Clone(jobTmpl), j), "    ", "  ")
		_, _ = bw.WriteString("\n    ")
		_, _ = bw.Write(b)
	}
	var ping map[string]any
	_ = json.Unmarshal(sample("ping.v0.0.41.response.json"), &ping)
	meta := ping["meta"].(map[string]any)
	meta["plugin"].(map[string]any)["data_parser"] = "data_parser/" + version
	mb, _ := json.MarshalIndent(meta, "  ", "  ")
	_, _ = bw.WriteString("\n  ],\n  \"meta\": ")
	_, _ = bw.Write(mb)
	_, _ = bw.WriteString(",\n  \"errors\": [],\n  \"warnings\": []\n}")
}

// replyStates answers jobs/state: each job's id (a string, as 24.11
// sends it) and state, nothing else, indented as slurmrestd indents. It is
// written directly: a listing of 50,000 jobs through reply's generic
// re-encoding would cost the fake more than the client.
func (f *Fake) replyStates(w http.ResponseWriter, version string, jobs []*FakeJob) {
	var b strings.Builder
	b.Grow(len(jobs)*80 + 1024)
	b.WriteString("{\n  \"jobs\": [")
	for i, j := range jobs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    {\n      \"job_id\": \"%d\",\n      \"state\": [", j.ID)
		for k, st := range j.current().State {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "\n        %q", st)
		}
		b.WriteString("\n      ]\n    }")
	}
	var ping map[string]any
	_ = json.Unmarshal(sample("ping.v0.0.41.response.json"), &ping)
	meta := ping["meta"].(map[string]any)
	meta["plugin"].(map[string]any)["data_parser"] = "data_parser/" + version
	mb, _ := json.MarshalIndent(meta, "  ", "  ")
	b.WriteString("\n  ],\n  \"meta\": ")
	b.Write(mb)
	b.WriteString(",\n  \"errors\": [],\n  \"warnings\": []\n}")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, b.String())
}

// AddJobs puts n RUNNING jobs of other users into the fake, submitted at
// submitted, with ids below every job submitted later: a busy cluster's
// queue for lookups to scale against.
func (f *Fake) AddJobs(n int, submitted time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < n; i++ {
		id := f.nextID
		f.nextID++
		f.jobs[id] = &FakeJob{ID: id, Name: fmt.Sprintf("other-%d", id), Comment: "someone else's job", User: "someone-else",
			Partition: "debug", Desc: map[string]any{}, Submitted: submitted,
			steps: []Step{{State: []string{"RUNNING"}}}}
	}
}

func (f *Fake) renderJob(m map[string]any, j *FakeJob) map[string]any {
	s := j.current()
	m["job_id"] = j.ID
	if !j.Submitted.IsZero() {
		m["submit_time"] = noVal(j.Submitted.Unix())
	}
	m["name"] = j.Name
	if j.User != "" {
		m["user_name"] = j.User
	}
	m["comment"] = j.Comment
	m["partition"] = j.Partition
	m["job_state"] = s.State
	reason := s.Reason
	if reason == "" {
		reason = "None"
	}
	m["state_reason"] = reason
	n := nodeCount(j.Desc)
	m["node_count"] = noVal(int64(n))
	if s.State[0] == "PENDING" {
		m["nodes"], m["batch_host"] = "", ""
	} else {
		m["nodes"] = fmt.Sprintf("n[1-%d]", n)
		if n == 1 {
			m["nodes"] = "n1"
		}
		m["batch_host"] = "n1"
	}
	status := "SUCCESS"
	rc := map[string]any{"set": true, "infinite": false, "number": s.Exit}
	sig := map[string]any{"id": map[string]any{"set": false, "infinite": false, "number": 0}, "name": ""}
	switch {
	case s.Signal != 0:
		status = "SIGNALED"
		rc = map[string]any{"set": false, "infinite": false, "number": 0}
		sig = map[string]any{"id": noVal(int64(s.Signal)), "name": "TERM"}
	case s.Exit != 0:
		status = "ERROR"
	}
	m["exit_code"] = map[string]any{"status": []string{status}, "return_code": rc, "signal": sig}
	for _, k := range []string{"tres_per_node", "current_working_directory", "standard_output", "standard_error"} {
		v, _ := j.Desc[k].(string)
		m[k] = v
	}
	return m
}

func (f *Fake) replyAccounting(w http.ResponseWriter, version string, id int64) {
	j := f.jobs[id]
	body := []byte(`{"jobs":[],"errors":[],"warnings":[]}`)
	if j != nil {
		b, _ := json.Marshal(map[string]any{"jobs": []any{accountingRecord(j)}, "errors": []any{}, "warnings": []any{}})
		body = b
	}
	f.reply(w, version, http.StatusOK, body, nil)
}

// replyAccountingJobs answers slurmdb's GET jobs with the filters it
// applies on its side: users, job_name and state (comma-separated lists)
// and the window start_time..end_time (Unix seconds: jobs submitted by
// its end).
func (f *Fake) replyAccountingJobs(w http.ResponseWriter, version string, q url.Values) {
	list := func(k string) []string {
		if v := q.Get(k); v != "" {
			return strings.Split(v, ",")
		}
		return nil
	}
	users, names, states := list("users"), list("job_name"), list("state")
	end, _ := strconv.ParseInt(q.Get("end_time"), 10, 64)
	recs := []any{}
	for _, j := range f.visible() {
		user := j.User
		if user == "" {
			user = "slurmtest"
		}
		switch {
		case users != nil && !slices.Contains(users, user),
			names != nil && !slices.Contains(names, j.Name),
			states != nil && !slices.Contains(states, j.current().State[0]),
			end > 0 && j.Submitted.Unix() > end:
			continue
		}
		recs = append(recs, accountingRecord(j))
	}
	b, _ := json.Marshal(map[string]any{"jobs": recs, "errors": []any{}, "warnings": []any{}})
	f.reply(w, version, http.StatusOK, b, nil)
}

// accountingRecord is j as slurmdbd records it.
func accountingRecord(j *FakeJob) map[string]any {
	user := j.User
	if user == "" {
		user = "slurmtest"
	}
	s := j.current()
	rec := map[string]any{
		"job_id": j.ID, "name": j.Name, "user": user, "partition": j.Partition,
		"comment": map[string]any{"administrator": "", "job": j.Comment, "system": ""},
		"state":   map[string]any{"current": s.State, "reason": "None"},
		"nodes":   "n1",
		"time":    map[string]any{"submission": 1796217196, "start": 1796217196, "end": 1796217197, "limit": noVal(5)},
		"exit_code": map[string]any{"status": []string{"SUCCESS"}, "return_code": noVal(int64(s.Exit)),
			"signal": map[string]any{"id": noVal(int64(s.Signal)), "name": ""}},
	}
	return rec
}

func noVal(n int64) map[string]any {
	return map[string]any{"set": true, "infinite": false, "number": n}
}

// reply sends a recorded JSON body after edit, with meta naming version.
func (f *Fake) reply(w http.ResponseWriter, version string, status int, body []byte, edit func(map[string]any)) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		panic(err)
	}
	if edit != nil {
		edit(m)
	}
	if meta, ok := m["meta"].(map[string]any); ok {
		if p, ok := meta["plugin"].(map[string]any); ok {
			p["data_parser"] = "data_parser/" + version
		}
	} else {
		var ping map[string]any
		_ = json.Unmarshal(sample("ping.v0.0.41.response.json"), &ping)
		meta := ping["meta"].(map[string]any)
		meta["plugin"].(map[string]any)["data_parser"] = "data_parser/" + version
		m["meta"] = meta
	}
	out, _ := json.MarshalIndent(m, "", "  ")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

func writeText(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
