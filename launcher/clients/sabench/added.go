package sabench

import (
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/slurmbench/slurmbench/results"
)

// A server that stamps each token chunk with the time it wrote it (the
// mock engine's mock_sent_unix_ns, mockengine.SentStampKey) lets the client
// measure the latency it adds itself: the time it gives the event minus the
// stamp, both read from the host's one clock (CLOCK_REALTIME: the kernel's
// receive stamp and the mock's time.Now). Without the stamp nothing
// separates the client's lateness from the engine's.

// sentStampKey is the chunk member holding the server's send time in Unix
// nanoseconds (mockengine.SentStampKey; a test keeps the two equal).
const sentStampKey = "mock_sent_unix_ns"

// parseStamp reads a stamp: a positive decimal integer that fits int64.
// It does not allocate (it runs once per token).
func parseStamp(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, n > 0
}

// Histogram layout: values below 2^(histSubBits+1) ns have a bucket each;
// above, every power of two is cut into 2^histSubBits buckets, so a
// bucket is at most 1/128 of its values wide (below 256 ns, exact).
const (
	histSubBits = 7
	histSub     = 1 << histSubBits
	histLinear  = 2 * histSub
	histBuckets = histLinear + (63-histSubBits-1)*histSub
)

// latencyHist is a distribution of nanosecond latencies that many streams
// add to at once without locks or allocation: counts per log-linear
// bucket, plus the exact count, sum and maximum.
type latencyHist struct {
	counts   [histBuckets]atomic.Uint64
	n        atomic.Int64
	negative atomic.Int64
	sum      atomic.Int64 // ns; overflows only past 292 years of summed latency
	max      atomic.Int64
}

func histIndex(v int64) int {
	if v < histLinear {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1 // >= histSubBits+1
	sub := int(v>>(e-histSubBits)) & (histSub - 1)
	return histLinear + (e-histSubBits-1)*histSub + sub
}

// histUpper is the largest value bucket i holds.
func histUpper(i int) int64 {
	if i < histLinear {
		return int64(i)
	}
	k := i - histLinear
	e := k/histSub + histSubBits + 1
	sub := int64(k % histSub)
	width := int64(1) << (e - histSubBits)
	return (histSub+sub)*width + width - 1
}

// observe adds one latency; a negative one (the event dated before its
// stamp: a clock step) is counted and taken as 0.
func (h *latencyHist) observe(ns int64) {
	if ns < 0 {
		h.negative.Add(1)
		ns = 0
	}
	h.counts[histIndex(ns)].Add(1)
	h.n.Add(1)
	h.sum.Add(ns)
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// quantile is the nearest-rank p-quantile (0 < p <= 1): the upper bound
// of the bucket holding the ceil(p·n)-th smallest value, never above the
// maximum. It is within 1/128 above the exact sample (exact below 256 ns).
func (h *latencyHist) quantile(p float64) int64 {
	n := h.n.Load()
	rank := max(int64(math.Ceil(p*float64(n))), 1)
	var seen int64
	for i := range h.counts {
		seen += int64(h.counts[i].Load()) //nolint:gosec // a count of token events, far below 2^63
		if seen >= rank {
			return min(histUpper(i), h.max.Load())
		}
	}
	return h.max.Load()
}

// dist is the distribution in milliseconds, nil without events.
func (h *latencyHist) dist() *results.LatencyDist {
	n := h.n.Load()
	if n == 0 {
		return nil
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	return &results.LatencyDist{
		Events:   int(n),
		Negative: int(h.negative.Load()),
		Mean:     float64(h.sum.Load()) / float64(n) / 1e6,
		Median:   ms(h.quantile(0.5)),
		P90:      ms(h.quantile(0.9)),
		P99:      ms(h.quantile(0.99)),
		Max:      ms(h.max.Load()),
	}
}

// stampHists are a run's two distributions: added (the time the client
// gave the event, the arrival stamp on Linux, minus the server's stamp)
// and read (the time the client's parser reached the event minus the
// stamp).
type stampHists struct {
	added, read latencyHist
}

// observe records a stamped token event the client dated at and read at
// (Unix ns) and the server sent at.
func (s *stampHists) observe(at, read, sent int64) {
	s.added.observe(at - sent)
	s.read.observe(read - sent)
}
