package duration

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParse: Slurm's forms and Go's, with days, mean the same durations.
func TestParse(t *testing.T) {
	good := map[string]time.Duration{
		"30": 30 * time.Minute, "0": 0, "30:00": 30 * time.Minute, "1:30": 90 * time.Second,
		"04:00:00": 4 * time.Hour, "1:00:01": time.Hour + time.Second,
		"1-0": Day, "2-3": 2*Day + 3*time.Hour, "1-2:30": Day + 2*time.Hour + 30*time.Minute,
		"1-00:00:00": Day, "0-00:00:30": 30 * time.Second,
		"4h": 4 * time.Hour, "90m": 90 * time.Minute, "1h30m": 90 * time.Minute, "45s": 45 * time.Second,
		"500ms": 500 * time.Millisecond, "7d": 7 * Day, "1.5d": 36 * time.Hour, "1d12h": 36 * time.Hour, "0s": 0,
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "1:2:3:4", "-5", "1-", "-1-00", "1-2:3:4:5", "1:-2", "1.5", " 30",
		"1-a", "-1d", "d", "7 days", "4h-", "-4h", "1d-2h", "1234567890:00", "1e3h", "9x9d"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, got)
		} else if !strings.Contains(err.Error(), "HH:MM:SS") || !strings.Contains(err.Error(), "4h") {
			t.Errorf("Parse(%q): %v does not name the accepted forms", in, err)
		}
	}
}

// TestTooLarge: a duration written in one of the forms but past what a
// duration holds is "too large" with the bound (the range's, else the
// largest), never "not a duration" (audit r2-8: runs gc --older-than
// 999999d).
func TestTooLarge(t *testing.T) {
	for _, tt := range []struct {
		r    Range
		in   string
		want string
	}{
		{Age, "999999d", `"999999d" is too large: at most 3650d`},
		{Age, "99999999999999d", "too large: at most 3650d"},
		{Age, "999999999-00:00:00", "too large: at most 3650d"},
		{Age, "9999999999999h", "too large: at most 3650d"},
		{Age, "106000d9999999h", "too large: at most 3650d"},
		{Range{}, "999999d", "too large: at most 106751d"},
		{Range{}, "99999999999999999999ns", "too large: at most 106751d"},
	} {
		_, err := tt.r.Parse(tt.in)
		var tl *TooLargeError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &tl) {
			t.Errorf("%+v.Parse(%q) = %v, want %q", tt.r, tt.in, err, tt.want)
		}
	}
}

// TestRange: the bounds are checked and named.
func TestRange(t *testing.T) {
	for _, tt := range []struct {
		r    Range
		in   string
		want string // "" for no error, else in the error
	}{
		{JobTimeLimit, "4h", ""},
		{JobTimeLimit, "04:00:00", ""},
		{JobTimeLimit, "1d", ""},
		{JobTimeLimit, "999d", "more than the most allowed, 30d"},
		{JobTimeLimit, "999-00:00:00", "more than the most allowed, 30d"},
		{JobTimeLimit, "30s", ""},
		{JobTimeLimit, "0", "must be positive, at least 1s"},
		{Range{Min: time.Minute}, "30s", "less than the least allowed, 1m0s"},
		{Wait, "0", ""},
		{Wait, "2d", "more than the most allowed, 1d"},
		{Age, "7d", ""},
	} {
		_, err := tt.r.Parse(tt.in)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v.Parse(%q): %v", tt.r, tt.in, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v.Parse(%q) = %v, want %q", tt.r, tt.in, err, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for d, want := range map[time.Duration]string{30 * Day: "30d", 36 * time.Hour: "1d12h0m0s", time.Minute: "1m0s"} {
		if got := Format(d); got != want {
			t.Errorf("Format(%v) = %q, want %q", d, got, want)
		}
	}
}
