// Package budget bounds the bytes something may hold: each holder against
// its own limit and, together with the others, against a shared pool's
// (the SA-Bench client's streams, each bounded by its max_tokens, and the
// point they belong to). Past either, the charge fails naming the limit
// and the holder gives back what it held.
package budget

import (
	"fmt"
	"sync/atomic"

	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// Pool is what all holders share; its zero value has no limit.
type Pool struct {
	Max  int64
	held atomic.Int64
}

// Held is what the pool's holders hold now.
func (p *Pool) Held() int64 { return p.held.Load() }

// Holder holds bytes against Limit (0: none) and, when Pool is set, the
// pool's Max.
type Holder struct {
	Limit int64
	Pool  *Pool
	held  int64
}

// Charge counts n more bytes. Past a limit it gives back all the holder
// held and fails, naming the limit ("this holder's" or the pool's).
func (h *Holder) Charge(n int) error {
	var err error
	switch {
	case h.Limit > 0 && h.held+int64(n) > h.Limit:
		err = fmt.Errorf("more than the %s one may hold", readlimit.Size(h.Limit))
	case h.Pool != nil && h.Pool.Max > 0 && h.Pool.held.Add(int64(n)) > h.Pool.Max:
		h.Pool.held.Add(-int64(n))
		err = fmt.Errorf("more than the %s all together may hold", readlimit.Size(h.Pool.Max))
	default:
		if h.Pool != nil && h.Pool.Max <= 0 {
			h.Pool.held.Add(int64(n))
		}
		h.held += int64(n)
		return nil
	}
	h.Release()
	return err
}

// Release gives back everything the holder holds.
func (h *Holder) Release() {
	if h.Pool != nil {
		h.Pool.held.Add(-h.held)
	}
	h.held = 0
}
