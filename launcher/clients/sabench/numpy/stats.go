package numpy

import (
	"math"
)

// The statistics below reproduce numpy's float64 results bit for bit, so a
// native result equals what benchmark_serving.py computes from the same
// samples (its calculate_metrics uses np.mean, np.std, np.median and
// np.percentile with the default linear method).

// bufferSize is numpy's ufunc buffer size: reductions that go through the
// buffered iterator (np.mean, np.std) sum 8192 elements at a time.
const bufferSize = 8192

// Sum is the float64 sum np.mean and np.std compute: pairwise summation
// within each 8192-element buffer, buffers accumulated in order.
func Sum(xs []float64) float64 {
	s := 0.0
	for len(xs) > 0 {
		n := min(len(xs), bufferSize)
		s += pairwiseSum(xs[:n])
		xs = xs[n:]
	}
	return s
}

// pairwiseSum is numpy's pairwise_sum_DOUBLE: plain loop below 8 elements,
// eight interleaved accumulators up to 128, otherwise split in two halves
// (the first a multiple of 8 long).
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := 0.0
		for _, v := range a {
			res += v
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}

// pairwiseSqDev is pairwiseSum over (a[i]-mean)², the order numpy's _var
// sums x*x after x = arr - mean, without materialising x.
func pairwiseSqDev(a []float64, mean float64) float64 {
	sq := func(v float64) float64 { d := v - mean; return d * d }
	n := len(a)
	switch {
	case n < 8:
		res := 0.0
		for _, v := range a {
			res += sq(v)
		}
		return res
	case n <= 128:
		var r [8]float64
		for j := range r {
			r[j] = sq(a[j])
		}
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += sq(a[i+j])
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += sq(a[i])
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSqDev(a[:n2], mean) + pairwiseSqDev(a[n2:], mean)
	}
}

// Mean is np.mean.
func Mean(xs []float64) float64 { return Sum(xs) / float64(len(xs)) }

// Std is np.std: the population standard deviation (ddof=0).
func Std(xs []float64) float64 {
	mean := Mean(xs)
	s := 0.0
	for rest := xs; len(rest) > 0; {
		n := min(len(rest), bufferSize)
		s += pairwiseSqDev(rest[:n], mean)
		rest = rest[n:]
	}
	return math.Sqrt(s / float64(len(xs)))
}

// MedianSorted is np.median of sorted samples: the middle one, or the
// mean of the middle two.
func MedianSorted(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// PercentileSorted is np.percentile(samples, p) with method="linear":
// virtual index (n-1)·p/100 and numpy's two-sided _lerp.
func PercentileSorted(sorted []float64, p float64) float64 {
	n := len(sorted)
	virtual := float64(n-1) * (p / 100)
	if virtual >= float64(n-1) {
		return sorted[n-1]
	}
	if virtual < 0 {
		return sorted[0]
	}
	prev := math.Floor(virtual)
	i := int(prev)
	return lerp(sorted[i], sorted[i+1], virtual-prev)
}

// lerp interpolates from the nearer end, as numpy's _lerp does, so that
// t = 1 gives exactly b.
func lerp(a, b, t float64) float64 {
	diff := b - a
	if t >= 0.5 {
		return b - diff*(1-t)
	}
	return a + diff*t
}
