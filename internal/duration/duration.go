// Package duration is slurmbench's one parser of durations: every time
// limit, timeout, wait and age, in profiles, recipes and flags, accepts the
// same forms, so "4h" and "04:00:00" mean the same wherever a duration is
// asked for. The forms are Slurm's (as sbatch --time takes them) and Go's
// (as time.ParseDuration takes them), with d for days.
package duration

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Forms names what Parse accepts, for error messages.
const Forms = "Slurm's MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, or 90s, 45m, 4h, 1h30m, 7d, 1d12h"

// Day is 24 hours.
const Day = 24 * time.Hour

var (
	// slurmForm: [D-]... with at most three colon-separated fields, each at
	// most 9 digits (no overflow before the range check).
	slurmForm = regexp.MustCompile(`^(?:(\d{1,9})-)?(\d{1,9})(?::(\d{1,9}))?(?::(\d{1,9}))?$`)
	// dayPrefix: Go's form with whole or decimal days in front, "1.5d", "1d12h".
	dayPrefix = regexp.MustCompile(`^(\d+(?:\.\d+)?)d(.*)$`)
)

// Parse reads s in one of Forms. A bare number is minutes, as in Slurm.
// Negative durations are refused.
func Parse(s string) (time.Duration, error) {
	return Range{}.Parse(s)
}

// Largest is the longest duration Parse can hold (about 292 years).
const Largest = time.Duration(math.MaxInt64)

// TooLargeError is a duration written in one of Forms whose value does not
// fit: it names the bound rather than calling it "not a duration".
type TooLargeError struct {
	Input string
	Max   time.Duration
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%q is too large: at most %s", e.Input, Format(e.Max))
}

// goForm is time.ParseDuration's grammar (unsigned): a string that matches
// it but does not parse has overflowed.
var goForm = regexp.MustCompile(`^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$`)

// tooLarge reports whether s is written in one of Forms (so parse refused
// it for its size, not its shape).
func tooLarge(s string) bool {
	if slurmForm.MatchString(s) {
		return true
	}
	rest := s
	if m := dayPrefix.FindStringSubmatch(s); m != nil {
		rest = m[2]
		if rest == "" {
			return true
		}
	}
	return goForm.MatchString(rest)
}

func parse(s string) (time.Duration, bool) {
	if m := slurmForm.FindStringSubmatch(s); m != nil {
		n := func(i int) int64 {
			v, _ := strconv.ParseInt(m[i], 10, 64)
			return v
		}
		days := n(1)
		var h, min, sec int64
		switch {
		case m[1] != "": // D-HH[:MM[:SS]]
			h, min, sec = n(2), n(3), n(4)
		case m[4] != "": // HH:MM:SS
			h, min, sec = n(2), n(3), n(4)
		default: // MM[:SS]
			min, sec = n(2), n(3)
		}
		total := ((days*24+h)*60+min)*60 + sec
		if total > math.MaxInt64/int64(time.Second) {
			return 0, false
		}
		return time.Duration(total) * time.Second, true
	}
	var days time.Duration
	rest := s
	if m := dayPrefix.FindStringSubmatch(s); m != nil {
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil || f*float64(Day) > math.MaxInt64/2 {
			return 0, false
		}
		days, rest = time.Duration(f*float64(Day)), m[2]
		if rest == "" {
			return days, true
		}
	}
	if rest == "" || strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
		return 0, false
	}
	d, err := time.ParseDuration(rest)
	if err != nil || d < 0 || days+d < days {
		return 0, false
	}
	return days + d, true
}

// Range bounds a duration: Min and Max inclusive (Max 0: no upper bound).
type Range struct {
	Min, Max time.Duration
}

// Parse reads s (Parse's forms) and checks it is within r, naming the
// accepted forms and the bounds when it is not.
// A value written in one of Forms but past what a duration holds is a
// TooLargeError naming r.Max (or Largest without one).
func (r Range) Parse(s string) (time.Duration, error) {
	d, ok := parse(s)
	if !ok {
		if tooLarge(s) {
			max := r.Max
			if max <= 0 {
				max = Largest
			}
			return 0, &TooLargeError{Input: s, Max: max}
		}
		return 0, fmt.Errorf("%q is not a duration: want %s", s, Forms)
	}
	return d, r.Check(s, d)
}

// Check says whether d (read from s) is within r.
func (r Range) Check(s string, d time.Duration) error {
	switch {
	case d < r.Min && r.Min > 0 && d == 0:
		return fmt.Errorf("%q: must be positive, at least %s", s, Format(r.Min))
	case d < r.Min:
		return fmt.Errorf("%q is %s, less than the least allowed, %s", s, Format(d), Format(r.Min))
	case r.Max > 0 && d > r.Max:
		return fmt.Errorf("%q is %s, more than the most allowed, %s", s, Format(d), Format(r.Max))
	}
	return nil
}

// Format writes d as Go does, with whole days in front: "30d", "1d12h0m0s".
func Format(d time.Duration) string {
	if d >= Day {
		days := d / Day
		if rest := d % Day; rest != 0 {
			return fmt.Sprintf("%dd%s", days, rest)
		}
		return fmt.Sprintf("%dd", days)
	}
	return d.String()
}

// Common ranges.
var (
	// JobTimeLimit is a Slurm job's time limit: positive (Slurm rounds
	// seconds up to a minute), at most 30 days — a benchmark or a held
	// deployment, not a service; a longer one is a typo (999 days).
	JobTimeLimit = Range{Min: time.Second, Max: 30 * Day}
	// Wait is a timeout or wait of a command: not negative, at most a day.
	Wait = Range{Max: Day}
	// Age is an age such as runs gc --older-than: not negative, at most
	// ten years.
	Age = Range{Max: 3650 * Day}
)

// Value is a flag.Value (and urfave/cli Generic) reading a duration through
// Parse within a Range, into *D.
type Value struct {
	D *time.Duration
	R Range
}

// Var is a Value writing to d, which starts as def.
func Var(d *time.Duration, def time.Duration, r Range) *Value {
	*d = def
	return &Value{D: d, R: r}
}

// New is a Value with its own storage.
func New(def time.Duration, r Range) *Value { return Var(new(time.Duration), def, r) }

// Set parses s.
func (v *Value) Set(s string) error {
	d, err := v.R.Parse(s)
	if err != nil {
		return err
	}
	*v.D = d
	return nil
}

func (v *Value) String() string {
	if v == nil || v.D == nil {
		return ""
	}
	return Format(*v.D)
}
