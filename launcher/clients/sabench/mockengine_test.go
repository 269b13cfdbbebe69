package sabench

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/mockengine"
	"github.com/slurmbench/slurmbench/results"
)

// TestAgainstMockEngine is the native client's acceptance check:
// one point at concurrencies 8x32 against the mock engine (TTFT 50 ms, ITL
// 10 ms) gives two result files with completed = 80 and 320, every drawn
// output token counted, median TTFT within 5 ms of 50 ms and median TPOT
// within 1 ms of 10 ms.
func TestAgainstMockEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~8 s of real-time streams")
	}
	const model = "deepseek-ai/DeepSeek-R1"
	url := mockengine.StartTest(t, mockengine.Options{Model: model, TTFT: 50 * time.Millisecond, ITL: 10 * time.Millisecond})
	dir := filepath.Join(t.TempDir(), results.ConfigName(64, 32))
	if err := mkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	// Σ output lengths numpy draws with seed 0 for 80 and 320 prompts of OSL 32.
	numpyOutputSums := map[int]int{8: 2282, 32: 9082}
	for _, conc := range []int{8, 32} {
		t.Run(fmt.Sprintf("c%d", conc), func(t *testing.T) {
			cfg := NewConfig(url, model, 64, 32, conc)
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			name, _ := results.RawName(results.PointID{Concurrency: conc, GPUs: 24, PrefillGPUs: 16, DecodeGPUs: 8})
			path := filepath.Join(dir, name)
			verr := results.ValidateSABench(res, 10*conc)
			if err := results.WriteSABench(path, res); err != nil {
				t.Fatal(err)
			}
			if verr != nil {
				t.Fatalf("Validate: %v", verr)
			}
			back, err := results.ReadSABench(path)
			if err != nil {
				t.Fatal(err)
			}
			if back.Completed != 10*conc || back.NumPrompts != 10*conc || back.MaxConcurrency != conc {
				t.Errorf("completed %d of num_prompts %d at max_concurrency %d, want %d", back.Completed, back.NumPrompts, back.MaxConcurrency, 10*conc)
			}
			if back.TotalOutputTokens != numpyOutputSums[conc] {
				t.Errorf("total_output_tokens %d, want Σ drawn output lengths %d", back.TotalOutputTokens, numpyOutputSums[conc])
			}
			ttft, _ := back.Metric("ttft")
			tpot, _ := back.Metric("tpot")
			if math.Abs(ttft.Median-50) > 5 {
				t.Errorf("median TTFT %.3f ms, want 50 ± 5 ms", ttft.Median)
			}
			if math.Abs(tpot.Median-10) > 1 {
				t.Errorf("median TPOT %.3f ms, want 10 ± 1 ms", tpot.Median)
			}
			if back.Valid == nil || !*back.Valid {
				t.Errorf("file not marked valid")
			}
			t.Logf("c%d: %d requests in %.2fs, median TTFT %.2f ms, median TPOT %.3f ms, p99 ITL %.2f ms",
				conc, back.Completed, back.Duration, ttft.Median, tpot.Median, p99(back, "itl"))
		})
	}
}

func p99(r *results.SABenchResult, metric string) float64 {
	m, _ := r.Metric(metric)
	v, _ := m.Percentile(99)
	return v
}
