package matrix

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/slurm"
)

// MarkerFile is written into each point's stage directory when the point
// ends: its content key and whether it passed. A later matrix skips a point
// whose marker says ok under the same key.
const MarkerFile = "slurmbench-matrix.json"

// Marker is MarkerFile's content.
type Marker struct {
	Point string `json:"point"`
	Key   string `json:"key"`
	// KeyParts are what Key hashes, for a reader.
	KeyParts map[string]string `json:"key_parts"`
	OK       bool              `json:"ok"`
	Error    string            `json:"error,omitempty"`
	RunDir   string            `json:"run_dir,omitempty"`
	Ended    time.Time         `json:"ended"`
}

// Point states as the progress line counts them.
const (
	stQueued = iota
	stRunning
	stDone
	stFailed
	stSkipped
)

var unsafeDirChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// StageDirName is the point's own directory under --stage-dir.
func StageDirName(p *Point) string {
	return unsafeDirChars.ReplaceAllString(fmt.Sprintf("%s_%d_%s", p.Key, p.Index, seqName(p)), "-")
}

func seqName(p *Point) string {
	n := p.Name()
	if i := strings.LastIndex(n, "("); i >= 0 {
		return strings.Trim(n[i:], "()")
	}
	return n
}

// contentKey is what makes a staged result reusable: the recipe's sha256,
// the profile (path and sha256), the image reference, this binary's
// version and the point's own settings (concurrencies, lengths, eval).
func contentKey(p *Point, version string) (string, map[string]string) {
	pl := p.Plan
	row, _ := json.Marshal(p.GeneratorRow()) // plain data: cannot fail
	parts := map[string]string{
		"recipe_sha256":      pl.Recipe.SHA256,
		"recipe_variant":     pl.Recipe.Variant,
		"profile":            pl.Profile.Path,
		"profile_sha256":     p.profileSHA256,
		"image":              pl.Image.Ref + "|" + pl.Image.Squash,
		"slurmbench_version": version,
		"point":              string(row),
	}
	h := sha256.New()
	for _, k := range []string{"recipe_sha256", "recipe_variant", "profile", "profile_sha256", "image", "slurmbench_version", "point"} {
		fmt.Fprintf(h, "%s=%s\n", k, parts[k])
	}
	return hex.EncodeToString(h.Sum(nil)), parts
}

func readMarker(dir string) (Marker, bool) {
	data, err := readlimit.ReadFile(filepath.Join(dir, MarkerFile), 1<<20)
	if err != nil {
		return Marker{}, false
	}
	var m Marker
	if json.Unmarshal(data, &m) != nil {
		return Marker{}, false
	}
	return m, true
}

// tracker counts point states and prints the progress line.
type tracker struct {
	mu      sync.Mutex
	w       io.Writer
	state   map[*Point]int
	started map[*Point]time.Time
	took    []time.Duration
	par     int
	results map[*Point]string
}

func (t *tracker) set(p *Point, s int, note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.state[p] = s
	switch s {
	case stRunning:
		t.started[p] = time.Now()
	case stDone, stFailed:
		if st, ok := t.started[p]; ok {
			t.took = append(t.took, time.Since(st))
		}
	}
	if note != "" {
		t.results[p] = note
	}
	var n [5]int
	for _, v := range t.state {
		n[v]++
	}
	eta := "?"
	if len(t.took) > 0 {
		var sum time.Duration
		for _, d := range t.took {
			sum += d
		}
		left := n[stQueued] + n[stRunning]
		eta = (sum / time.Duration(len(t.took)) * time.Duration(left) / time.Duration(max(t.par, 1))).Round(time.Second).String()
	}
	fmt.Fprintf(t.w, "matrix: %s %s — %d done, %d running, %d queued, %d failed, %d reused; ETA %s\n",
		p.Name(), stateName(s), n[stDone], n[stRunning], n[stQueued], n[stFailed], n[stSkipped], eta)
}

func stateName(s int) string {
	return [...]string{"queued", "running", "done", "failed", "reused"}[s]
}

