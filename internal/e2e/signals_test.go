package e2e

import (
	"archive/tar"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
)

// holdProxy forwards to upstream and submits every job held, so it stays
// PENDING (reason JobHeldUser) until it is released or cancelled: a queue
// wait that does not depend on what else the cluster runs.
func holdProxy(t testing.TB, upstream string) string {
	t.Helper()
	return forwardProxy(t, upstream, func(r *http.Request, body []byte) []byte {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/job/submit") {
			return body
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err == nil {
			if job, ok := m["job"].(map[string]any); ok {
				job["hold"] = true
				body, _ = json.Marshal(m)
			}
		}
		return body
	}, nil)
}

var (
	imageLine     = regexp.MustCompile(`^\S+ image slurmbench/mock-engine:sig-\S+ →`)
	pendingLine   = regexp.MustCompile(`job \d+ PENDING`)
	healthLine    = regexp.MustCompile(`health wait: prefill 0/2`)
	benchLine     = regexp.MustCompile(`benchmark point 1 of 1: c4 running`)
	completedLine = regexp.MustCompile(`job \d+ COMPLETED`)
	cancelLine    = regexp.MustCompile(`interrupted: cancelling job \d+`)
)

// phaseCase is one phase a signal is delivered in.
type phaseCase struct {
	phase string
	// opts adjusts the run so the phase lasts; ready waits until the run
	// is in it.
	opts  func(c *cluster, t *testing.T, o *runOpts)
	ready func(r *run)
	// started: the job ran, so its logs must be bundled.
	started bool
	// submitted: a job exists and must end cancelled.
	submitted bool
}

func signalPhases() []phaseCase {
	return []phaseCase{
		{phase: "importing",
			opts: func(c *cluster, t *testing.T, o *runOpts) {
				// A fresh image name, so the import really runs, slowly.
				o.env = append(o.env, "IMAGE=slurmbench/mock-engine:"+uniqueName("sig"), "ENROOT_STANDIN_IMPORT_DELAY=60")
			},
			ready: func(r *run) {
				r.waitLine(imageLine, 10*time.Minute)
				time.Sleep(time.Second) // the stand-in is sleeping in its import
			}},
		{phase: "queued", submitted: true,
			opts: func(c *cluster, t *testing.T, o *runOpts) { o.restURL = holdProxy(t, c.Cluster.RestURL) },
			ready: func(r *run) {
				r.waitLine(pendingLine, 10*time.Minute)
			}},
		{phase: "starting", submitted: true, started: true,
			opts: func(c *cluster, t *testing.T, o *runOpts) {
				o.recipe = mockRecipe{Name: o.name, Prefill: []string{"startup-delay: 120s"}, Decode: []string{"startup-delay: 120s"}}.String()
			},
			ready: func(r *run) {
				// The moment the driver runs: engines are being started.
				waitFor(r, 10*time.Minute, func() bool { return fileExists(filepath.Join(r.runDir(), "status.json")) })
			}},
		{phase: "health wait", submitted: true, started: true,
			opts: func(c *cluster, t *testing.T, o *runOpts) {
				o.recipe = mockRecipe{Name: o.name, Prefill: []string{"hang: true"}, Attempts: 600}.String()
			},
			ready: func(r *run) {
				r.waitLine(healthLine, 10*time.Minute)
				time.Sleep(2 * time.Second)
			}},
		{phase: "benchmarking", submitted: true, started: true,
			opts: func(c *cluster, t *testing.T, o *runOpts) {
				o.recipe = mockRecipe{Name: o.name, OSL: 5000, ITL: "5ms"}.String()
			},
			ready: func(r *run) {
				r.waitLine(benchLine, 10*time.Minute)
				time.Sleep(time.Second)
			}},
		{phase: "collecting", submitted: true, started: true,
			ready: func(r *run) {
				// A large log makes bundling take seconds: the signal lands
				// after the job ended, while the logs are staged.
				waitFor(r, 10*time.Minute, func() bool { return fileExists(filepath.Join(r.runDir(), "logs")) })
				writeRandom(r.t, filepath.Join(r.runDir(), "logs", "big.log"), 96<<20)
				r.waitLine(completedLine, 10*time.Minute)
			}},
	}
}

