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
	"github.com/slurmbench/slurmbench/launcher/rundir"
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
	exits   map[*Point]exitcode.Code
}

// setExit records a point's exit code for the summary.
func (t *tracker) setExit(p *Point, c exitcode.Code) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exits == nil {
		t.exits = map[*Point]exitcode.Code{}
	}
	t.exits[p] = c
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

// runGroup brings the group's first plan up, runs every point in it (the
// held deployment restarts the servers in place when a point's differ)
// and takes it down. A point that fails ends that point only; when its
// allocation is gone afterwards (the nodes could not be proven clean, or
// the job ended), the rest of the group continues in a new allocation.
// drain is the command's context (first interrupt), hard the one that
// ends on the second.
func runGroup(drain, hard context.Context, o Options, stage string, g Group, tr *tracker, held *groupLog) error {
	var errs []error
	rest := g.Points
	for len(rest) > 0 {
		head := rest[0]
		if drain.Err() != nil {
			for _, p := range rest {
				tr.set(p, stQueued, "not run (interrupted)")
			}
			break
		}
		fmt.Fprintf(o.Stderr, "matrix: allocation for %d point(s) of %s: bringing it up\n", len(rest), head.Key)
		upAt := time.Now()
		jobID, upErr := bringUp(drain, o, head)
		fresh := time.Since(upAt)
		if upErr != nil {
			if drain.Err() != nil {
				for _, p := range rest {
					tr.set(p, stQueued, "not run (interrupted)")
				}
				break
			}
			for _, p := range rest {
				finishPoint(o, stage, p, "", upErr, tr)
			}
			errs = append(errs, fmt.Errorf("allocation for %s: %w", head.Name(), upErr))
			break
		}
		fmt.Fprintf(o.Stderr, "matrix: allocation job %s up in %s (a fresh allocation: queue wait, setup, engine start)\n", jobID, fresh.Round(time.Second))
		// The profile the allocation was brought up with: its cluster and
		// lane (planOptions).
		src := planOptions(o, head).Source()
		served, err := runInAllocation(drain, hard, o, src, stage, rest, jobID, fresh, tr)
		held.add(groupRun{g: Group{Points: rest[:max(served, 1)]}, job: jobID, held: time.Since(upAt)})
		takeDown(o, src, jobID) //nolint:contextcheck // taking the allocation down must outlive the interrupt that ended ctx: takeDown bounds its own
		if err != nil {
			errs = append(errs, err)
		}
		rest = rest[served:]
		if len(rest) > 0 && drain.Err() == nil {
			fmt.Fprintf(o.Stderr, "matrix: allocation job %s is gone: continuing %d point(s) of %s in a new allocation\n", jobID, len(rest), head.Key)
		}
	}
	return errors.Join(errs...)
}

// bringUp brings p's plan up as a held deployment and returns its job id.
// It follows the first interrupt: a group still coming up has no point
// running, so draining cancels it (launch.Up cancels its job).
func bringUp(drain context.Context, o Options, p *Point) (string, error) {
	var upOut bytes.Buffer
	quiet := launch.IO{Stdout: &upOut, Stderr: prefixed(o.Stderr, "["+p.Key+"] "), Interrupted: o.Interrupted, Hard: o.Hard, Version: o.Version, Commit: o.Commit, JSON: true}
	po := planOptions(o, p)
	po.RunID = launch.AutoRunID
	po.JobName = o.JobName
	// The points of one allocation share its mounts (topologyKey).
	if err := p.lane.createMountHosts(); err != nil {
		return "", err
	}
	if err := launch.Up(drain, launch.UpOptions{IO: quiet, Plan: po, BinaryDir: o.BinaryDir, NoPreflight: o.NoPreflight}); err != nil {
		return "", err
	}
	var info launch.UpInfo
	if err := json.Unmarshal(upOut.Bytes(), &info); err != nil {
		return "", fmt.Errorf("reading up's result %q: %w", upOut.String(), err)
	}
	if info.JobID == "" {
		return "", fmt.Errorf("up's result %q names no job", upOut.String())
	}
	return info.JobID, nil
}

