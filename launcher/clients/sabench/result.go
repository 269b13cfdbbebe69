package sabench

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/results"
)

// maxErrorKinds bounds slurmbench_errors; maxErrorText bounds each message.
const (
	maxErrorKinds = 10
	maxErrorText  = 300
)

func newResult(cfg Config) *results.SABenchResult {
	return &results.SABenchResult{
		Backend:        cfg.Backend,
		ModelID:        cfg.Model,
		TokenizerID:    cfg.Tokenizer,
		BestOf:         1,
		NumPrompts:     cfg.NumPrompts,
		Metadata:       cfg.Metadata,
		RequestRate:    cfg.RequestRate,
		Burstiness:     cfg.Burstiness,
		MaxConcurrency: cfg.MaxConcurrency,
		Client:         results.ClientNative,
		Date:           time.Now().Format("20060102-150405"),
	}
}

// fill computes res's metrics as calculate_metrics does, from the records of
// the measured requests.
func fill(res *results.SABenchResult, cfg Config, ds *Dataset, records []record, start, end time.Time) {
	dur := end.Sub(start).Seconds()
	res.Date = end.Format("20060102-150405")
	res.Duration = dur
	res.BenchmarkStartTimeUnix = unixSeconds(start)
	res.BenchmarkEndTimeUnix = unixSeconds(end)

	n := len(records)
	nITL := 0
	for i := range records {
		nITL += len(records[i].itl)
	}
	outputLens := make([]int, n)
	ttfts := make([]float64, 0, n)
	e2els := make([]float64, 0, n)
	tpots := make([]float64, 0, n)
	allTPOTs := make([]float64, 0, n)
	itls := make([]float64, 0, nITL)
	totalInput, totalOutput := 0, 0
	if cfg.SaveDetailed {
		res.Detail = detail(records)
	}
	res.Requests = make([]results.RequestRecord, n)
	for i := range records {
		rec := &records[i]
		res.Requests[i] = requestRecord(i, rec, ds.InputLens[i])
		if !rec.success {
			continue
		}
		// usage.completion_tokens, as the Python tool; without usage it would
		// re-tokenize the text, which needs a tokenizer: count the chunks.
		out := rec.outputTokens
		if out < 0 {
			out = rec.chunks
		}
		outputLens[i] = out
		totalOutput += out
		totalInput += ds.InputLens[i]
		ttft, latency := rec.ttft.Seconds(), rec.latency.Seconds()
		tpot := 0.0
		if out > 1 {
			tpot = (latency - ttft) / float64(out-1)
			tpots = append(tpots, tpot)
		}
		allTPOTs = append(allTPOTs, tpot) // goodput counts tpot 0 for one-token outputs
		for _, d := range rec.itl {
			itls = append(itls, d.Seconds())
		}
		rec.itl = nil // an 8k/1k point at c2048 holds ~19M gaps: keep one copy
		ttfts = append(ttfts, ttft)
		e2els = append(e2els, latency)
		res.Completed++
	}
	res.TotalInputTokens = totalInput
	res.TotalOutputTokens = totalOutput
	res.RequestThroughput = perSecond(float64(res.Completed), dur)
	res.OutputThroughput = perSecond(float64(totalOutput), dur)
	res.TotalTokenThroughput = perSecond(float64(totalInput+totalOutput), dur)
	if len(cfg.Goodput) > 0 {
		g := perSecond(float64(goodCount(cfg.Goodput, ttfts, allTPOTs, e2els)), dur)
		res.RequestGoodput = &g
	}
	res.InputLens = ds.InputLens
	res.OutputLens = outputLens
	res.Errors = errorCounts(records)

	samples := map[string][]float64{"ttft": ttfts, "tpot": tpots, "itl": itls, "e2el": e2els}
	for _, name := range results.MetricNames {
		if slices.Contains(cfg.PercentileMetrics, name) {
			res.Metrics = append(res.Metrics, computeStats(name, samples[name], cfg.Percentiles))
		}
	}
}

