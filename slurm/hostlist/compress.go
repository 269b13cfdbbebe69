package hostlist

import (
	"strconv"
	"strings"
)

// Compress writes hosts as a hostlist that Expand turns back into the same
// hosts in the same order: consecutive names that differ only in their last
// number share one bracket group ("n01,n02,n03,n07" → "n[01-03,07]").
// Unlike `scontrol show hostlist` it neither sorts nor removes duplicates,
// because the order of a job's nodes matters (node 0 is the head). Names
// containing '[', ']', ',' or whitespace cannot be written as a hostlist
// and are copied as they are.
func Compress(hosts []string) string {
	var b strings.Builder
	var cur *group
	flush := func() {
		if cur == nil {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		cur.write(&b)
		cur = nil
	}
	for _, h := range hosts {
		prefix, digits, suffix, ok := splitNumber(h)
		if !ok {
			flush()
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(h)
			continue
		}
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil { // too many digits for a range; keep the name as it is
			flush()
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(h)
			continue
		}
		if cur == nil || cur.prefix != prefix || cur.suffix != suffix {
			flush()
			cur = &group{prefix: prefix, suffix: suffix}
		}
		cur.add(n, digits)
	}
	flush()
	return b.String()
}

// group is a run of hosts prefix<number>suffix.
type group struct {
	prefix, suffix string
	ranges         []numRange
}

// numRange is lo..hi; width > 0 means every number is zero-padded to
// width digits, 0 means no number has a leading zero.
type numRange struct {
	lo, hi uint64
	width  int
}

func digitWidth(digits string) int {
	if len(digits) > 1 && digits[0] == '0' {
		return len(digits)
	}
	return 0
}

func (g *group) add(n uint64, digits string) {
	if k := len(g.ranges); k > 0 {
		r := &g.ranges[k-1]
		// Expand pads a range to its low bound's width, so a number joins a
		// padded range only with exactly that many digits and an unpadded
		// range only without a leading zero.
		fits := (r.width == 0 && digitWidth(digits) == 0) || (r.width > 0 && len(digits) == r.width)
		if fits && r.hi != ^uint64(0) && n == r.hi+1 {
			r.hi = n
			return
		}
	}
	g.ranges = append(g.ranges, numRange{lo: n, hi: n, width: digitWidth(digits)})
}

func (g *group) write(b *strings.Builder) {
	b.WriteString(g.prefix)
	single := len(g.ranges) == 1 && g.ranges[0].lo == g.ranges[0].hi
	if !single {
		b.WriteByte('[')
	}
	for i, r := range g.ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(pad(r.lo, r.width))
		if r.hi != r.lo {
			b.WriteByte('-')
			b.WriteString(pad(r.hi, r.width))
		}
	}
	if !single {
		b.WriteByte(']')
	}
	b.WriteString(g.suffix)
}

// splitNumber splits h around its last run of digits. ok is false when h
// has no digits or cannot be part of a hostlist.
func splitNumber(h string) (prefix, digits, suffix string, ok bool) {
	if h == "" || strings.ContainsAny(h, "[], \t\n") {
		return "", "", "", false
	}
	end := len(h)
	for end > 0 && !isDigit(h[end-1]) {
		end--
	}
	if end == 0 {
		return "", "", "", false
	}
	start := end
	for start > 0 && isDigit(h[start-1]) {
		start--
	}
	return h[:start], h[start:end], h[end:], true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
