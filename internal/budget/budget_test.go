package budget

import (
	"strings"
	"testing"
)

// TestHolderAndPool: a holder fails past its own limit or past the pool's,
// naming the limit, and gives back all it held; a pool without a limit
// only counts.
func TestHolderAndPool(t *testing.T) {
	for _, tt := range []struct {
		name    string
		limit   int64
		max     int64
		charges []int
		ok      int // charges that succeed before the failure (-1: all)
		err     string
		left    int64 // pool's held after
	}{
		{"within both", 100, 1000, []int{40, 60}, -1, "", 100},
		{"past its own", 100, 1000, []int{40, 61}, 1, "more than the 100 bytes one may hold", 0},
		{"past the pool's", 1 << 20, 1 << 10, []int{1000, 25}, 1, "more than the 1 KiB all together may hold", 0},
		{"a pool that only counts", 0, 0, []int{5, 7}, -1, "", 12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &Pool{Max: tt.max}
			h := Holder{Limit: tt.limit, Pool: p}
			ok, cerr := 0, error(nil)
			for _, n := range tt.charges {
				if cerr = h.Charge(n); cerr != nil {
					break
				}
				ok++
			}
			if tt.ok == -1 && cerr != nil || tt.ok >= 0 && (ok != tt.ok || cerr == nil || !strings.Contains(cerr.Error(), tt.err)) {
				t.Errorf("%d charges ok, then %v; want %d, %q", ok, cerr, tt.ok, tt.err)
			}
			if p.Held() != tt.left {
				t.Errorf("pool holds %d, want %d", p.Held(), tt.left)
			}
		})
	}
}
