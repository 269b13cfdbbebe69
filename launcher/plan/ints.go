package plan

import (
	"strconv"
	"strings"
)

// JoinInts writes xs as a comma-separated list (CUDA_VISIBLE_DEVICES, --device-ids).
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
