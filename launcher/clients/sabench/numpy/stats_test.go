package numpy

import "testing"

func TestPercentileEnds(t *testing.T) {
	// np.percentile([3, 1, 2, 10], [0, 50, 100, 25, 75, 33.3])
	// = [1.0, 2.5, 10.0, 1.75, 4.75, 1.9989999999999999] (repr of each)
	sorted := []float64{1, 2, 3, 10}
	for _, c := range []struct{ p, want float64 }{
		{0, 1}, {50, 2.5}, {100, 10}, {25, 1.75}, {75, 4.75}, {33.3, 1.9989999999999999},
	} {
		if got := PercentileSorted(sorted, c.p); got != c.want {
			t.Errorf("percentile %v = %v, numpy gives %v", c.p, got, c.want)
		}
	}
}