// requestRecord is one request's line of the requests file, taken before
// fill drops its gaps.
func requestRecord(i int, rec *record, inputLen int) results.RequestRecord {
	r := results.RequestRecord{Index: i, InputTokens: inputLen, Status: results.RequestFailed, Error: rec.err}
	switch {
	case !rec.sent:
		r.Status = results.RequestNotSent
	case rec.interrupted:
		r.Status = results.RequestInterrupted
	case rec.success:
		r.Status = results.RequestOK
	}
	if !rec.start.IsZero() {
		r.StartUnix = unixSeconds(rec.start)
	}
	if !rec.success {
		return r
	}
	r.OutputTokens = rec.outputTokens
	if r.OutputTokens < 0 {
		r.OutputTokens = rec.chunks
	}
	ttft, e2e := msOf(rec.ttft), msOf(rec.latency)
	first, end := r.StartUnix+ttft/1000, r.StartUnix+e2e/1000
	r.TTFTms, r.E2Ems, r.FirstUnix, r.EndUnix = &ttft, &e2e, &first, &end
	if len(rec.itl) > 0 {
		gaps := make([]float64, len(rec.itl))
		sum := 0.0
		for j, d := range rec.itl {
			gaps[j] = msOf(d)
			sum += gaps[j]
		}
		slices.Sort(gaps)
		r.ITL = &results.ITLStats{Count: len(gaps), Mean: sum / float64(len(gaps)),
			Median: nearestRank(gaps, 0.5), P99: nearestRank(gaps, 0.99), Max: gaps[len(gaps)-1]}
	}
	return r
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// nearestRank is the smallest sorted sample with at least q of the samples
// at or below it.
func nearestRank(sorted []float64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(k, 0)]
}

// emptyMetrics are the statistics of a run without completed requests.
func emptyMetrics(cfg Config) []results.MetricStats {
	var ms []results.MetricStats
	for _, name := range results.MetricNames {
		if slices.Contains(cfg.PercentileMetrics, name) {
			ms = append(ms, computeStats(name, nil, cfg.Percentiles))
		}
	}
	return ms
}

// goodCount counts requests within every SLO (milliseconds), as
// calculate_metrics does with --goodput.
func goodCount(slo map[string]float64, ttfts, tpots, e2els []float64) int {
	within := func(metric string, v float64) bool {
		limit, set := slo[metric]
		return !set || limit/1000 >= v
	}
	good := 0
	for i := range ttfts {
		if within("ttft", ttfts[i]) && within("tpot", tpots[i]) && within("e2el", e2els[i]) {
			good++
		}
	}
	return good
}

// perSecond divides by a duration, giving 0 for an empty run instead of the
// ZeroDivisionError or NaN a direct division would.
func perSecond(v, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return v / seconds
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func detail(records []record) *results.SABenchDetail {
	d := &results.SABenchDetail{
		TTFTs:          make([]float64, len(records)),
		ITLs:           make([][]float64, len(records)),
		GeneratedTexts: make([]string, len(records)),
		Errors:         make([]string, len(records)),
	}
	for i := range records {
		rec := &records[i]
		d.TTFTs[i] = rec.ttft.Seconds()
		d.ITLs[i] = make([]float64, len(rec.itl))
		for j, v := range rec.itl {
			d.ITLs[i][j] = v.Seconds()
		}
		d.GeneratedTexts[i] = string(rec.text)
		d.Errors[i] = rec.err
	}
	return d
}

// errorCounts groups failures by message, most frequent first.
func errorCounts(records []record) []results.ErrorCount {
	counts := map[string]int{}
	for i := range records {
		rec := &records[i]
		switch {
		case rec.success:
		case !rec.sent:
			counts["not sent: run interrupted"]++
		default:
			msg := rec.err
			if len(msg) > maxErrorText {
				msg = strings.ToValidUTF8(msg[:maxErrorText], "") + "…"
			}
			counts[msg]++
		}
	}
	out := make([]results.ErrorCount, 0, len(counts))
	for msg, n := range counts {
		out = append(out, results.ErrorCount{Error: msg, Count: n})
	}
	slices.SortFunc(out, func(a, b results.ErrorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Error, b.Error))
	})
	if len(out) > maxErrorKinds {
		rest := 0
		for _, e := range out[maxErrorKinds:] {
			rest += e.Count
		}
		out = append(out[:maxErrorKinds], results.ErrorCount{Error: "other errors", Count: rest})
	}
	return out
}
