package sabench

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/mockengine"
	"github.com/slurmbench/slurmbench/results"
)

// TestSentStampKeyIsTheMocks: the client reads the member the mock writes.
func TestSentStampKeyIsTheMocks(t *testing.T) {
	if sentStampKey != mockengine.SentStampKey {
		t.Fatalf("client reads %q, mock writes %q", sentStampKey, mockengine.SentStampKey)
	}
}

// TestParseChunkStamp: the stamp is read back exactly from where the mock
// puts it (the last member) or anywhere else; anything but a positive
// int64 is no stamp, and a chunk without one has none.
func TestParseChunkStamp(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{`{"choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}],"mock_sent_unix_ns":1796300100123456789}`, 1796300100123456789},
		{`{"mock_sent_unix_ns": 42 ,"choices":[{"text":"x"}]}`, 42},
		{`{"choices":[{"text":"x"}],"mock_sent_unix_ns":9223372036854775807}`, math.MaxInt64},
		{`{"choices":[{"text":"x"}],"mock_sent_unix_ns":9223372036854775808}`, 0},
		{`{"choices":[{"text":"x"}],"mock_sent_unix_ns":-5}`, 0},
		{`{"choices":[{"text":"x"}],"mock_sent_unix_ns":0}`, 0},
		{`{"choices":[{"text":"x"}],"mock_sent_unix_ns":1.5e18}`, 0},
		{`{"choices":[{"text":"x"}],"mock_sent_unix_ns":"1796300100123456789"}`, 0},
		{`{"choices":[{"text":"x"}],"meta":{"mock_sent_unix_ns":7}}`, 0},
		{`{"choices":[{"text":"x"}]}`, 0},
	} {
		c, err := parseChunk([]byte(tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if c.sent != tt.want || !c.choices {
			t.Errorf("%s: stamp %d (choices %v), want %d", tt.in, c.sent, c.choices, tt.want)
		}
	}
}

// TestAddedLatencyDistribution feeds synthetic stamped events through the
// stream recorder and checks the distribution the run reports: nearest-rank
// quantiles, exact below 256 ns and within 1/128 above, the exact maximum
// and mean, negatives counted as 0, unstamped and choice-less events and
// warmup streams (no stamps) left out, and no distribution without stamps.
func TestAddedLatencyDistribution(t *testing.T) {
	const sent = int64(1_796_300_100_000_000_000)
	us := func(n int64) int64 { return n * 1000 }
	seq := func(n int, f func(i int) int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	type event struct {
		added, read int64 // ns after sent; read 0: the event's own time
		stamped     bool
	}
	ev := func(added ...int64) []event {
		out := make([]event, len(added))
		for i, a := range added {
			out[i] = event{added: a, stamped: true}
		}
		return out
	}
	tests := []struct {
		name     string
		events   []event
		added    *results.LatencyDist
		readP99  float64
		readMean float64
	}{
		{name: "no stamps", events: []event{{added: 5}, {added: 7}}},
		{name: "one event", events: ev(200),
			added: &results.LatencyDist{Events: 1, Mean: 0.0002, Median: 0.0002, P90: 0.0002, P99: 0.0002, Max: 0.0002}},
		// 1..100 ns: nearest rank is the ceil(p·n)-th value, all exact.
		{name: "1 to 100 ns", events: ev(seq(100, func(i int) int64 { return int64(i + 1) })...),
			added: &results.LatencyDist{Events: 100, Mean: 50.5e-6, Median: 50e-6, P90: 90e-6, P99: 99e-6, Max: 100e-6}},
		// 1000 events: 980 at 50 µs, 15 at 2 ms, 5 at 40 ms. The p99 is
		// the 990th value (2 ms); bucket bounds are powers of two times
		// (128+k)/128, so 50 µs and 2 ms read at their bucket's top.
		{name: "tail", events: ev(append(append(seq(980, func(int) int64 { return us(50) }),
			seq(15, func(int) int64 { return us(2000) })...), seq(5, func(int) int64 { return us(40000) })...)...),
			added: &results.LatencyDist{Events: 1000, Mean: (980*0.05 + 15*2 + 5*40) / 1000.0,
				Median: upperMs(us(50)), P90: upperMs(us(50)), P99: upperMs(us(2000)), Max: 40}},
		{name: "negative is counted as 0", events: ev(-300, 100, 100),
			added: &results.LatencyDist{Events: 3, Negative: 1, Mean: 200e-6 / 3, Median: 100e-6, P90: 100e-6, P99: 100e-6, Max: 100e-6}},
		{name: "unstamped events are left out", events: append(ev(10, 20), event{added: 999_999}),
			added: &results.LatencyDist{Events: 2, Mean: 15e-6, Median: 10e-6, P90: 20e-6, P99: 20e-6, Max: 20e-6}},
		{name: "read after the arrival", events: []event{{added: 100, read: 250, stamped: true}, {added: 100, read: 5000, stamped: true}},
			added:   &results.LatencyDist{Events: 2, Mean: 100e-6, Median: 100e-6, P90: 100e-6, P99: 100e-6, Max: 100e-6},
			readP99: 5000e-6, readMean: 2625e-6}, // the p99 bucket tops out above the maximum: the maximum
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stamps stampHists
			rec := record{}
			sr := streamRecorder{rec: &rec, start: time.Unix(0, sent-int64(time.Second)), stamps: &stamps}
			warm := streamRecorder{rec: &record{}, start: sr.start} // a warmup stream: not recorded
			for i, e := range tt.events {
				line := fmt.Sprintf(`data: {"choices":[{"index":0,"text":" t"}],"mock_sent_unix_ns":%d}`, sent)
				if !e.stamped {
					line = `data: {"choices":[{"index":0,"text":" t"}]}`
				}
				sr.readAt = 0
				if e.read != 0 {
					sr.readAt = sent + e.read
				}
				if !sr.line([]byte(line), time.Unix(0, sent+e.added)) || !warm.line([]byte(line), time.Unix(0, sent+e.added)) {
					t.Fatalf("event %d refused: %s", i, rec.err)
				}
				// A usage chunk is not a token event, stamped or not.
				if !sr.line(fmt.Appendf(nil, `data: {"choices":[],"usage":{"completion_tokens":1},"mock_sent_unix_ns":%d}`, sent), time.Unix(0, sent+1e9)) {
					t.Fatal(rec.err)
				}
			}
			got := stamps.added.dist()
			if tt.added == nil {
				if got != nil {
					t.Fatalf("distribution %+v without stamps", got)
				}
				return
			}
			if got == nil || !closeDist(*got, *tt.added) {
				t.Fatalf("added %+v\nwant  %+v", got, tt.added)
			}
			read := stamps.read.dist()
			if tt.readP99 == 0 { // read at the event's own time
				if read == nil || !closeDist(*read, *got) {
					t.Errorf("read %+v, want the added %+v", read, got)
				}
			} else if read == nil || read.P99 != tt.readP99 || math.Abs(read.Mean-tt.readMean) > 1e-12 {
				t.Errorf("read %+v, want p99 %v mean %v", read, tt.readP99, tt.readMean)
			}
		})
	}
}