// waitFor polls cond every 20 ms.
func waitFor(r *run, timeout time.Duration, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case <-r.done:
			r.t.Fatalf("run exited before the condition held\n%s", r.output())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("condition not met within %s\n%s", timeout, r.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func writeRandom(t testing.TB, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.CopyN(f, rand.Reader, n); err != nil {
		t.Fatal(err)
	}
}

// TestSignals: SIGINT and SIGTERM in each phase of a run end it with
// 130/143, leave no job of the run pending or running 30 s later, bundle
// the logs of a job that started, and record the interruption.
func TestSignals(t *testing.T) {
	t.Parallel()
	c := setup(t)
	for _, pc := range signalPhases() {
		sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}
		if pc.phase == "benchmarking" {
			sigs = append(sigs, syscall.SIGHUP) // a closed terminal: like SIGTERM
		}
		for _, sig := range sigs {
			t.Run(pc.phase+"/"+sig.String(), func(t *testing.T) {
				t.Parallel()
				name := uniqueName("e2e-sig")
				o := runOpts{name: name, recipe: mockRecipe{Name: name}.String()}
				if pc.opts != nil {
					pc.opts(c, t, &o)
				}
				r := c.prepare(t, o).start()
				pc.ready(r)
				phase := ""
				if st, err := rundir.ReadStatus(rundir.New(r.runDir()).Status); err == nil {
					phase = string(st.Phase)
				}
				sent := time.Now()
				r.signal(sig)
				code := r.wait(2 * time.Minute)
				t.Logf("%s in %s (driver phase %q): exit %d after %s", sig, pc.phase, phase, code, r.ended.Sub(sent).Round(time.Millisecond))
				want := 130
				if sig != syscall.SIGINT {
					want = 143
				}
				if code != want {
					t.Errorf("exit %d, want %d\n%s", code, want, r.output())
				}
				r.assertNoLiveJobs(sent.Add(30 * time.Second))
				jobs := r.jobs()
				switch {
				case !pc.submitted && len(jobs) != 0:
					t.Errorf("a job was submitted after the signal: %+v", jobs)
				case pc.submitted && len(jobs) != 1:
					t.Errorf("%d jobs of the run, want 1", len(jobs))
				case pc.submitted && pc.phase != "collecting" && jobs[0].State.Base != slurm.StateCancelled:
					t.Errorf("job %d ended %s, want CANCELLED", jobs[0].ID, jobs[0].Outcome())
				}
				if pc.started {
					assertBundle(t, r.stage)
				}
				if pc.phase == "importing" {
					assertImportGone(t, r, sent)
				}
				if pc.phase == "collecting" {
					// The job had ended well: its result is still staged.
					if got := stagedResults(t, r.stage); len(got) != 1 {
						t.Errorf("staged %v, want the finished point", got)
					}
				}
				if pc.phase == "benchmarking" {
					// The interrupted point is named, its partial result marked.
					assertMarked(t, r, 4)
					m, _ := filepath.Glob(filepath.Join(r.runDir(), "results", "*", "results_concurrency_4_*.json"))
					t.Logf("interrupted point's result files: %v", m)
					if got := stagedResults(t, r.stage); len(got) != 0 {
						t.Errorf("the interrupted point was staged as a result: %v", got)
					}
				}
				if pc.submitted && pc.phase != "collecting" {
					if o := r.outcome(); o.Result != "cancelled" {
						t.Errorf("outcome.json: result %q class %q (%s), want cancelled\n%s", o.Result, o.Class, o.Message, r.output())
					}
				}
				if !strings.Contains(r.stdout.String(), "cancelled") && !strings.Contains(r.stdout.String(), "interrupted") {
					t.Errorf("summary does not say cancelled or interrupted:\n%s", r.stdout.String())
				}
			})
		}
	}

	// A second SIGINT stops waiting for the cancelled job: run exits at
	// once after the cancel request, and the job still ends.
	t.Run("second SIGINT", func(t *testing.T) {
		t.Parallel()
		name := uniqueName("e2e-sig2")
		// The job's processes ignore nothing, but its end takes slurmctld's
		// KillWait; a hung engine keeps the job in health wait.
		r := c.prepare(t, runOpts{name: name, recipe: mockRecipe{Name: name, Prefill: []string{"hang: true"}, Attempts: 600}.String(),
			args: []string{"--cancel-wait", "5m"}}).start()
		r.waitLine(healthLine, 10*time.Minute)
		r.signal(syscall.SIGINT)
		r.waitLine(cancelLine, time.Minute)
		second := time.Now()
		r.signal(syscall.SIGINT)
		code := r.wait(2 * time.Minute)
		took := r.ended.Sub(second)
		t.Logf("exit %d %s after the second SIGINT", code, took.Round(time.Millisecond))
		if code != 130 {
			t.Errorf("exit %d, want 130\n%s", code, r.output())
		}
		// Without the second SIGINT run would wait out --cancel-wait (5 m);
		// a minute tells the two apart on any loaded machine.
		if took > time.Minute {
			t.Errorf("exited %s after the second SIGINT, want well before the 5 m cancel wait\n%s", took, r.output())
		}
		r.assertNoLiveJobs(second.Add(30 * time.Second))
	})
}

// assertImportGone: the interrupted import left no process and no squash
// file that a later run would take for a finished import.
func assertImportGone(t *testing.T, r *run, sent time.Time) {
	t.Helper()
	var tag string
	for _, kv := range r.opts.env {
		if v, ok := strings.CutPrefix(kv, "IMAGE=slurmbench/mock-engine:"); ok {
			tag = v
		}
	}
	for {
		procs := processesOf(tag)
		if len(procs) == 0 {
			break
		}
		if time.Since(sent) > 15*time.Second {
			t.Errorf("import processes left 15 s after the signal:\n%s", strings.Join(procs, "\n"))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	matches, _ := filepath.Glob(filepath.Join(r.c.Root, "squash", "*"+tag+"*"))
	for _, m := range matches {
		if strings.HasSuffix(m, ".lock") {
			// Lock files stay by design (enroot/lock.go); a flock dies
			// with its process.
			_ = os.Remove(m)
			continue
		}
		t.Errorf("interrupted import left %s", m)
	}
}

// assertBundle: LOGS/ and a readable multinode_server_logs.tar.gz with the
// driver's batch log are in the stage directory.
func assertBundle(t *testing.T, stage string) {
	t.Helper()
	if st, err := os.Stat(filepath.Join(stage, "LOGS")); err != nil || !st.IsDir() {
		t.Errorf("no LOGS/ in the stage dir: %v", err)
	}
	f, err := os.Open(filepath.Join(stage, "multinode_server_logs.tar.gz"))
	if err != nil {
		t.Errorf("logs bundle: %v", err)
		return
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Errorf("logs bundle: %v", err)
		return
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("logs bundle: %v (entries so far %v)", err, names)
			return
		}
		names = append(names, h.Name)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".out") {
			return
		}
	}
	t.Errorf("logs bundle holds no log file: %v", names)
}
