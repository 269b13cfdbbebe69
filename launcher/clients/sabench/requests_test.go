package sabench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/results"
)

// TestRequestRecordsMatchTheResult: one record per measured request, in
// dataset order, whose figures add up to the result's own.
func TestRequestRecordsMatchTheResult(t *testing.T) {
	f := &fakeEngine{ttft: 20 * time.Millisecond, itl: 2 * time.Millisecond}
	cfg := testConfig(f.start(t), 3, 9)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Requests) != res.NumPrompts {
		t.Fatalf("%d records for %d prompts", len(res.Requests), res.NumPrompts)
	}
	out, ok := 0, 0
	for i, r := range res.Requests {
		if r.Index != i || r.InputTokens != res.InputLens[i] {
			t.Errorf("record %d: index %d input %d, want %d and %d", i, r.Index, r.InputTokens, i, res.InputLens[i])
		}
		if r.Status != results.RequestOK {
			continue
		}
		ok++
		out += r.OutputTokens
		if r.TTFTms == nil || *r.TTFTms < 20 || r.E2Ems == nil || *r.E2Ems < *r.TTFTms {
			t.Errorf("record %d: ttft %v e2e %v", i, r.TTFTms, r.E2Ems)
		}
		if r.StartUnix < res.BenchmarkStartTimeUnix || *r.EndUnix > res.BenchmarkEndTimeUnix+1e-3 || *r.FirstUnix > *r.EndUnix {
			t.Errorf("record %d: %v..%v..%v outside the benchmark's %v..%v", i, r.StartUnix, *r.FirstUnix, *r.EndUnix, res.BenchmarkStartTimeUnix, res.BenchmarkEndTimeUnix)
		}
		// The gaps add up to the time from the first token to the last
		// (however the transport batched the chunks); the summary is
		// ordered.
		if r.ITL == nil || r.ITL.Count != r.OutputTokens-1 || r.ITL.Median > r.ITL.P99 || r.ITL.P99 > r.ITL.Max ||
			math.Abs(r.ITL.Mean*float64(r.ITL.Count)-(*r.E2Ems-*r.TTFTms)) > 0.01 {
			t.Errorf("record %d: itl %+v for %d tokens, first token to last %.3f ms", i, r.ITL, r.OutputTokens, *r.E2Ems-*r.TTFTms)
		}
	}
	if ok != res.Completed || out != res.TotalOutputTokens {
		t.Errorf("records: %d ok, %d output tokens; result: %d completed, %d", ok, out, res.Completed, res.TotalOutputTokens)
	}
}

// A request the engine refuses is a failed record with its error.
func TestRequestRecordsKeepFailures(t *testing.T) {
	f := &fakeEngine{ttft: time.Millisecond, itl: time.Millisecond, status: 500}
	cfg := testConfig(f.start(t), 2, 4)
	cfg.WarmupPrompts = -1
	res, _ := Run(context.Background(), cfg)
	if res == nil || len(res.Requests) != 4 {
		t.Fatalf("result %+v", res)
	}
	for _, r := range res.Requests {
		if r.Status != results.RequestFailed || r.Error == "" || r.TTFTms != nil || r.StartUnix == 0 {
			t.Errorf("record %+v, want failed with its error and start", r)
		}
	}
}
