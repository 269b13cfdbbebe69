// Package mt19937 is the Mersenne Twister both Python's random and numpy's
// legacy RandomState are built on. The packages that must reproduce their
// draws bit for bit (gsm8k few-shot sampling, SA-Bench's dataset) share this
// core and add their language's seeding and derived draws on top.
package mt19937

const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// MT is the generator state.
type MT struct {
	state [n]uint32
	index int
}

// SeedUint32 is the reference init_genrand (numpy's seed for an integer).
func (r *MT) SeedUint32(s uint32) {
	r.state[0] = s
	for i := 1; i < n; i++ {
		prev := r.state[i-1]
		r.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	r.index = n
}

// SeedArray is the reference init_by_array (CPython's seeding of an int).
func (r *MT) SeedArray(key []uint32) {
	r.SeedUint32(19650218)
	i, j := 1, 0
	k := max(n, len(key))
	for ; k > 0; k-- {
		prev := r.state[i-1]
		r.state[i] = (r.state[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			r.state[0] = r.state[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = n - 1; k > 0; k-- {
		prev := r.state[i-1]
		r.state[i] = (r.state[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			r.state[0] = r.state[n-1]
			i = 1
		}
	}
	r.state[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
}

// Uint32 is genrand_uint32: the next tempered 32-bit output.
func (r *MT) Uint32() uint32 {
	if r.index >= n {
		var kk int
		for kk = 0; kk < n-m; kk++ {
			y := (r.state[kk] & upperMask) | (r.state[kk+1] & lowerMask)
			r.state[kk] = r.state[kk+m] ^ (y >> 1) ^ (y&1)*matrixA
		}
		for ; kk < n-1; kk++ {
			y := (r.state[kk] & upperMask) | (r.state[kk+1] & lowerMask)
			r.state[kk] = r.state[kk+(m-n)] ^ (y >> 1) ^ (y&1)*matrixA
		}
		y := (r.state[n-1] & upperMask) | (r.state[0] & lowerMask)
		r.state[n-1] = r.state[m-1] ^ (y >> 1) ^ (y&1)*matrixA
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
