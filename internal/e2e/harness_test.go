// Package e2e is the fault suite: `slurmbench run` as a real
// subprocess against the project's test cluster, with slurmrestd faults,
// signals in every phase, engine faults, bad input, secrets, concurrent
// runs and the GitHub Actions contract. Tests only.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/clustertest"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// cluster is the test cluster with the slurmbench binary built for it and
// a client that talks to slurmrestd directly (never through a test's proxy).
type cluster struct {
	*clustertest.Env
	api  *slurm.Client
	repo string
	// cliBin, when set, makes the runs' profiles reach Slurm through its
	// commands there (slurm.transport = "cli"): see over.
	cliBin string
}

func setup(t testing.TB) *cluster {
	t.Helper()
	env := clustertest.Setup(t)
	api, err := slurm.New(slurm.Config{URL: env.Cluster.RestURL, User: env.Cluster.User, Token: env.Cluster.Token})
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{Env: env, api: api, repo: clustertest.RepoRoot(t)}
}

// uniqueName is a recipe (and so job) name no other run shares: jobs are
// counted by name through the API.
func uniqueName(prefix string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// mockRecipe is clustertest's mock 2P1D topology.
type mockRecipe = clustertest.MockRecipe

// runOpts describe one `slurmbench run`.
type runOpts struct {
	command string   // the subcommand ("" = run; up takes no --stage-dir)
	name    string   // job name (the recipe's name)
	recipe  string   // recipe text
	restURL string   // slurmrestd as the run sees it ("" = the cluster's)
	slurm   []string // extra lines for the profile's [slurm] table
	args    []string // extra flags
	env     []string // extra KEY=VALUE for the run's environment
	token   string   // SLURM_JWT for the run ("" = the cluster's)
	stage   string   // --stage-dir ("" = a fresh temp dir; "-" = none)
}

// run is one `slurmbench run` subprocess.
type run struct {
	t       testing.TB
	c       *cluster
	opts    runOpts
	dir     string // the test's own directory (profile, recipe)
	profile string
	recipe  string
	stage   string
	cmd     *exec.Cmd
	stdout  *lineBuffer
	stderr  *lineBuffer
	started time.Time
	done    chan struct{}
	code    int
	ended   time.Time
}

// prepare writes the profile and recipe for o; start runs them.
func (c *cluster) prepare(t testing.TB, o runOpts) *run {
	t.Helper()
	dir := t.TempDir()
	env := *c.Env
	if o.restURL != "" {
		env.Cluster.RestURL = o.restURL
	} else if c.cliBin != "" {
		o.slurm = append(cliProfile(c.cliBin), o.slurm...)
		env.Cluster.RestURL = unreachableREST
	}
	profile := env.Profile(t, dir, "")
	if len(o.slurm) > 0 {
		b, err := os.ReadFile(profile)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "[slurm]\n", "[slurm]\n"+strings.Join(o.slurm, "\n")+"\n", 1)
		if err := os.WriteFile(profile, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recipe := filepath.Join(dir, "recipe.yaml")
	if err := os.WriteFile(recipe, []byte(o.recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &run{t: t, c: c, opts: o, dir: dir, profile: profile, recipe: recipe, done: make(chan struct{})}
	switch o.stage {
	case "":
		r.stage = filepath.Join(dir, "stage")
	case "-":
	default:
		r.stage = o.stage
	}
	return r
}

// editProfile replaces old with new in the run's profile.
func (r *run) editProfile(old, new string) {
	r.t.Helper()
	b, err := os.ReadFile(r.profile)
	if err != nil {
		r.t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		r.t.Fatalf("test bug: %q not in the profile:\n%s", old, b)
	}
	if err := os.WriteFile(r.profile, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// baseEnv is the environment every run gets: nothing from the test's own
// environment leaks in (a CI runner's GITHUB_* would change the behaviour).
func (c *cluster) baseEnv(token string) []string {
	if token == "" {
		token = c.Cluster.Token
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	if c.cliBin != "" {
		path = c.cliBin + ":" + path // the operator commands without a profile find sbatch
	}
	return []string{
		"PATH=" + path,
		"HOME=" + os.Getenv("HOME"),
		"SLURM_JWT=" + token,
	}
}

func (r *run) argv() []string {
	args := []string{"run"}
	if r.opts.command != "" {
		args[0] = r.opts.command
	}
	if r.recipe != "" {
		args = append(args, "--recipe", r.recipe)
	}
	if r.profile != "" {
		args = append(args, "--profile", r.profile)
	}
	if r.stage != "" && args[0] == "run" {
		args = append(args, "--stage-dir", r.stage)
	}
	return append(args, r.opts.args...)
}

func (r *run) start() *run {
	r.t.Helper()
	r.cmd = exec.Command(r.c.Binary, r.argv()...)
	r.cmd.Env = append(r.c.baseEnv(r.opts.token), r.opts.env...)
	r.cmd.Dir = r.dir
	r.stdout, r.stderr = newLineBuffer(), newLineBuffer()
	r.cmd.Stdout, r.cmd.Stderr = r.stdout, r.stderr
	// Its own process group: signals go to slurmbench alone, as GitHub's
	// runner sends them to the step's process.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.started = time.Now()
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		r.code = r.cmd.ProcessState.ExitCode()
		if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.code = 128 + int(ws.Signal())
		}
		_ = err
		r.ended = time.Now()
		r.stdout.close()
		r.stderr.close()
		close(r.done)
	}()
	r.t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		r.cancelLeftovers()
		r.removeOnPass()
	})
	return r
}

// removeOnPass deletes what a passing run left on the shared filesystem
// (each run directory holds a copy of the binary; fresh images a squash
// file); a failing test keeps them for a look.
func (r *run) removeOnPass() {
	if r.t.Failed() {
		return
	}
	if dir := r.runDir(); dir != "" {
		_ = os.RemoveAll(dir)
	}
	for _, kv := range r.opts.env {
		if img, ok := strings.CutPrefix(kv, "IMAGE=slurmbench/mock-engine:"); ok && img != "e2e" {
			m, _ := filepath.Glob(filepath.Join(r.c.Root, "squash", "*"+img+"*"))
			for _, f := range m {
				_ = os.RemoveAll(f)
			}
		}
	}
}

// wait waits for the run to exit and returns its exit code.
func (r *run) wait(timeout time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(timeout):
		_ = r.cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump in stderr
		time.Sleep(500 * time.Millisecond)
		_ = r.cmd.Process.Kill()
		<-r.done
		r.t.Fatalf("slurmbench run did not exit within %s\n%s", timeout, r.output())
		return -1
	}
}

func (r *run) signal(sig syscall.Signal) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatalf("signal %v: %v", sig, err)
	}
}

