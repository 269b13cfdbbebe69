package sabench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/mockengine"
	"github.com/slurmbench/slurmbench/results"
)

// The benchmark's engine runs in a child process (this test binary again),
// so getrusage(RUSAGE_SELF) counts the client alone.
const (
	benchEngineEnv = "SABENCH_BENCH_ENGINE"
	benchModel     = "mock-model"
)

// The point's shape, overridable for the paced c2048 measurement:
// SABENCH_TTFT, SABENCH_ITL (durations), SABENCH_ISL, SABENCH_OSL.
var (
	benchTTFT = envDuration("SABENCH_TTFT", 50*time.Millisecond)
	benchITL  = envDuration("SABENCH_ITL", 10*time.Millisecond)
	benchISL  = envInt("SABENCH_ISL", 128)
	benchOSL  = envInt("SABENCH_OSL", 32)
)

func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}

func TestMain(m *testing.M) {
	if os.Getenv(benchEngineEnv) != "" {
		os.Exit(serveBenchEngine())
	}
	os.Exit(m.Run())
}

// serveBenchEngine runs the mock engine until stdin closes, printing its
// address first.
func serveBenchEngine() int {
	s, err := mockengine.New(mockengine.Options{Model: benchModel, TTFT: benchTTFT, ITL: benchITL,
		StatsInterval: -1, Log: io.Discard})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	fmt.Printf("http://%s\n", ln.Addr())
	if err := s.Serve(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type benchEngine struct {
	url   string
	cmd   *exec.Cmd
	stdin io.Closer
}

func startBenchEngine(b *testing.B) *benchEngine {
	b.Helper()
	return startBenchEngineAt(b, benchTTFT, benchITL)
}

// benchEngineCPUs is the SABENCH_ENGINE_CPUS variable: a CPU list the
// engine process is pinned to with taskset (e.g. 0, with the benchmark
// itself run under taskset -c 1), so engine and client each have a core.
const benchEngineCPUs = "SABENCH_ENGINE_CPUS"

// startBenchEngineAt starts the engine process with the given schedule,
// pinned per SABENCH_ENGINE_CPUS.
func startBenchEngineAt(b *testing.B, ttft, itl time.Duration) *benchEngine {
	b.Helper()
	argv := []string{os.Args[0], "-test.run=^$"}
	if cpus := os.Getenv(benchEngineCPUs); cpus != "" {
		taskset, err := exec.LookPath("taskset")
		if err != nil {
			b.Fatalf("%s=%s: no taskset to pin the engine with: %v", benchEngineCPUs, cpus, err)
		}
		argv = append([]string{taskset, "-c", cpus}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), benchEngineEnv+"=1", "SABENCH_TTFT="+ttft.String(), "SABENCH_ITL="+itl.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	e := &benchEngine{cmd: cmd, stdin: stdin}
	b.Cleanup(func() {
		_ = e.stdin.Close()
		_ = e.cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("mock engine did not start: %v", err)
	}
	e.url = strings.TrimSpace(line)
	return e
}

// cpuTime is the engine process's user+system time.
func (e *benchEngine) cpuTime() time.Duration { return procCPU(e.cmd.Process.Pid) }

// procCPU is a process's user+system time from /proc (Linux), 0 elsewhere.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are 14 and 15.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100) // USER_HZ = 100
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkNativeClient sweeps the concurrency up to 2048 against the mock
// engine (TTFT 50 ms, ITL 10 ms, ISL/OSL 128/32 unless the SABENCH_*
// variables above say otherwise; the SA-Bench point shape: 2·C warmups then
// 10·C requests) and reports, per level: requests/s, streamed tokens/s, the
// client's CPU (100 = one core) and CPU per streamed token (warmup tokens
// included), the engine's CPU, and the latency the client adds on top of
// the engine's schedule (median and p99 TTFT − TTFT, mean ITL − ITL, median
// TPOT − ITL). Run with -benchtime 1x; each iteration is a full point.
// -cpu 1 keeps the client on one core (the engine process is not limited).
func BenchmarkNativeClient(b *testing.B) {
	engine := startBenchEngine(b)
	for _, conc := range benchLevels() {
		b.Run(fmt.Sprintf("c%d", conc), func(b *testing.B) {
			for b.Loop() {
				cfg := NewConfig(engine.url, benchModel, benchISL, benchOSL, conc)
				cpu0, srv0, t0 := selfCPU(), engine.cpuTime(), time.Now()
				res, err := Run(context.Background(), cfg)
				wall := time.Since(t0)
				cpu, srv := selfCPU()-cpu0, engine.cpuTime()-srv0
				if err != nil {
					b.Fatal(err)
				}
				if err := results.ValidateSABench(res, cfg.NumPrompts); err != nil {
					b.Fatal(err)
				}
				// Every request streams its drawn length (ignore_eos); the
				// warmups repeat the first prompt.
				streamed := res.TotalOutputTokens + res.WarmupCompleted*res.OutputLens[0]
				reportPoint(b, res, cpu, srv, wall, streamed)
			}
		})
	}
}

// reportPoint reports one point's figures (see BenchmarkNativeClient):
// cpu is the client's CPU over wall, srv the engine's, streamed the tokens
// the client read in that time.
func reportPoint(b *testing.B, res *results.SABenchResult, cpu, srv, wall time.Duration, streamed int) {
	ttft, _ := res.Metric("ttft")
	itl, _ := res.Metric("itl")
	tpot, _ := res.Metric("tpot")
	b.ReportMetric(res.RequestThroughput, "req/s")
	b.ReportMetric(res.OutputThroughput, "tok/s")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "client_cpu_%")
	b.ReportMetric(100*srv.Seconds()/wall.Seconds(), "engine_cpu_%")
	b.ReportMetric(ttft.Median-ms(benchTTFT), "ttft_added_ms")
	ttft99, _ := ttft.Percentile(99)
	b.ReportMetric(ttft99-ms(benchTTFT), "p99_ttft_added_ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(streamed), "client_us/token")
	b.ReportMetric(itl.Mean-ms(benchITL), "itl_added_ms")
	b.ReportMetric(tpot.Median-ms(benchITL), "tpot_added_ms")
	p99, _ := itl.Percentile(99)
	b.ReportMetric(p99-ms(benchITL), "p99_itl_added_ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func benchLevels() []int {
	if s := os.Getenv("SABENCH_LEVELS"); s != "" {
		var out []int
		for _, f := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(f)
			out = append(out, n)
		}
		return out
	}
	return []int{1, 8, 64, 256, 512, 1024, 2048}
}
