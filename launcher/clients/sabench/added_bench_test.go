package sabench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/results"
)

// The goals of issue #25 for the client-added latency at c2048 with the
// client on one core, and for its whole-process CPU per streamed token.
const (
	goalAddedMedianMs = 0.1
	goalAddedP99Ms    = 5.0
	goalCPUPerTokenUs = 5.0
)

// BenchmarkAddedLatency measures what the native client adds to every
// token event against the mock engine, which stamps each chunk with the
// time it wrote it (mockengine.SentStampKey): per event, the time the
// client gives it minus that stamp, on the host's one clock, so the mock's
// own lateness is not counted. It runs the point of issue #25 (c2048,
// ISL/OSL 128/256, TTFT 50 ms, ITL 40 ms; SABENCH_LEVELS, SABENCH_ISL,
// SABENCH_OSL, SABENCH_TTFT and SABENCH_ITL override) and prints, per
// point, the added latency's median, p90, p99 and max (added_*), the same
// from the moment the client parsed the event (read_*), the process's
// whole CPU (user + sys, warmup included) per streamed token, the time
// its threads waited for a CPU (client_runq_wait_%), the load average
// around the point, and each goal's verdict. It is not a timed
// test: it only reports. The goals' setting, engine on core 0 and client
// on core 1:
//
//	go test -c -o /tmp/sabench.test ./clients/sabench
//	SABENCH_ENGINE_CPUS=0 taskset -c 1 /tmp/sabench.test -test.run '^$' \
//	    -test.bench AddedLatency -test.benchtime 1x -test.cpu 1
func BenchmarkAddedLatency(b *testing.B) {
	ttft := envDuration("SABENCH_TTFT", 50*time.Millisecond)
	itl := envDuration("SABENCH_ITL", 40*time.Millisecond)
	isl, osl := envInt("SABENCH_ISL", 128), envInt("SABENCH_OSL", 256)
	levels := []int{2048}
	if os.Getenv("SABENCH_LEVELS") != "" {
		levels = benchLevels()
	}
	engine := startBenchEngineAt(b, ttft, itl)
	if os.Getenv(benchEngineCPUs) == "" {
		b.Logf("engine not pinned (set %s, and run the benchmark under taskset)", benchEngineCPUs)
	}
	for _, conc := range levels {
		b.Run(fmt.Sprintf("c%d", conc), func(b *testing.B) {
			for b.Loop() {
				cfg := NewConfig(engine.url, benchModel, isl, osl, conc)
				load0 := loadAvg()
				wait0 := runQueueWait(os.Getpid())
				cpu0, srv0, t0 := selfCPU(), engine.cpuTime(), time.Now()
				res, err := Run(context.Background(), cfg)
				wall := time.Since(t0)
				cpu, srv := selfCPU()-cpu0, engine.cpuTime()-srv0
				wait := runQueueWait(os.Getpid()) - wait0
				load1 := loadAvg()
				if err != nil {
					b.Fatal(err)
				}
				if err := results.ValidateSABench(res, cfg.NumPrompts); err != nil {
					b.Fatal(err)
				}
				a, r := res.AddedLatency, res.ReadLatency
				if a == nil || r == nil {
					b.Fatal("no stamped events: is the engine the mock?")
				}
				streamed := res.TotalOutputTokens + res.WarmupCompleted*res.OutputLens[0]
				usPerToken := float64(cpu.Nanoseconds()) / 1e3 / float64(streamed)
				b.ReportMetric(a.Median, "added_p50_ms")
				b.ReportMetric(a.P90, "added_p90_ms")
				b.ReportMetric(a.P99, "added_p99_ms")
				b.ReportMetric(a.Max, "added_max_ms")
				b.ReportMetric(r.Median, "read_p50_ms")
				b.ReportMetric(r.P99, "read_p99_ms")
				b.ReportMetric(r.Max, "read_max_ms")
				b.ReportMetric(usPerToken, "client_us/token")
				b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "client_cpu_%")
				b.ReportMetric(100*srv.Seconds()/wall.Seconds(), "engine_cpu_%")
				b.ReportMetric(res.OutputThroughput, "tok/s")
				b.ReportMetric(100*wait.Seconds()/wall.Seconds(), "client_runq_wait_%")
				b.Logf("c%d ISL/OSL %d/%d TTFT %s ITL %s, GOMAXPROCS %d, load average %s → %s", conc, isl, osl, ttft, itl,
					runtime.GOMAXPROCS(0), load0, load1)
				b.Logf("added (time given − mock's send stamp) over %d events: median %.4f, p90 %.4f, p99 %.3f, max %.1f ms (%d negative)",
					a.Events, a.Median, a.P90, a.P99, a.Max, a.Negative)
				b.Logf("read (parsed − send stamp): median %.4f, p90 %.4f, p99 %.3f, max %.1f ms", r.Median, r.P90, r.P99, r.Max)
				b.Logf("whole-process CPU %.2f s over %d streamed tokens: %.2f µs/token", cpu.Seconds(), streamed, usPerToken)
				b.Logf("the client's threads waited %.2f s on a run queue (runnable, not running) over the %.1f s point", wait.Seconds(), wall.Seconds())
				b.Logf("goals: added median ≤ %g ms %s; added p99 ≤ %g ms %s; CPU ≤ %g µs/token %s",
					goalAddedMedianMs, verdict(a.Median <= goalAddedMedianMs), goalAddedP99Ms, verdict(a.P99 <= goalAddedP99Ms),
					goalCPUPerTokenUs, verdict(usPerToken <= goalCPUPerTokenUs))
			}
		})
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// loadAvg is /proc/loadavg's three averages, "?" where there is none.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// runQueueWait is the time the process's threads spent runnable but not
// running (the second field of each /proc/<pid>/task/*/schedstat): how
// long the client waited for a CPU. 0 where there is no schedstat.
func runQueueWait(pid int) time.Duration {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) >= 2 {
			ns, _ := strconv.ParseInt(f[1], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}
