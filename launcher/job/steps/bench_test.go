package steps

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/mockengine"
	"github.com/slurmbench/slurmbench/results"
)

func TestBenchNative(t *testing.T) {
	pl := testPlan(t)
	frontend := mockengine.StartTest(t, mockengine.Options{Model: testModel})
	var out bytes.Buffer
	points, err := Bench(context.Background(), pl, BenchOptions{Frontend: frontend, Out: &out})
	if err != nil {
		t.Fatalf("Bench: %v", err)
	}
	if len(points) != 2 {
		t.Fatalf("%d points, want 2", len(points))
	}
	for i, pt := range pl.Points {
		res, err := results.ReadSABench(filepath.Join(pl.Benchmark.ResultDir, pt.ResultFile))
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, n := range res.OutputLens {
			sum += n
		}
		if res.Completed != pt.NumPrompts || res.NumPrompts != pt.NumPrompts || res.MaxConcurrency != pt.Concurrency {
			t.Errorf("c%d: completed %d of %d at max_concurrency %d", pt.Concurrency, res.Completed, res.NumPrompts, res.MaxConcurrency)
		}
		if res.Valid == nil || !*res.Valid || res.ModelID != testModel || res.TotalOutputTokens != sum || sum == 0 {
			t.Errorf("c%d: valid %v, model %q, total_output_tokens %d (Σ output_lens %d)", pt.Concurrency, res.Valid, res.ModelID, res.TotalOutputTokens, sum)
		}
		if !strings.Contains(out.String(), pointLine(points[i], 2)) {
			t.Errorf("stdout lacks the line of point %d:\n%s", i+1, out.String())
		}
		// The mock stamps its chunks: the file and the line carry the
		// client-added latency of every measured token.
		if a := res.AddedLatency; a == nil || a.Events != sum || res.ReadLatency == nil {
			t.Errorf("c%d: added latency %+v for %d tokens", pt.Concurrency, a, sum)
		}
		if !strings.Contains(pointLine(points[i], 2), ", client-added latency median ") {
			t.Errorf("point line %q lacks the client-added latency", pointLine(points[i], 2))
		}
	}
	if !strings.Contains(out.String(), "point 1/2: c2 valid: completed 20/20,") || !strings.Contains(out.String(), "point 2/2: c4 valid: completed 40/40,") {
		t.Errorf("stdout:\n%s", out.String())
	}
	prog, err := rundir.ReadBenchProgress(pl.Layout.Progress)
	if err != nil {
		t.Fatal(err)
	}
	if want := (rundir.BenchProgress{Point: 2, Of: 2, Concurrency: 4, State: rundir.StateDone}); !progressEqual(prog, want) {
		t.Errorf("progress %+v, want %+v", prog, want)
	}
}

func progressEqual(a, b rundir.BenchProgress) bool {
	return a.Point == b.Point && a.Of == b.Of && a.Concurrency == b.Concurrency && a.State == b.State && slices.Equal(a.Invalid, b.Invalid)
}

