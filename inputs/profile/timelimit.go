package profile

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxTimeLimitMinutes is the largest finite time limit Slurm stores (a
// uint32 of minutes below INFINITE and NO_VAL).
const maxTimeLimitMinutes = 0xFFFFFFFD

// ParseTimeLimit parses a Slurm time limit ("MM", "MM:SS", "HH:MM:SS",
// "D-HH", "D-HH:MM", "D-HH:MM:SS") into whole minutes, rounding seconds up
// as Slurm does. slurmrestd takes time_limit in minutes.
func ParseTimeLimit(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty time limit")
	}
	bad := fmt.Errorf("%q is not a Slurm time limit (MM, HH:MM:SS or D-HH:MM:SS)", s)
	// Each field is at most 9 digits, so the total cannot overflow before
	// the check against Slurm's largest finite limit below.
	field := func(p string) (int, bool) {
		n, err := strconv.Atoi(p)
		return n, err == nil && n >= 0 && len(p) <= 9
	}
	days := 0
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, ok := field(d)
		if !ok {
			return 0, bad
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, ok := field(p)
		if !ok {
			return 0, bad
		}
		nums[i] = n
	}
	var h, m, sec int
	switch {
	case strings.Contains(s, "-"):
		switch len(nums) {
		case 1:
			h = nums[0]
		case 2:
			h, m = nums[0], nums[1]
		case 3:
			h, m, sec = nums[0], nums[1], nums[2]
		default:
			return 0, bad
		}
	default:
		switch len(nums) {
		case 1:
			m = nums[0]
		case 2:
			m, sec = nums[0], nums[1]
		case 3:
			h, m, sec = nums[0], nums[1], nums[2]
		default:
			return 0, bad
		}
	}
	total := days*24*60 + h*60 + m
	if sec > 0 {
		total++
	}
	if total <= 0 {
		return 0, fmt.Errorf("%q: time limit must be positive", s)
	}
	if total > maxTimeLimitMinutes {
		return 0, fmt.Errorf("%q is %d minutes, more than Slurm's largest time limit (%d minutes)", s, total, maxTimeLimitMinutes)
	}
	if total > MaxTimeLimitMinutes {
		return 0, fmt.Errorf("%q is %d minutes, more than the %d minutes (about 292 years) slurmbench can hold as a duration", s, total, MaxTimeLimitMinutes)
	}
	return total, nil
}

// MaxTimeLimitMinutes is the largest time limit slurmbench takes: the
// minutes a time.Duration holds. Past it the limit wrapped negative and
// the job went out with no time_limit (the partition's default) while
// render showed the huge one, and preflight's max-time check was skipped.
const MaxTimeLimitMinutes = int(math.MaxInt64 / int64(time.Minute))

// TimeLimitMinutes rounds a duration (up --time-limit) up to whole
// minutes: at least one, at most MaxTimeLimitMinutes.
func TimeLimitMinutes(d time.Duration) (int, error) {
	if d < time.Minute {
		return 0, fmt.Errorf("%s: at least one minute", d)
	}
	m := int(d / time.Minute)
	if d%time.Minute != 0 {
		m++
	}
	if m > MaxTimeLimitMinutes || m > maxTimeLimitMinutes {
		return 0, fmt.Errorf("%s: more than the %d minutes a time limit may be", d, min(MaxTimeLimitMinutes, maxTimeLimitMinutes))
	}
	return m, nil
}

// ImportTimeLimitMinutes bounds an import job: the profile's time limit, or
// 3 hours.
func (s Slurm) ImportTimeLimitMinutes() int {
	if m, err := ParseTimeLimit(s.TimeLimit); err == nil {
		return m
	}
	return 180
}