// execute runs the matrix: up to o.MaxParallel allocations at once, each
// group brought up once, its points run in it in order, and taken down.
// The first interrupt (ctx done) drains: no new allocation or point starts,
// running points finish; a second (o.Hard) cancels them. Every allocation
// brought up is taken down, whatever happened.
func execute(ctx context.Context, o Options, m *Matrix) error {
	if o.MaxParallel < 1 {
		return exitcode.Errorf(exitcode.Config, "--max-parallel %d: must be at least 1", o.MaxParallel)
	}
	if o.StageDir == "" {
		return exitcode.Errorf(exitcode.Config, "--stage-dir: required to run a matrix (each point stages into DIR/<point>/)")
	}
	stage, err := filepath.Abs(o.StageDir)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "--stage-dir: %w", err)
	}
	o.Stderr = &syncWriter{w: o.Stderr}
	tr := &tracker{w: o.Stderr, state: map[*Point]int{}, started: map[*Point]time.Time{}, par: max(o.MaxParallel, 1), results: map[*Point]string{}}
	todo := selectWork(m, o, stage, tr)

	// hardCtx ends only on the second interrupt: running points use it.
	hardCtx, hardCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hardCancel()
	if o.Hard != nil {
		go func() {
			select {
			case <-o.Hard:
				fmt.Fprintln(o.Stderr, "matrix: second interrupt: cancelling the running points")
				hardCancel()
			case <-hardCtx.Done():
			}
		}()
	}
	sem := make(chan struct{}, max(o.MaxParallel, 1))
	held := &groupLog{}
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []error
	for _, g := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(g Group) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := runGroup(ctx, hardCtx, o, stage, g, tr, held); err != nil {
				errMu.Lock()
				errs = append(errs, err)
				errMu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	if ctx.Err() != nil {
		for p, st := range tr.state {
			if st == stQueued && tr.results[p] == "" {
				tr.results[p] = "not run (interrupted)"
			}
		}
	}
	printSummary(o.Stdout, m, tr)
	writeEntryCharts(o.Stderr, stage, m)
	writeMatrixReport(o.Stderr, stage, m, held)
	if ctx.Err() != nil {
		return exitcode.With(o.interrupted(), fmt.Errorf("matrix interrupted: %w", context.Cause(ctx)))
	}
	failed := 0
	for _, s := range tr.state {
		if s == stFailed {
			failed++
		}
	}
	if failed > 0 {
		return exitcode.With(exitcode.Of(errors.Join(errs...)), fmt.Errorf("%d of %d points failed: %w", failed, len(m.Points), errors.Join(errs...)))
	}
	return nil
}

func (o Options) interrupted() exitcode.Code {
	if o.Interrupted != nil {
		return o.Interrupted()
	}
	return exitcode.Interrupted
}

// selectWork drops the points whose staged result can be reused (marked
// reused in tr) and returns the groups left to run, each with the points
// that still need it. A result is reused when its marker says it passed
// under the point's content key; with --rerun-failed, when it passed at all.
func selectWork(m *Matrix, o Options, stage string, tr *tracker) []Group {
	var todo []Group
	for _, g := range m.Groups {
		var run []*Point
		for _, p := range g.Points {
			key, _ := contentKey(p, o.Version)
			mk, ok := readMarker(filepath.Join(stage, StageDirName(p)))
			reuse := ok && mk.OK && mk.Key == key
			if o.RerunFailed {
				reuse = ok && mk.OK
			}
			if reuse {
				tr.set(p, stSkipped, "reused")
				continue
			}
			tr.state[p] = stQueued
			run = append(run, p)
		}
		if len(run) > 0 {
			ng := Group{Points: run, TimeLimit: g.TimeLimit, Estimate: g.Estimate}
			ng.restarts()
			todo = append(todo, ng)
		}
	}
	return todo
}

// runGroup brings the group's first plan up, runs every point in it and
// takes it down. drain is the command's context (first interrupt), hard
// the one that ends on the second.
func runGroup(drain, hard context.Context, o Options, stage string, g Group, tr *tracker, held *groupLog) error {
	head := g.Points[0]
	var upOut bytes.Buffer
	quiet := launch.IO{Stdout: &upOut, Stderr: prefixed(o.Stderr, "["+head.Key+"] "), Interrupted: o.Interrupted, Hard: o.Hard, Version: o.Version, Commit: o.Commit, JSON: true}
	po := planOptions(o, head)
	po.RunID = launch.AutoRunID
	po.JobName = o.JobName
	fmt.Fprintf(o.Stderr, "matrix: allocation for %d point(s) of %s: bringing it up\n", len(g.Points), head.Key)
	upAt := time.Now()
	// Up follows the first interrupt: a group still coming up has no point
	// running, so draining cancels it (launch.Up cancels its job).
	upErr := launch.Up(drain, launch.UpOptions{IO: quiet, Plan: po, BinaryDir: o.BinaryDir, NoPreflight: o.NoPreflight})
	var info launch.UpInfo
	if upErr == nil {
		if err := json.Unmarshal(upOut.Bytes(), &info); err != nil {
			upErr = fmt.Errorf("reading up's result %q: %w", upOut.String(), err)
		} else if info.JobID == "" {
			upErr = fmt.Errorf("up's result %q names no job", upOut.String())
		}
	}
	if upErr != nil {
		if drain.Err() != nil {
			for _, p := range g.Points {
				tr.set(p, stQueued, "not run (interrupted)")
			}
			return nil
		}
		for _, p := range g.Points {
			finishPoint(o, stage, p, "", upErr, tr)
		}
		return fmt.Errorf("allocation for %s: %w", head.Name(), upErr)
	}
	defer func() { held.add(groupRun{g: g, job: info.JobID, held: time.Since(upAt)}) }()
	defer takeDown(o, PointPlanOptions(o, head.MatrixPoint).Source(), info.JobID) //nolint:contextcheck // taking the allocation down must outlive the interrupt that ended ctx: takeDown bounds its own

	var errs []error
	for _, p := range g.Points {
		if drain.Err() != nil {
			tr.set(p, stQueued, "not run (interrupted)")
			continue
		}
		tr.set(p, stRunning, "")
		err := runPoint(hard, o, stage, p, info.JobID)
		finishPoint(o, stage, p, "", err, tr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
		}
	}
	return errors.Join(errs...)
}

