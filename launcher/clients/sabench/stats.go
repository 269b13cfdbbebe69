package sabench

import (
	"slices"

	"github.com/slurmbench/slurmbench/launcher/clients/sabench/numpy"
	"github.com/slurmbench/slurmbench/results"
)

// computeStats turns samples in seconds into milliseconds statistics the way
// calculate_metrics does: np.<stat>(samples or 0) * 1000, so no samples give
// zeros. It sorts samples in place (after the order-sensitive sums).
func computeStats(name string, samples []float64, percentiles []float64) results.MetricStats {
	if len(samples) == 0 {
		samples = []float64{0}
	}
	st := results.MetricStats{
		Name: name,
		Mean: numpy.Mean(samples) * 1000,
		Std:  numpy.Std(samples) * 1000,
	}
	slices.Sort(samples)
	st.Median = numpy.MedianSorted(samples) * 1000
	for _, p := range percentiles {
		st.Percentiles = append(st.Percentiles, results.Percentile{P: p, Value: numpy.PercentileSorted(samples, p) * 1000})
	}
	return st
}
