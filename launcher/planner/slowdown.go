package planner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
)

// slowDown plans benchmark.slow_down_* for the sa-bench process: only
// with both times set and an sglang frontend, as srtctl; otherwise the
// plan warns, as srtctl's log does, instead of dropping it silently.
func (b *builder) slowDown(proc *plan.Process) {
	rb := b.r.Benchmark
	sleep, wait := rb.SlowDownSleepTime, rb.SlowDownWaitTime
	if sleep == nil && wait == nil {
		return
	}
	warn := func(why string) {
		b.plan.Recipe.Warnings = append(slices.Clip(b.plan.Recipe.Warnings), fmt.Sprintf("%s: benchmark.slow_down_* ignored: %s (as srtctl ignores it)", b.r.Path, why))
	}
	switch {
	case sleep == nil || wait == nil:
		warn("slow_down_sleep_time and slow_down_wait_time must both be set")
		return
	case b.frontendType() != "sglang" && b.backendType() != "mock":
		// (slurmbench's mock engine serves /slow_down behind any frontend.)
		warn("frontend.type is not sglang")
		return
	}
	var urls []string
	for _, p := range b.plan.Processes {
		if p.Role == plan.RoleDecode && p.Rank == 0 && p.Ports["http"] > 0 {
			urls = append(urls, "http://"+placeholderIP(p.Nodes[0])+":"+strconv.Itoa(p.Ports["http"]))
		}
	}
	if len(urls) == 0 {
		warn("no decode worker leaders")
		return
	}
	b.plan.Benchmark.SlowDown = &plan.SlowDown{SleepTime: *sleep, WaitTime: *wait}
	if proc.Env == nil {
		proc.Env = map[string]string{}
	}
	proc.Env[plan.EnvSlowDownURLs] = strings.Join(urls, ",")
	proc.Env[plan.EnvSlowDownSleep] = pyfloat.Repr(*sleep)
	proc.Env[plan.EnvSlowDownWait] = pyfloat.Repr(*wait)
}
