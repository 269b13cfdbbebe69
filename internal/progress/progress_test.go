package progress

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestLine: the percentage, count, rate and ETA of a wait; the bar only on
// a terminal, in ASCII under a non-UTF-8 locale; before the first unit no
// rate and no ETA (not zeros).
func TestLine(t *testing.T) {
	tests := []struct {
		done, total int
		elapsed     time.Duration
		bar, ascii  bool
		want        string
	}{
		{40, 80, 2 * time.Second, false, false, "50% 40/80 requests, 20.0/s, ETA 2s"},
		{40, 80, 2 * time.Second, true, true, "[##########..........] 50% 40/80 requests, 20.0/s, ETA 2s"},
		{40, 80, 2 * time.Second, true, false, "[██████████░░░░░░░░░░] 50% 40/80 requests, 20.0/s, ETA 2s"},
		{0, 80, 3 * time.Second, false, false, "0% 0/80 requests, waiting for the first, 3s"},
		{80, 80, 4 * time.Second, false, false, "100% 80/80 requests, 20.0/s, 4s"},
		{5, 0, time.Second, false, false, "5 requests, 5.0/s, 1s"},
	}
	for _, tt := range tests {
		if got := Line(tt.done, tt.total, "requests", tt.elapsed, tt.bar, tt.ascii); got != tt.want {
			t.Errorf("Line(%d, %d, %s, bar %v, ascii %v) = %q, want %q", tt.done, tt.total, tt.elapsed, tt.bar, tt.ascii, got, tt.want)
		}
	}
}

// TestMeterTicksWithoutEvents: a meter prints at its interval even when no
// event arrives (an eval whose documents all end at once still shows it is
// alive), and once more when stopped; plain lines off a terminal.
func TestMeterTicksWithoutEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		d := &Display{w: &out, Interval: 5 * time.Second}
		m := d.Start("gsm8k", "documents", 50)
		time.Sleep(12 * time.Second)
		synctest.Wait()
		m.Set(50, 50)
		m.Set(49, 50) // a late report of an earlier document
		m.Stop()
		want := "gsm8k: 0% 0/50 documents, waiting for the first, 5s\n" +
			"gsm8k: 0% 0/50 documents, waiting for the first, 10s\n" +
			"gsm8k: 100% 50/50 documents, 4.2/s, 12s\n"
		if out.String() != want {
			t.Errorf("meter output\n%s\nwant\n%s", out.String(), want)
		}
	})
}

// TestShowOnTerminal: on a terminal a line is rewritten in place and a
// final one ends with a newline; End closes a line left open.
func TestShowOnTerminal(t *testing.T) {
	var out strings.Builder
	d := &Display{w: &out, tty: true}
	d.Show("a", false)
	d.Show("b", true)
	d.Show("c", false)
	d.End()
	if got, want := out.String(), "\r\x1b[Ka\r\x1b[Kb\n\r\x1b[Kc\n"; got != want {
		t.Errorf("terminal output %q, want %q", got, want)
	}
	if IsTerminal(&out) {
		t.Error("a strings.Builder is not a terminal")
	}
}

// TestElapsed: a wait without a count says it is alive at each interval.
func TestElapsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		d := &Display{w: &out, Interval: 5 * time.Second}
		stop := d.Elapsed("importing docker://x")
		time.Sleep(11 * time.Second)
		synctest.Wait()
		stop()
		if got, want := out.String(), "importing docker://x, 5s\nimporting docker://x, 10s\n"; got != want {
			t.Errorf("output %q, want %q", got, want)
		}
	})
}
