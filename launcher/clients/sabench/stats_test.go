package sabench

import (
	"math"
	"testing"
)

// numpySamples is a deterministic sample set computed with the same IEEE
// operations in Python, so the expected values below could be produced by
// numpy 1.24 on identical inputs:
//
//	xs = [((i*7919)%1000)/997.0*0.05 + i*1e-7 for i in range(n)]
//	[np.mean(a)*1000, np.median(a)*1000, np.std(a)*1000,
//	 np.percentile(a, 90)*1000, np.percentile(a, 99)*1000, np.percentile(a, 99.9)*1000]
func numpySamples(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64((i*7919)%1000)/997.0*0.05 + float64(i)*1e-7
	}
	return xs
}

func TestComputeStatsMatchesNumpy(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		// mean, median, std, p90, p99, p99.9 in ms, printed by numpy with repr().
		want [6]float64
	}{
		// By hand: mean 2.5 ms; std sqrt(1.25); p90 at virtual index 2.7 →
		// 4 - 1*(1-0.7) = 3.7; p99 at 2.97 interpolates from the upper end,
		// which is why numpy gives 3.9699999999999998, not 3.97.
		{"hand 1..4 ms", []float64{0.001, 0.002, 0.003, 0.004},
			[6]float64{2.5, 2.5, 1.118033988749895, 3.7, 3.9699999999999998, 3.9970000000000008}},
		// Identical samples: std exactly 0 (a zero std_tpot must not break anything).
		{"constant", []float64{0.010, 0.010, 0.010}, [6]float64{10, 10, 0, 10, 10, 10}},
		{"n=1", numpySamples(1), [6]float64{0, 0, 0, 0, 0, 0}},
		{"n=2", numpySamples(2), [6]float64{23.044182397191577, 23.044182397191577, 23.044182397191577, 41.479528314944844, 45.62748114643932, 46.04227642958878}},
		{"n=5", numpySamples(5), [6]float64{31.99618796389168, 37.96419167502508, 16.505743190583598, 44.46353017051154, 45.925881331995996, 46.07211644814444}},
		{"n=8", numpySamples(8), [6]float64{29.664341975927787, 31.871061835506517, 13.544828173322179, 43.24490420260782, 45.804018735205624, 46.0599301884654}},
		{"n=100", numpySamples(100), [6]float64{24.603746389167505, 24.603746389167505, 14.632568387582033, 44.85251864593781, 49.05488293781344, 49.192231794282854}},
		{"n=129 (pairwise split)", numpySamples(129), [6]float64{24.989877564476377, 25.777931995987963, 14.594354948606377, 44.86793378134403, 49.01017904513541, 49.187761405015046}},
		// Beyond numpy's 8192-element buffer: sums are per buffer.
		{"n=20000 (buffered sums)", numpySamples(20000), [6]float64{26.050100451354066, 26.052301354062187, 14.488677170328062, 46.109449819458376, 50.70756135506518, 51.688005594583785}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := computeStats("ttft", append([]float64(nil), tt.samples...), DefaultPercentiles)
			got := [6]float64{st.Mean, st.Median, st.Std}
			for i, p := range st.Percentiles {
				got[3+i] = p.Value
			}
			names := [6]string{"mean", "median", "std", "p90", "p99", "p99.9"}
			for i := range got {
				// Exact: the port reproduces numpy's operation order.
				if got[i] != tt.want[i] {
					t.Errorf("%s = %v, numpy gives %v", names[i], got[i], tt.want[i])
				}
			}
		})
	}
}

func TestComputeStatsEmptyIsZero(t *testing.T) {
	// calculate_metrics uses np.mean(xs or 0): no samples give zeros, not NaN.
	st := computeStats("tpot", nil, DefaultPercentiles)
	if st.Mean != 0 || st.Median != 0 || st.Std != 0 || len(st.Percentiles) != 3 {
		t.Fatalf("stats of no samples = %+v, want zeros", st)
	}
	for _, p := range st.Percentiles {
		if p.Value != 0 || math.IsNaN(p.Value) {
			t.Errorf("p%v = %v, want 0", p.P, p.Value)
		}
	}
}