func runPoint(ctx context.Context, o Options, stage string, p *Point, jobID string) error {
	dir := filepath.Join(stage, StageDirName(p))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return exitcode.With(exitcode.Collect, fmt.Errorf("creating the point's stage directory: %w", err))
	}
	var out bytes.Buffer
	pio := launch.IO{Stdout: &out, Stderr: prefixed(o.Stderr, "["+p.Name()+"] "), Interrupted: o.Interrupted, Hard: o.Hard, Version: o.Version, Commit: o.Commit, JSON: true}
	po := planOptions(o, p)
	po.RunID = launch.AutoRunID
	in := jobID
	// Results are named as the workflow job names them: RESULT_FILENAME_BASE
	// with the runner's name (--job-name / RUNNER_NAME, else the point's
	// runner label).
	runnerName := o.JobName
	if runnerName == "" {
		runnerName = unsafeDirChars.ReplaceAllString(p.Runner, "-")
	}
	return launch.Run(ctx, launch.RunOptions{IO: pio, Plan: po, In: &in, BinaryDir: o.BinaryDir, NoPreflight: true,
		Stage: launch.StageOptions{StageDir: dir, Overwrite: true, ResultFilename: p.ResultFilenameBase(runnerName)}})
}

// finishPoint records the point's outcome in its marker and the tracker.
func finishPoint(o Options, stage string, p *Point, runDir string, err error, tr *tracker) {
	key, parts := contentKey(p, o.Version)
	mk := Marker{Point: p.Name(), Key: key, KeyParts: parts, OK: err == nil, RunDir: runDir, Ended: time.Now().UTC()}
	if err != nil {
		mk.Error = err.Error()
	}
	dir := filepath.Join(stage, StageDirName(p))
	data, _ := json.MarshalIndent(mk, "", "  ") // plain data: cannot fail
	if mkErr := os.MkdirAll(dir, 0o755); mkErr == nil {
		if wErr := atomicfile.WriteFile(filepath.Join(dir, MarkerFile), append(data, '\n'), atomicfile.Options{Overwrite: true}); wErr != nil {
			fmt.Fprintf(o.Stderr, "matrix: %s: writing %s: %v\n", p.Name(), MarkerFile, wErr)
		}
	}
	if err != nil {
		tr.set(p, stFailed, err.Error())
		return
	}
	tr.set(p, stDone, "ok")
}

// takeDown ends a group's held deployment whatever stopped the group; it
// runs on a context of its own so an interrupt cannot orphan the job.
func takeDown(o Options, src launch.ProfileSource, jobID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := down(ctx, src, jobID)
	if err != nil {
		fmt.Fprintf(o.Stderr, "matrix: taking down job %s: %v (end it with: slurmbench down -p %s %s)\n", jobID, err, o.Profile, jobID)
		return
	}
	fmt.Fprintf(o.Stderr, "matrix: allocation job %s is down\n", jobID)
}

func down(ctx context.Context, src launch.ProfileSource, jobID string) error {
	id, err := slurm.ParseJobID(jobID)
	if err != nil {
		return err
	}
	prof, err := launch.LoadProfileFrom(ctx, src)
	if err != nil {
		return err
	}
	client, err := prof.SlurmClient()
	if err != nil {
		return err
	}
	h, err := runner.FindHeld(ctx, client, id)
	if err != nil {
		return err
	}
	_, err = runner.Down(ctx, h, runner.DownOptions{Client: client, Progress: io.Discard})
	return err
}

// syncWriter serialises writes from the groups running at once.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// printSummary is the table at the end: every point, its allocation and
// what became of it.
func printSummary(out io.Writer, m *Matrix, tr *tracker) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	defer w.Flush()
	fmt.Fprintln(w, "POINT\tCONC\tALLOC\tRESULT")
	for gi, g := range m.Groups {
		for _, p := range g.Points {
			res := tr.results[p]
			if res == "" {
				res = stateName(tr.state[p])
			}
			if len(res) > 120 {
				res = res[:120] + "…"
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", p.Name(), concText(p.Conc), gi+1, res)
		}
	}
}

// prefixed writes each line with a prefix (a point's own output among
// several running at once).
func prefixed(w io.Writer, prefix string) io.Writer {
	return &launch.PrefixWriter{W: w, Prefix: prefix}
}
