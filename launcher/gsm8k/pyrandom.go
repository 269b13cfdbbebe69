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
)

const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// PyRandom is a port of CPython's random.Random (Mersenne Twister). Only the
// calls lm-eval's default few-shot sampler makes are provided.
type PyRandom struct {
	state [mtN]uint32
	index int
}

// NewPyRandom returns the generator random.Random(seed) would build for a
// Python int seed. Like CPython it seeds with the absolute value, split into
// 32-bit words, least significant first.
func NewPyRandom(seed int64) *PyRandom {
	magnitude := uint64(seed)
	if seed < 0 {
		magnitude = uint64(-(seed + 1)) + 1 // abs without overflow at MinInt64
	}
	key := []uint32{uint32(magnitude)}
	if hi := uint32(magnitude >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &PyRandom{}
	r.initByArray(key)
	return r
}

func (r *PyRandom) initGenrand(s uint32) {
	r.state[0] = s
	for i := 1; i < mtN; i++ {
		prev := r.state[i-1]
		r.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	r.index = mtN
}

func (r *PyRandom) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	k := max(mtN, len(key))
	for ; k > 0; k-- {
		prev := r.state[i-1]
		r.state[i] = (r.state[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			r.state[0] = r.state[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = mtN - 1; k > 0; k-- {
		prev := r.state[i-1]
		r.state[i] = (r.state[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			r.state[0] = r.state[mtN-1]
			i = 1
		}
	}
	r.state[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
}

// Uint32 is CPython's genrand_uint32: the next tempered 32-bit output.
func (r *PyRandom) Uint32() uint32 {
	if r.index >= mtN {
		var kk int
		for kk = 0; kk < mtN-mtM; kk++ {
			y := (r.state[kk] & mtUpperMask) | (r.state[kk+1] & mtLowerMask)
			r.state[kk] = r.state[kk+mtM] ^ (y >> 1) ^ (y&1)*mtMatrixA
		}
		for ; kk < mtN-1; kk++ {
			y := (r.state[kk] & mtUpperMask) | (r.state[kk+1] & mtLowerMask)
			r.state[kk] = r.state[kk+(mtM-mtN)] ^ (y >> 1) ^ (y&1)*mtMatrixA
		}
		y := (r.state[mtN-1] & mtUpperMask) | (r.state[0] & mtLowerMask)
		r.state[mtN-1] = r.state[mtM-1] ^ (y >> 1) ^ (y&1)*mtMatrixA
		r.index = 0
	}
	y := r.state[r.index]
	r.index++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

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
	return int(v)
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
