package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// slowDownTimeout bounds one /slow_down request (srtctl's client: 60 s).
const slowDownTimeout = 60 * time.Second

// startSlowDown sends SGLang's /slow_down to every decode leader the plan
// names (benchmark.slow_down_*) as a point's traffic starts, and clears it
// after the wait time; the returned function clears it at once if it is
// still on (the point ended first), as srtctl's benchmark_serving.py does.
// Failures are logged, never fatal: srtctl's client only warns.
func startSlowDown(ctx context.Context, pl *plan.Plan, opts BenchOptions) func() {
	sd := pl.Benchmark.SlowDown
	if sd == nil {
		return func() {}
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var urls []string
	for _, u := range strings.Split(getenv(plan.EnvSlowDownURLs), ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	log := orDiscard(opts.Log)
	if len(urls) == 0 {
		fmt.Fprintf(log, "slow_down: %s is empty; not slowing the decode workers\n", plan.EnvSlowDownURLs)
		return func() {}
	}
	client := opts.SlowDownClient
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil}}
	}
	var mu sync.Mutex
	post := func(ctx context.Context, sleep *float64) {
		mu.Lock()
		defer mu.Unlock()
		body, _ := json.Marshal(map[string]*float64{"forward_sleep_time": sleep})
		for _, base := range urls {
			err := func() error {
				ctx, cancel := context.WithTimeout(ctx, slowDownTimeout)
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/slow_down", strings.NewReader(string(body)))
				if err != nil {
					return err
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				msg, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
				if resp.StatusCode/100 != 2 {
					return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
				}
				return nil
			}()
			if err != nil {
				fmt.Fprintf(log, "Warning: slow_down POST %s/slow_down failed: %v\n", base, err)
			}
		}
	}
	sleep := sd.SleepTime
	fmt.Fprintf(log, "Enabling slow_down (forward_sleep_time=%gs) on %s; will auto-disable after %gs.\n", sleep, strings.Join(urls, ", "), sd.WaitTime)
	post(ctx, &sleep)
	done := make(chan struct{})
	cleared := make(chan struct{})
	go func() {
		defer close(cleared)
		t := time.NewTimer(time.Duration(sd.WaitTime * float64(time.Second)))
		defer t.Stop()
		select {
		case <-t.C:
			fmt.Fprintf(log, "slow_down auto-disabled after %gs\n", sd.WaitTime)
			post(context.WithoutCancel(ctx), nil)
		case <-done:
			post(context.WithoutCancel(ctx), nil)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-cleared
	}
}
