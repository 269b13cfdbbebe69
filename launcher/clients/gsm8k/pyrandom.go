package gsm8k

// lm-eval draws few-shot examples with Python's random.Random(1234).sample. To
// pick the same examples without Python, this file reproduces CPython's
// generator bit for bit: MT19937 seeded through init_by_array (what
// random.seed(int) does), getrandbits, _randbelow_with_getrandbits and the
// two branches of Random.sample (pool or set, chosen from n and k).

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/slurmbench/slurmbench/internal/mt19937"
)

// PyRandom is a port of CPython's random.Random (Mersenne Twister). Only the
// calls lm-eval's default few-shot sampler makes are provided.
type PyRandom struct {
	mt mt19937.MT
}

// NewPyRandom returns the generator random.Random(seed) would build for a
// Python int seed. Like CPython it seeds with the absolute value, split into
// 32-bit words, least significant first.
func NewPyRandom(seed int64) *PyRandom {
	magnitude := uint64(seed) //nolint:gosec // CPython's bit pattern; negative seeds are handled below
	if seed < 0 {
		magnitude = uint64(-(seed + 1)) + 1 //nolint:gosec // abs without overflow at MinInt64
	}
	key := []uint32{uint32(magnitude)} //nolint:gosec // the low 32-bit word, as CPython splits the seed
	if hi := uint32(magnitude >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &PyRandom{}
	r.mt.SeedArray(key)
	return r
}

// Uint32 is CPython's genrand_uint32: the next tempered 32-bit output.
func (r *PyRandom) Uint32() uint32 { return r.mt.Uint32() }

// GetRandBits is random.getrandbits(k) for 0 <= k <= 64. Wider values are
// assembled from 32-bit words least significant first, as CPython does.
func (r *PyRandom) GetRandBits(k int) uint64 {
	switch {
	case k < 0 || k > 64:
		panic(fmt.Sprintf("GetRandBits: k=%d out of range [0, 64]", k))
	case k == 0:
		return 0
	case k <= 32:
		return uint64(r.Uint32() >> (32 - k))
	}
	lo := uint64(r.Uint32())
	hi := uint64(r.Uint32() >> (64 - k))
	return hi<<32 | lo
}

// RandBelow is Random._randbelow_with_getrandbits: a uniform int in [0, n),
// by rejection on n.bit_length() random bits. n must be positive.
func (r *PyRandom) RandBelow(n int) int {
	if n <= 0 {
		panic(fmt.Sprintf("RandBelow: n=%d must be positive", n))
	}
	k := bits.Len64(uint64(n))
	v := r.GetRandBits(k)
	for v >= uint64(n) {
		v = r.GetRandBits(k)
	}
	return int(v) //nolint:gosec // v < n, an int
}

// SampleIndices returns the indices random.sample(population, k) would pick
// from a population of size n, in selection order.
func (r *PyRandom) SampleIndices(n, k int) ([]int, error) {
	if k < 0 || k > n {
		return nil, fmt.Errorf("sample of %d from a population of %d: sample larger than population or is negative", k, n)
	}
	result := make([]int, k)
	// setsize is the size of a small set minus that of an empty list; for
	// larger k CPython adds the hash table size it would need.
	setsize := 21
	if k > 5 {
		setsize += int(math.Pow(4, math.Ceil(math.Log(float64(k*3))/math.Log(4))))
	}
	if n <= setsize {
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i
		}
		for i := 0; i < k; i++ {
			j := r.RandBelow(n - i)
			result[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return result, nil
	}
	selected := make(map[int]struct{}, k)
	for i := 0; i < k; i++ {
		j := r.RandBelow(n)
		for {
			if _, dup := selected[j]; !dup {
				break
			}
			j = r.RandBelow(n)
		}
		selected[j] = struct{}{}
		result[i] = j
	}
	return result, nil
}