// waitLine waits until stderr has a line matching re and returns it.
func (r *run) waitLine(re *regexp.Regexp, timeout time.Duration) []string {
	r.t.Helper()
	m, err := r.stderr.waitFor(re, timeout, r.done)
	if err != nil {
		r.t.Fatalf("waiting for %q: %v\n%s", re, err, r.output())
	}
	return m
}

func (r *run) output() string {
	return fmt.Sprintf("--- stdout ---\n%s--- stderr ---\n%s", r.stdout.String(), r.stderr.String())
}

var (
	runIDLine     = regexp.MustCompile(`^slurmbench (?:run|up) (\S+): \d+ nodes`)
	submittedLine = regexp.MustCompile(`submitted job (\d+) \(`)
)

// runDir is the run's directory on the shared filesystem ("" before plan).
func (r *run) runDir() string {
	m := r.stderr.find(runIDLine)
	if m == nil {
		return ""
	}
	return filepath.Join(r.c.Root, "runs", m[1])
}

// jobID is the submitted job's id (0 if none was printed).
func (r *run) jobID() slurm.JobID {
	m := r.stderr.find(submittedLine)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return slurm.JobID(n)
}

// jobs lists the jobs slurmctld knows under the run's name.
func (r *run) jobs() []slurm.Job {
	r.t.Helper()
	return r.c.jobsNamed(r.t, r.opts.name)
}

func (c *cluster) jobsNamed(t testing.TB, name string) []slurm.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jobs, err := c.api.ListJobs(ctx, slurm.JobFilter{Name: name})
	if err != nil {
		t.Fatalf("listing jobs: %v", err)
	}
	return jobs
}

// cancelLeftovers cancels any job of the run the test leaves behind, so a
// failing test does not hold the cluster.
func (r *run) cancelLeftovers() {
	if r.opts.name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jobs, err := r.c.api.ListJobs(ctx, slurm.JobFilter{Name: r.opts.name})
	if err != nil {
		return
	}
	for _, j := range jobs {
		if !j.Terminal() {
			_ = r.c.api.CancelJob(ctx, j.ID)
		}
	}
}

