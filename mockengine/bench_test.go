package mockengine

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStreaming runs waves of concurrent streaming requests (SA-Bench's
// request body, ignore_eos) against an in-process server and reports
// delivered tokens/s, CPU cores used by the whole process (server and
// client), the median TTFT and ITL, and how late the p99 ITL is against the
// configured ITL. Set MOCKENGINE_BENCH_URL to measure an external server
// (e.g. `slurmbench mock-engine --itl 10ms --ttft 50ms`) instead; its ITL and
// TTFT must then match the flags below.
//
//	go test -run '^$' -bench Streaming -benchtime 3x ./mockengine
func BenchmarkStreaming(b *testing.B) {
	for _, c := range []struct {
		streams, tokens int
		ttft, itl       time.Duration
	}{
		{1, 64, 50 * time.Millisecond, 10 * time.Millisecond},
		{256, 64, 50 * time.Millisecond, 10 * time.Millisecond},
		{2048, 64, 50 * time.Millisecond, 10 * time.Millisecond},
		{2048, 32, 50 * time.Millisecond, 20 * time.Millisecond},
	} {
		b.Run(fmt.Sprintf("streams=%d/tokens=%d/ttft=%s/itl=%s", c.streams, c.tokens, c.ttft, c.itl), func(b *testing.B) {
			url := os.Getenv("MOCKENGINE_BENCH_URL")
			if url == "" {
				url = StartTest(b, Options{TTFT: c.ttft, ITL: c.itl, Log: discard{}, StatsInterval: -1})
			}
			client := &http.Client{Transport: &http.Transport{
				MaxIdleConnsPerHost: c.streams, MaxConnsPerHost: 0, DisableCompression: true,
			}}
			body := fmt.Sprintf(`{"model":"%s","prompt":[%s],"max_tokens":%d,"temperature":0.0,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`,
				DefaultModel, strings.TrimSuffix(strings.Repeat("1000,", 1024), ","), c.tokens)
			var ttfts, itls []time.Duration
			var tokens int
			var failures int
			var mu sync.Mutex
			cpu0 := cpuTime()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				var wg sync.WaitGroup
				for range c.streams {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ttft, gaps, n, err := streamOnce(client, url, body)
						mu.Lock()
						defer mu.Unlock()
						if err != nil || n != c.tokens {
							failures++
							return
						}
						ttfts = append(ttfts, ttft)
						itls = append(itls, gaps...)
						tokens += n
					}()
				}
				wg.Wait()
			}
			elapsed := time.Since(start)
			b.StopTimer()
			cpu := cpuTime() - cpu0
			if failures > 0 {
				b.Fatalf("%d of %d streams failed or were short", failures, b.N*c.streams)
			}
			b.ReportMetric(float64(tokens)/elapsed.Seconds(), "tokens/s")
			b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cpu-cores")
			b.ReportMetric(ms(percentile(ttfts, 50)), "ttft-p50-ms")
			b.ReportMetric(ms(percentile(ttfts, 99)), "ttft-p99-ms")
			b.ReportMetric(ms(percentile(itls, 50)), "itl-p50-ms")
			b.ReportMetric(ms(percentile(itls, 99)), "itl-p99-ms")
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// streamOnce sends one streaming request and returns its TTFT, the gaps
// between token chunks, and the token count from the usage chunk.
func streamOnce(client *http.Client, url, body string) (ttft time.Duration, gaps []time.Duration, tokens int, err error) {
	start := time.Now()
	resp, err := client.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return 0, nil, 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	br := bufio.NewReaderSize(resp.Body, 16<<10)
	var last time.Time
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return ttft, gaps, tokens, fmt.Errorf("stream ended early: %w", err)
		}
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		now := time.Now()
		switch {
		case bytes.HasPrefix(line, []byte("data: [DONE]")):
			return ttft, gaps, tokens, nil
		case bytes.Contains(line, []byte(`"choices":[]`)):
			i := bytes.Index(line, []byte(`"completion_tokens":`))
			if i < 0 {
				return ttft, gaps, tokens, fmt.Errorf("usage chunk without completion_tokens")
			}
			_, _ = fmt.Sscanf(string(line[i+len(`"completion_tokens":`):]), "%d", &tokens)
		case last.IsZero():
			ttft, last = now.Sub(start), now
		default:
			gaps = append(gaps, now.Sub(last))
			last = now
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