// runInAllocation runs pts in order in held deployment jobID and returns
// how many it took: all, or up to the first failure after which the
// allocation is gone. Each point's line says how its servers came up:
// held as they were, restarted in place (its time beside the fresh
// allocation's), or started.
func runInAllocation(drain, hard context.Context, o Options, src launch.ProfileSource, stage string, pts []*Point, jobID string, fresh time.Duration, tr *tracker) (int, error) {
	var errs []error
	for i, p := range pts {
		if drain.Err() != nil {
			for _, q := range pts[i:] {
				tr.set(q, stQueued, "not run (interrupted)")
			}
			return len(pts), errors.Join(errs...)
		}
		tr.set(p, stRunning, "")
		runDir, hr, err := runPoint(hard, o, stage, p, jobID)
		note := servedNote(jobID, hr, fresh)
		if hr != nil && hr.Servers == "restarted" && hr.StartSeconds > 0 {
			fmt.Fprintf(o.Stderr, "matrix: %s: engines restarted in place in %.1fs (stop %.1fs, clean %.1fs, start to healthy %.1fs); the fresh allocation took %s\n",
				p.Name(), hr.StopSeconds+hr.CleanSeconds+hr.StartSeconds, hr.StopSeconds, hr.CleanSeconds, hr.StartSeconds, fresh.Round(time.Second))
		}
		finishPointNote(o, stage, p, runDir, err, tr, note)
		if err == nil {
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
		if !heldAlive(hard, src, jobID) {
			return i + 1, errors.Join(errs...)
		}
	}
	return len(pts), errors.Join(errs...)
}

// servedNote says which allocation and restart served a point.
func servedNote(jobID string, hr *rundir.HeldRun, fresh time.Duration) string {
	switch {
	case hr == nil:
		return "job " + jobID
	case hr.Servers == "restarted":
		return fmt.Sprintf("job %s, restart %d: %.0fs (fresh: %s)", jobID, hr.Restart, hr.StopSeconds+hr.CleanSeconds+hr.StartSeconds, fresh.Round(time.Second))
	default:
		return fmt.Sprintf("job %s, %s servers", jobID, hr.Servers)
	}
}

// heldAlive reports whether held deployment jobID still runs (a lookup
// that fails counts as alive: the next point's run --in says more).
func heldAlive(ctx context.Context, src launch.ProfileSource, jobID string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	id, err := slurm.ParseJobID(jobID)
	if err != nil {
		return false
	}
	prof, err := launch.LoadProfileFrom(ctx, src)
	if err != nil {
		return true
	}
	client, err := prof.SlurmClient()
	if err != nil {
		return true
	}
	job, err := client.LookupJob(ctx, id)
	if err != nil {
		return true
	}
	return !job.Terminal()
}

// runPoint runs p in held deployment jobID and returns its run directory
// and how the deployment served it (nil when its outcome says nothing).
func runPoint(ctx context.Context, o Options, stage string, p *Point, jobID string) (string, *rundir.HeldRun, error) {
	dir := filepath.Join(stage, StageDirName(p))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, exitcode.With(exitcode.Collect, fmt.Errorf("creating the point's stage directory: %w", err))
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
	err := launch.Run(ctx, launch.RunOptions{IO: pio, Plan: po, In: &in, BinaryDir: o.BinaryDir, NoPreflight: true,
		Stage: launch.StageOptions{StageDir: dir, Overwrite: true, ResultFilename: p.ResultFilenameBase(runnerName)}})
	var sum struct {
		RunDir string `json:"run_dir"`
	}
	if json.Unmarshal(out.Bytes(), &sum) != nil || sum.RunDir == "" {
		return "", nil, err
	}
	oc, oerr := rundir.ReadOutcome(rundir.New(sum.RunDir).Outcome)
	if oerr != nil {
		return sum.RunDir, nil, err
	}
	return sum.RunDir, oc.Held, err
}

// finishPoint records the point's outcome in its marker and the tracker.
func finishPoint(o Options, stage string, p *Point, runDir string, err error, tr *tracker) {
	finishPointNote(o, stage, p, runDir, err, tr, "")
}

// finishPointNote is finishPoint with a note on how the point was served.
func finishPointNote(o Options, stage string, p *Point, runDir string, err error, tr *tracker, note string) {
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
	tr.setExit(p, exitcode.Of(err))
	if err != nil {
		tr.set(p, stFailed, err.Error())
		return
	}
	res := "ok"
	if note != "" {
		res += " (" + note + ")"
	}
	tr.set(p, stDone, res)
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
	fmt.Fprintln(w, "POINT\tCONC\tALLOC\tEXIT\tRESULT")
	for gi, g := range m.Groups {
		for _, p := range g.Points {
			res := tr.results[p]
			if res == "" {
				res = stateName(tr.state[p])
			}
			if len(res) > 120 {
				res = res[:120] + "…"
			}
			exit := "-"
			if c, ok := tr.exits[p]; ok {
				exit = fmt.Sprint(int(c))
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", p.Name(), concText(p.Conc), gi+1, exit, res)
		}
	}
}

// prefixed writes each line with a prefix (a point's own output among
// several running at once).
func prefixed(w io.Writer, prefix string) io.Writer {
	return &launch.PrefixWriter{W: w, Prefix: prefix}
}