// flakyProxy forwards to the engine but answers 500 to the generation
// requests whose 1-based number is in [from, to].
func flakyProxy(t *testing.T, engine string, from, to int64) string {
	t.Helper()
	target, err := url.Parse(engine)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // stream SSE chunks as they come
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if k := n.Add(1); k >= from && k <= to {
				http.Error(w, `{"error":"injected"}`, http.StatusInternalServerError)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// An invalid first point is kept, marked, and does not stop the second;
// the error names it.
func TestBenchInvalidPointKeepsGoing(t *testing.T) {
	pl := testPlan(t)
	// c2 sends requests 1-20: failing 3 of them is 15 % > 5 %.
	frontend := flakyProxy(t, mockengine.StartTest(t, mockengine.Options{Model: testModel}), 5, 7)
	var out bytes.Buffer
	points, err := Bench(context.Background(), pl, BenchOptions{Frontend: frontend, Out: &out})
	var perr *PointsError
	if !errors.As(err, &perr) || len(perr.Failed) != 1 || perr.Failed[0].Point.Concurrency != 2 || perr.Of != 2 {
		t.Fatalf("Bench error %v, want a *PointsError naming c2 only", err)
	}
	if want := "benchmark: 1 of 2 points failed: c2 (request failure rate 15.00% exceeds 5% (17/20 completed)"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want prefix %q", err, want)
	}
	if len(points) != 2 || points[1].Err != nil {
		t.Fatalf("second point: %+v", points)
	}
	bad, err := results.ReadSABench(points[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if bad.Valid == nil || *bad.Valid || bad.Completed != 17 || !strings.Contains(bad.InvalidReason, "failure rate") {
		t.Errorf("invalid point kept as valid=%v completed=%d reason %q", bad.Valid, bad.Completed, bad.InvalidReason)
	}
	if !strings.Contains(out.String(), "point 1/2: c2 INVALID: completed 17/20,") {
		t.Errorf("stdout:\n%s", out.String())
	}
	prog, _ := rundir.ReadBenchProgress(pl.Layout.Progress)
	if want := (rundir.BenchProgress{Point: 2, Of: 2, Concurrency: 4, State: rundir.StateDone, Invalid: []int{2}}); !progressEqual(prog, want) {
		t.Errorf("progress %+v, want %+v", prog, want)
	}
}

// Cancelling the step keeps the running point's result, marked partial, and
// starts no further point.
func TestBenchInterrupted(t *testing.T) {
	pl := testPlan(t)
	// 20 requests of 8 tokens at 50 ms per token, two at a time: about 4 s.
	frontend := mockengine.StartTest(t, mockengine.Options{Model: testModel, ITL: 50 * time.Millisecond})
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(600*time.Millisecond, func() { cancel(errors.New("terminated signal received")) })
	points, err := Bench(ctx, pl, BenchOptions{Frontend: frontend})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted at point 1 of 2 (c2)") || !strings.Contains(err.Error(), "terminated signal received") {
		t.Fatalf("Bench error %v, want an interruption at c2 naming the signal", err)
	}
	if len(points) != 1 {
		t.Fatalf("%d points ran, want 1", len(points))
	}
	res, err := results.ReadSABench(points[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.Valid == nil || *res.Valid || res.Completed >= 20 {
		t.Errorf("partial %v, valid %v, completed %d: want a partial, invalid result", res.Partial, res.Valid, res.Completed)
	}
	if _, err := os.Stat(filepath.Join(pl.Benchmark.ResultDir, pl.Points[1].ResultFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("second point's file: %v, want none", err)
	}
	prog, _ := rundir.ReadBenchProgress(pl.Layout.Progress)
	if want := (rundir.BenchProgress{Point: 1, Of: 2, Concurrency: 2, State: rundir.StateInterrupted, Invalid: []int{2}}); !progressEqual(prog, want) {
		t.Errorf("progress %+v, want %+v", prog, want)
	}
}

func TestBenchFrontendUnreachable(t *testing.T) {
	pl := testPlan(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	_, err := Bench(context.Background(), pl, BenchOptions{Frontend: dead})
	var ferr *FrontendError
	if !errors.As(err, &ferr) || ferr.URL != dead || !strings.Contains(err.Error(), "frontend "+dead+" is not reachable") {
		t.Fatalf("Bench error %v, want a *FrontendError for %s", err, dead)
	}
	if _, err := os.Stat(pl.Benchmark.ResultDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("result directory created before the frontend answered: %v", err)
	}
}

func TestCheckBench(t *testing.T) {
	tests := []struct {
		name string
		edit func(*BenchOptions, *plan.Plan)
		want string
	}{
		{"ok", func(*BenchOptions, *plan.Plan) {}, ""},
		{"eval only", func(_ *BenchOptions, p *plan.Plan) { p.Benchmark.Type, p.Points = "", nil }, "no benchmark points"},
		{"rate", func(_ *BenchOptions, p *plan.Plan) { p.Benchmark.RequestRate = "fast" }, `request rate "fast"`},
		{"result dir", func(_ *BenchOptions, p *plan.Plan) { p.Benchmark.ResultDir = "results" }, "not absolute"},
		{"result file", func(_ *BenchOptions, p *plan.Plan) { p.Points[0].ResultFile = "../x.json" }, "is not a base name"},
		{"no progress file", func(_ *BenchOptions, p *plan.Plan) { p.Layout.Progress = "" }, "layout.bench_progress"},
		{"progress file given", func(o *BenchOptions, p *plan.Plan) { p.Layout.Progress, o.ProgressFile = "", "/tmp/p.json" }, ""},
		{"sa-bench without workspace", func(_ *BenchOptions, p *plan.Plan) { p.Benchmark.Client = profile.BenchSABench }, "needs the InferenceX workspace"},
		{"sa-bench finite rate", func(o *BenchOptions, p *plan.Plan) {
			p.Benchmark.Client, p.Benchmark.RequestRate, o.Workspace = profile.BenchSABench, "4", "/ws"
		}, "runs at rate inf only"},
		{"sa-bench", func(o *BenchOptions, p *plan.Plan) { p.Benchmark.Client, o.Workspace = profile.BenchSABench, "/ws" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := testPlan(t)
			opts := BenchOptions{Frontend: "http://127.0.0.1:8000"}
			tt.edit(&opts, pl)
			err := CheckBench(pl, opts)
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckBench: %v, want %q", err, tt.want)
			}
		})
	}
}

// The sa-bench client runs benchmark_serving.py's argv in the workspace and
// keeps the file it saved, marked; a file it did not write this time is
// not taken for a result.
func TestBenchSABenchClient(t *testing.T) {
	pl := testPlan(t)
	// The recorded Python result is a c8 point of 80 prompts.
	pl.Benchmark.Client, pl.Benchmark.UseChatTemplate = profile.BenchSABench, true
	pl.Points = pl.Points[:1]
	pl.Points[0].Concurrency, pl.Points[0].NumPrompts, pl.Points[0].WarmupPrompts = 8, 80, 16
	recorded, err := os.ReadFile(filepath.Join("..", "..", "..", "results", "testdata", "python_result.json"))
	if err != nil {
		t.Fatal(err)
	}
	frontend := httptest.NewServer(http.NotFoundHandler())
	defer frontend.Close()
	workspace := t.TempDir()

	var ran []Command
	write := true
	fake := func(_ context.Context, cmd Command) error {
		ran = append(ran, cmd)
		dir, name := flagValue(cmd.Argv, "--result-dir"), flagValue(cmd.Argv, "--result-filename")
		if write {
			if err := os.WriteFile(filepath.Join(dir, name), recorded, 0o644); err != nil {
				return err
			}
		}
		return errors.New("exit status 1") // as the Python tool exits after saving a >5 % failure
	}
	opts := BenchOptions{Frontend: frontend.URL, Workspace: workspace, Exec: fake}
	points, err := Bench(context.Background(), pl, opts)
	if err != nil {
		t.Fatalf("Bench: %v", err)
	}
	cmd := ran[0]
	if cmd.Dir != workspace || cmd.Argv[1] != filepath.Join(workspace, DefaultSABenchScript) ||
		flagValue(cmd.Argv, "--base-url") != frontend.URL || flagValue(cmd.Argv, "--max-concurrency") != "8" ||
		flagValue(cmd.Argv, "--num-prompts") != "80" || flagValue(cmd.Argv, "--num-warmups") != "16" ||
		flagValue(cmd.Argv, "--model") != testModel || !slices.Contains(cmd.Argv, "--use-chat-template") {
		t.Errorf("benchmark_serving.py run as %q in %s", cmd.Argv, cmd.Dir)
	}
	res, err := results.ReadSABench(points[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid == nil || !*res.Valid || res.Client != string(profile.BenchSABench) || res.TotalOutputTokens != 2282 {
		t.Errorf("kept result: valid %v, client %q, total_output_tokens %d", res.Valid, res.Client, res.TotalOutputTokens)
	}

	// A second run that saves nothing leaves the old file alone and fails.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(points[0].Path, old, old); err != nil {
		t.Fatal(err)
	}
	write = false
	_, err = Bench(context.Background(), pl, opts)
	var perr *PointsError
	if !errors.As(err, &perr) || !strings.Contains(err.Error(), "saved no new result") {
		t.Fatalf("Bench without a new file: %v", err)
	}
}

func flagValue(argv []string, name string) string {
	if i := slices.Index(argv, name); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}