// assertNoLiveJobs checks that, by deadline, no job of the run is pending
// or running (and none of its processes lives on the nodes).
func (r *run) assertNoLiveJobs(deadline time.Time) {
	r.t.Helper()
	for {
		var live []string
		for _, j := range r.jobs() {
			if !j.Terminal() {
				live = append(live, fmt.Sprintf("job %d %s", j.ID, j.State))
			}
		}
		if dir := r.runDir(); dir != "" {
			live = append(live, processesOf(dir)...)
		}
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Errorf("still alive at the deadline:\n%s", strings.Join(live, "\n"))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// processesOf lists processes whose argv names dir (the test cluster's
// nodes share this host's process table). slurmbench run itself is not
// counted: its argv names the profile, not the run directory.
func processesOf(dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, dir) {
			out = append(out, "pid "+e.Name()+": "+cmd)
		}
	}
	return out
}

func (r *run) outcome() rundir.Outcome {
	r.t.Helper()
	dir := r.runDir()
	if dir == "" {
		r.t.Fatalf("no run directory printed\n%s", r.output())
	}
	o, err := rundir.ReadOutcome(rundir.New(dir).Outcome)
	if err != nil {
		r.t.Fatalf("outcome.json: %v\n%s", err, r.output())
	}
	return o
}

// lineBuffer collects a stream and lets a test wait for a line.
type lineBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	lines  []string
	part   string
	notify chan struct{}
	closed bool
}

func newLineBuffer() *lineBuffer { return &lineBuffer{notify: make(chan struct{})} }

func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	s := b.part + string(p)
	parts := strings.Split(s, "\n")
	b.part = parts[len(parts)-1]
	b.lines = append(b.lines, parts[:len(parts)-1]...)
	close(b.notify)
	b.notify = make(chan struct{})
	return len(p), nil
}

func (b *lineBuffer) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.part != "" {
		b.lines = append(b.lines, b.part)
		b.part = ""
	}
	b.closed = true
	close(b.notify)
	b.notify = make(chan struct{})
}

func (b *lineBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lineBuffer) Lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.lines)
}

func (b *lineBuffer) find(re *regexp.Regexp) []string {
	for _, l := range b.Lines() {
		if m := re.FindStringSubmatch(l); m != nil {
			return m
		}
	}
	return nil
}

func (b *lineBuffer) waitFor(re *regexp.Regexp, timeout time.Duration, exited <-chan struct{}) ([]string, error) {
	deadline := time.After(timeout)
	for {
		b.mu.Lock()
		ch, closed := b.notify, b.closed
		b.mu.Unlock()
		if m := b.find(re); m != nil {
			return m, nil
		}
		if closed {
			return nil, fmt.Errorf("the process exited first")
		}
		select {
		case <-ch:
		case <-deadline:
			return nil, fmt.Errorf("not seen within %s", timeout)
		case <-exited:
			// Let the last writes land, then look once more.
			time.Sleep(50 * time.Millisecond)
			if m := b.find(re); m != nil {
				return m, nil
			}
			return nil, fmt.Errorf("the process exited first")
		}
	}
}

// restCall is one request a forwardProxy passed on.
type restCall struct {
	method, path string
	start, end   time.Time
}

// forwardProxy passes requests on to upstream; edit (if set) may change a
// request body first, record (if set) is told each request when answered.
func forwardProxy(t testing.TB, upstream string, edit func(*http.Request, []byte) []byte, record func(restCall)) string {
	t.Helper()
	client := &http.Client{Timeout: time.Minute}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		body, _ := io.ReadAll(r.Body)
		if edit != nil {
			body = edit(r, body)
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(out)
		if record != nil {
			record(restCall{r.Method, r.URL.Path, start, time.Now()})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// proxy puts a fault-injecting proxy between a run and slurmrestd.
func (c *cluster) proxy(t testing.TB) *slurmtest.FaultProxy {
	return slurmtest.NewFaultProxy(t, c.Cluster.RestURL)
}

// submits counts job submissions the proxy saw.
func submits(p *slurmtest.FaultProxy) int { return p.Count("POST", "/job/submit") }

// stagedResults lists the InferenceX-named result files in dir.
func stagedResults(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("stage dir: %v", err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), "_conc") && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e.Name())
		}
	}
	return out
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func itoa(n int) string { return strconv.Itoa(n) }
