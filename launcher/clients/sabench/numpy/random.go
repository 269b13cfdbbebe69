// Package numpy reproduces, bit for bit, the NumPy numerics
// benchmark_serving.py depends on: the legacy global generator's draws
// (RandomState on MT19937: seed, randint, gamma) and the float64 reductions
// its calculate_metrics makes (np.mean, np.std, np.median, np.percentile).
// The native client uses them so that, for one seed, it sends the lengths
// the Python tool sends and reports the statistics it reports.
package numpy

import (
	"math"

	"github.com/slurmbench/slurmbench/internal/mt19937"
)

// RandomState reproduces the draws of numpy's legacy global generator
// (np.random.seed / np.random.randint / np.random.gamma, i.e. RandomState on
// MT19937) that benchmark_serving.py makes after np.random.seed(args.seed).
// Matching it draw for draw means the native client sends the same
// input/output lengths and id offsets as the Python tool for the same seed.
type RandomState struct {
	mt mt19937.MT

	hasGauss bool
	gauss    float64
}

// NewRandomState seeds like np.random.seed(seed) for an integer seed
// (numpy's mt19937_seed, i.e. the reference init_genrand).
func NewRandomState(seed uint32) *RandomState {
	r := &RandomState{}
	r.mt.SeedUint32(seed)
	return r
}

func (r *RandomState) uint32() uint32 { return r.mt.Uint32() }

// float64 is numpy's 53-bit double in [0, 1) from two 32-bit draws.
func (r *RandomState) float64() float64 {
	a := r.uint32() >> 5
	b := r.uint32() >> 6
	return (float64(a)*67108864.0 + float64(b)) / 9007199254740992.0
}

// Randint fills out like np.random.randint(low, high, size=len(out)):
// uniform on [low, high), by masked rejection sampling on 32-bit draws, as
// RandomState does for ranges below 2^32. A single-value range draws nothing.
func (r *RandomState) Randint(low, high int64, out []int64) {
	rng := uint64(high - 1 - low) //nolint:gosec // high > low: a non-negative range, as numpy computes it
	switch {
	case rng == 0:
		for i := range out {
			out[i] = low
		}
	case rng == math.MaxUint32:
		for i := range out {
			out[i] = low + int64(r.uint32())
		}
	default:
		mask := rng
		for _, s := range []uint{1, 2, 4, 8, 16, 32} {
			mask |= mask >> s
		}
		m32 := uint32(mask) //nolint:gosec // rng < 2^32 in this branch, so is its mask
		for i := range out {
			v := r.uint32() & m32
			for uint64(v) > rng {
				v = r.uint32() & m32
			}
			out[i] = low + int64(v)
		}
	}
}

// gaussian is numpy's legacy polar Box-Muller normal, which caches the second value.
func (r *RandomState) gaussian() float64 {
	if r.hasGauss {
		r.hasGauss = false
		g := r.gauss
		r.gauss = 0
		return g
	}
	var x1, x2, r2 float64
	for {
		x1 = 2*r.float64() - 1
		x2 = 2*r.float64() - 1
		r2 = x1*x1 + x2*x2
		if r2 < 1 && r2 != 0 {
			break
		}
	}
	f := math.Sqrt(-2 * math.Log(r2) / r2)
	r.gauss = f * x1
	r.hasGauss = true
	return f * x2
}

func (r *RandomState) standardExponential() float64 {
	return -math.Log(1 - r.float64())
}

// Gamma follows numpy's legacy_gamma(shape, scale): the exponential for
// shape 1 (a Poisson arrival process), Marsaglia-Tsang above 1, and
// Johnk-style rejection below 1. Go's math.Log/Pow may differ from libm in
// the last bit, so the values match numpy to ~1e-15, not always bit for bit.
func (r *RandomState) Gamma(shape, scale float64) float64 {
	return scale * r.standardGamma(shape)
}

func (r *RandomState) standardGamma(shape float64) float64 {
	switch {
	case shape == 1:
		return r.standardExponential()
	case shape == 0:
		return 0
	case shape < 1:
		for {
			u := r.float64()
			v := r.standardExponential()
			if u <= 1-shape {
				x := math.Pow(u, 1/shape)
				if x <= v {
					return x
				}
			} else {
				y := -math.Log((1 - u) / shape)
				x := math.Pow(1-shape+shape*y, 1/shape)
				if x <= v+y {
					return x
				}
			}
		}
	default:
		b := shape - 1.0/3.0
		c := 1 / math.Sqrt(9*b)
		for {
			var x, v float64
			for {
				x = r.gaussian()
				v = 1 + c*x
				if v > 0 {
					break
				}
			}
			v = v * v * v
			u := r.float64()
			if u < 1-0.0331*(x*x)*(x*x) {
				return b * v
			}
			if math.Log(u) < 0.5*x*x+b*(1-v+math.Log(v)) {
				return b * v
			}
		}
	}
}
