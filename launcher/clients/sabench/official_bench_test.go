package sabench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/results"
)

// The official client, for BenchmarkOfficialClient: a copy of
// benchmark_serving.py the person running the benchmark names in
// SABENCH_OFFICIAL_SCRIPT (srt-slurm's, from their own checkout), run by
// SABENCH_PYTHON (default python3 on PATH). It is another project's code, so
// it is never taken from this repository or the reference directory: the
// benchmark skips without the variable and refuses a path inside either.
const officialScriptEnv = "SABENCH_OFFICIAL_SCRIPT"

// officialModules are what the script imports beyond the standard library
// and the stand-ins of testdata/pyshim (transformers, datasets,
// huggingface_hub; Debian packages none of them).
var officialModules = []string{"aiohttp", "numpy", "pandas", "tqdm", "PIL"}

// BenchmarkOfficialClient runs benchmark_serving.py against the same mock
// engine and points as BenchmarkNativeClient and reports the same figures,
// for a side-by-side run:
//
//	go test -run '^$' -bench 'NativeClient|OfficialClient' -benchtime 1x -cpu 1 ./clients/sabench
//
// Its own tokens and CPU are counted over the measured requests only
// (between the script's "Starting main benchmark run" and its result
// table; the script has no warmup phase beyond one test request). The
// script opens a connection per request (its default), and its tokenizer is
// testdata/pyshim's stand-in (token i is the word "t<i>"; the mock engine
// needs no real vocabulary). It is not a timed test: it only reports.
func BenchmarkOfficialClient(b *testing.B) {
	script, python := officialClient(b)
	shim := b.TempDir()
	if err := os.CopyFS(shim, os.DirFS("testdata/pyshim")); err != nil {
		b.Fatalf("copying the tokenizer stand-in: %v", err)
	}
	engine := startBenchEngine(b)
	for _, conc := range benchLevels() {
		b.Run(fmt.Sprintf("c%d", conc), func(b *testing.B) {
			for b.Loop() {
				runOfficial(b, python, script, shim, engine, conc)
			}
		})
	}
}

// officialClient finds the script and an interpreter with its modules, or
// skips the benchmark saying what is missing.
func officialClient(b *testing.B) (script, python string) {
	b.Helper()
	script = os.Getenv(officialScriptEnv)
	if script == "" {
		b.Skipf("%s is not set: name your own copy of benchmark_serving.py to compare with the official client", officialScriptEnv)
	}
	script, err := filepath.Abs(script)
	if err == nil {
		_, err = os.Stat(script)
	}
	if err != nil {
		b.Skipf("benchmark_serving.py not found (%v): set %s to compare with the official client", err, officialScriptEnv)
	}
	if why := refusedOfficialPath(script); why != "" {
		b.Fatalf("%s=%s: %s", officialScriptEnv, script, why)
	}
	python = os.Getenv("SABENCH_PYTHON")
	if python == "" {
		python = "python3"
	}
	if python, err = exec.LookPath(python); err != nil {
		b.Skipf("no Python for the official client (%v): set SABENCH_PYTHON", err)
	}
	probe := exec.Command(python, "-c", "import "+strings.Join(officialModules, ", "))
	if out, err := probe.CombinedOutput(); err != nil {
		b.Skipf("%s cannot import the official client's modules (%s): %v: %s", python, strings.Join(officialModules, ", "), err, strings.TrimSpace(string(out)))
	}
	return script, python
}

// runOfficial runs one point (10·C requests at concurrency C) and reports it.
func runOfficial(b *testing.B, python, script, shim string, engine *benchEngine, conc int) {
	b.Helper()
	dir := b.TempDir()
	const name = "result.json"
	cmd := exec.Command(python, script,
		"--model", benchModel, "--backend", DefaultContainerBackend, "--base-url", engine.url,
		"--dataset-name", "random",
		"--random-input-len", strconv.Itoa(benchISL), "--random-output-len", strconv.Itoa(benchOSL),
		"--random-range-ratio", strconv.FormatFloat(DefaultRangeRatio, 'f', -1, 64),
		"--num-prompts", strconv.Itoa(PromptsPerConcurrency*conc), "--max-concurrency", strconv.Itoa(conc),
		"--request-rate", "inf", "--ignore-eos", "--disable-tqdm",
		"--save-result", "--result-dir", dir, "--result-filename", name,
		"--percentile-metrics", strings.Join(results.MetricNames, ","))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+shim, "PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting %s: %v", script, err)
	}
	// The measured phase is between these two lines of its output.
	var cpu0, srv0, cpu, srv time.Duration
	var t0 time.Time
	var wall time.Duration
	var tail []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		tail = append(tail[max(len(tail)-20, 0):], line)
		switch {
		case strings.Contains(line, "Starting main benchmark run"):
			cpu0, srv0, t0 = procCPU(cmd.Process.Pid), engine.cpuTime(), time.Now()
		case strings.Contains(line, "Serving Benchmark Result") && !t0.IsZero():
			wall = time.Since(t0)
			cpu, srv = procCPU(cmd.Process.Pid)-cpu0, engine.cpuTime()-srv0
		}
	}
	if err := cmd.Wait(); err != nil || wall == 0 {
		b.Fatalf("%s at c%d: %v\n%s", filepath.Base(script), conc, errors.Join(err, sc.Err()), strings.Join(tail, "\n"))
	}
	res, err := results.ReadSABench(filepath.Join(dir, name))
	if err != nil {
		b.Fatal(err)
	}
	if res.Completed != PromptsPerConcurrency*conc {
		b.Fatalf("official client at c%d completed %d of %d requests", conc, res.Completed, PromptsPerConcurrency*conc)
	}
	reportPoint(b, res, cpu, srv, wall, res.TotalOutputTokens)
}

// refusedOfficialPath says why a script path may not be run: it lies inside
// this repository or the reference directory (another project's code is
// run only from where the person running it keeps it).
func refusedOfficialPath(script string) string {
	roots := map[string]string{"this repository": filepath.Join("..", "..", "..")}
	if d := os.Getenv(shareddata.DirEnv); d != "" {
		roots["the reference directory ("+shareddata.DirEnv+")"] = d
	}
	for name, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		path := script
		if real, err := filepath.EvalSymlinks(script); err == nil {
			path = real
		}
		if rel, err := filepath.Rel(abs, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return "it lies inside " + name + "; run another project's client only from your own copy"
		}
	}
	return ""
}

func TestOfficialClientPathIsTheUsers(t *testing.T) {
	ref := t.TempDir()
	t.Setenv(shareddata.DirEnv, ref)
	mine := filepath.Join(t.TempDir(), "benchmark_serving.py")
	for _, c := range []struct {
		path    string
		refused bool
	}{
		{mine, false},
		{filepath.Join(ref, "x", "benchmark_serving.py"), true},
		{func() string { p, _ := filepath.Abs("testdata/benchmark_serving.py"); return p }(), true},
		{func() string { p, _ := filepath.Abs("../../../scripts/benchmark_serving.py"); return p }(), true},
	} {
		if got := refusedOfficialPath(c.path) != ""; got != c.refused {
			t.Errorf("refusedOfficialPath(%s) refused=%v, want %v", c.path, got, c.refused)
		}
	}
}
