// Package progress shows long waits (benchmark points, the eval, image
// imports, queue waits) the same way everywhere: on a terminal one line
// rewritten in place with a bar, percentage, rate and ETA; otherwise (a
// CI log, a pipe, TERM=dumb) a plain line at a fixed interval, so a log
// shows the wait is alive without filling with carriage returns.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/internal/ascii"
)

// Intervals between lines: on a terminal, and in a log.
const (
	TTYInterval   = 500 * time.Millisecond
	PlainInterval = 5 * time.Second
)

// Display writes progress lines to one writer.
type Display struct {
	w        io.Writer
	tty      bool
	Interval time.Duration
	ASCII    bool // no Unicode block characters (LANG=C)
	mu       sync.Mutex
	open     bool // a rewritten line is showing
}

// New is a Display on w: a terminal's when w is one and TERM is not dumb.
func New(w io.Writer) *Display {
	d := &Display{w: w, tty: IsTerminal(w), Interval: PlainInterval, ASCII: !ascii.UTF8(os.Getenv)}
	if d.tty {
		d.Interval = TTYInterval
	}
	return d
}

// IsTerminal says whether w is a terminal that understands "\r\x1b[K".
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Show prints line: in place on a terminal (final ends it), a plain line
// otherwise.
func (d *Display) Show(line string, final bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.tty {
		fmt.Fprintln(d.w, line)
		return
	}
	fmt.Fprint(d.w, "\r\x1b[K"+line)
	d.open = !final
	if final {
		fmt.Fprintln(d.w)
	}
}

// End finishes a line left open on the terminal.
func (d *Display) End() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.open {
		fmt.Fprintln(d.w)
		d.open = false
	}
}

// TTY says whether lines are rewritten in place.
func (d *Display) TTY() bool { return d.tty }

// Line is "[bar] 40% 40/100 UNIT, 3.2/s, ETA 12s" (the bar only on a
// terminal): done of total after elapsed. Before the first unit is done
// there is no rate and no ETA, and it says so rather than showing zeros.
func (d *Display) Line(done, total int, unit string, elapsed time.Duration) string {
	return Line(done, total, unit, elapsed, d.tty, d.ASCII)
}

// Line is Display.Line for given terminal and charset choices.
func Line(done, total int, unit string, elapsed time.Duration, bar, ascii bool) string {
	var b strings.Builder
	pct := 0
	if total > 0 {
		pct = min(100, done*100/total)
	}
	if bar && total > 0 {
		const width = 20
		fill := pct * width / 100
		full, empty := "█", "░"
		if ascii {
			full, empty = "#", "."
		}
		b.WriteString("[" + strings.Repeat(full, fill) + strings.Repeat(empty, width-fill) + "] ")
	}
	if total > 0 {
		fmt.Fprintf(&b, "%d%% %d/%d %s", pct, done, total, unit)
	} else {
		fmt.Fprintf(&b, "%d %s", done, unit)
	}
	sec := elapsed.Seconds()
	switch {
	case done <= 0 || sec <= 0:
		fmt.Fprintf(&b, ", waiting for the first, %s", Round(elapsed))
	default:
		rate := float64(done) / sec
		fmt.Fprintf(&b, ", %.1f/s", rate)
		if total > done {
			eta := time.Duration(float64(total-done) / rate * float64(time.Second))
			fmt.Fprintf(&b, ", ETA %s", Round(eta))
		} else {
			fmt.Fprintf(&b, ", %s", Round(elapsed))
		}
	}
	return b.String()
}

// Round rounds d for a person: whole seconds.
func Round(d time.Duration) time.Duration { return d.Round(time.Second) }

// Meter reports a count that grows by events at the Display's interval,
// whether or not events arrive (an eval whose documents all end together
// still shows it is alive), and once more at the end.
type Meter struct {
	d     *Display
	label string
	unit  string
	start time.Time
	mu    sync.Mutex
	done  int
	total int
	stop  chan struct{}
	wg    sync.WaitGroup
}

// Start begins a meter of total units, labelled e.g. "gsm8k".
func (d *Display) Start(label, unit string, total int) *Meter {
	m := &Meter{d: d, label: label, unit: unit, total: total, start: time.Now(), stop: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(d.Interval)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.show(false)
			}
		}
	}()
	return m
}

// Set records done of total (total 0 keeps the last one). Counts only
// grow: concurrent workers' reports may arrive out of order.
func (m *Meter) Set(done, total int) {
	m.mu.Lock()
	m.done = max(m.done, done)
	if total > 0 {
		m.total = total
	}
	m.mu.Unlock()
}

func (m *Meter) show(final bool) {
	m.mu.Lock()
	done, total := m.done, m.total
	m.mu.Unlock()
	m.d.Show(m.label+": "+m.d.Line(done, total, m.unit, time.Since(m.start)), final)
}

// Stop ends the ticker and prints the final line.
func (m *Meter) Stop() {
	close(m.stop)
	m.wg.Wait()
	m.show(true)
}

// Elapsed shows label and the time since it began at the Display's
// interval (a wait without a count: an image import), until stop is
// called; stop ends a line left open on a terminal.
func (d *Display) Elapsed(label string) (stop func()) {
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d.Interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				d.Show(fmt.Sprintf("%s, %s", label, Round(time.Since(start))), false)
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		d.End()
	}
}