// upperMs is the reported value of a sample of ns: its bucket's top.
func upperMs(ns int64) float64 { return float64(histUpper(histIndex(ns))) / 1e6 }

func closeDist(a, b results.LatencyDist) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Max(1, math.Abs(y)) }
	return a.Events == b.Events && a.Negative == b.Negative && near(a.Mean, b.Mean) && near(a.Median, b.Median) &&
		near(a.P90, b.P90) && near(a.P99, b.P99) && near(a.Max, b.Max)
}

// TestHistBuckets: every value lands in a bucket that holds it, at most
// 1/128 of the value wide (one value each below 256 ns), in order.
func TestHistBuckets(t *testing.T) {
	prevUpper := int64(-1)
	for i := range histBuckets {
		up := histUpper(i)
		if up <= prevUpper {
			t.Fatalf("bucket %d top %d not above bucket %d's %d", i, up, i-1, prevUpper)
		}
		lo := prevUpper + 1
		if histIndex(lo) != i || histIndex(up) != i {
			t.Fatalf("bucket %d [%d, %d]: index(lo) %d, index(up) %d", i, lo, up, histIndex(lo), histIndex(up))
		}
		if width := up - lo + 1; (lo < 256 && width != 1) || (lo >= 256 && float64(width) > float64(lo)/128) {
			t.Fatalf("bucket %d [%d, %d] is %d wide", i, lo, up, width)
		}
		prevUpper = up
	}
	if prevUpper != math.MaxInt64 {
		t.Fatalf("last bucket ends at %d", prevUpper)
	}
}

// TestAddedLatencyAgainstMock: a run against the mock engine reports one
// stamped event per measured token, and reading never precedes dating.
func TestAddedLatencyAgainstMock(t *testing.T) {
	url := mockengine.StartTest(t, mockengine.Options{Model: "m", TTFT: 5 * time.Millisecond, ITL: 2 * time.Millisecond})
	cfg := NewConfig(url, "m", 16, 8, 4)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, r := res.AddedLatency, res.ReadLatency
	if a == nil || r == nil {
		t.Fatal("no added-latency distribution against the mock engine")
	}
	if a.Events != res.TotalOutputTokens || r.Events != a.Events || a.Negative != 0 {
		t.Errorf("%d events (%d read, %d negative) for %d measured tokens", a.Events, r.Events, a.Negative, res.TotalOutputTokens)
	}
	if !(a.Median <= a.P90 && a.P90 <= a.P99 && a.P99 <= a.Max && a.Max > 0) || r.Max < a.Max || r.Median < a.Median {
		t.Errorf("added %+v, read %+v", a, r)
	}
	t.Logf("added %+v; read %+v", *a, *r)
}
