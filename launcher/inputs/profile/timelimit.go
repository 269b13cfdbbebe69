package profile

import (
	"fmt"
	"time"

	"github.com/slurmbench/slurmbench/internal/duration"
)

// ParseTimeLimit parses a job time limit — Slurm's forms ("MM", "MM:SS",
// "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS") or Go's with days ("4h",
// "1d12h"), through the one duration parser — into whole minutes, rounding
// seconds up as Slurm does, within duration.JobTimeLimit. slurmrestd takes
// time_limit in minutes.
func ParseTimeLimit(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty time limit")
	}
	d, err := duration.JobTimeLimit.Parse(s)
	if err != nil {
		return 0, err
	}
	return TimeLimitMinutes(d)
}

// MaxTimeLimitMinutes is the largest time limit slurmbench takes
// (duration.JobTimeLimit's most), far below what a time.Duration holds:
// a limit that wrapped once sent the job out with no time_limit while
// render showed the huge one.
const MaxTimeLimitMinutes = int(30 * 24 * 60)

// TimeLimitMinutes rounds a job time limit (the profile's, up --time-limit)
// up to whole minutes, as Slurm counts them, within duration.JobTimeLimit.
func TimeLimitMinutes(d time.Duration) (int, error) {
	if err := duration.JobTimeLimit.Check(duration.Format(d), d); err != nil {
		return 0, err
	}
	return int((d + time.Minute - 1) / time.Minute), nil
}

// ImportTimeLimitMinutes bounds an import job: the profile's time limit, or
// 3 hours.
func (s Slurm) ImportTimeLimitMinutes() int {
	if m, err := ParseTimeLimit(s.TimeLimit); err == nil {
		return m
	}
	return 180
}
