package profile

import (
	"context"
	"fmt"
	"io"
	"os"
)

// MaxInputBytes bounds every recipe and profile read: real ones are a few
// KiB, and `render -r /dev/zero` must fail fast instead of filling memory.
const MaxInputBytes = 16 << 20

// ReadInput reads a user-named input file of at most limit bytes. It
// returns when ctx ends even if the open or a read blocks (a FIFO, a
// terminal), so a signal always ends a command that reads one.
func ReadInput(ctx context.Context, path string, limit int64) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			done <- result{err: err}
			return
		}
		opened <- f
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, limit+1))
		if err == nil && int64(len(data)) > limit {
			err = fmt.Errorf("%s: larger than the %d MiB limit for an input file", path, limit>>20)
		}
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		select {
		case f := <-opened:
			f.Close() // unblocks a pending read of a pipe or FIFO
		default:
		}
		return nil, fmt.Errorf("%s: %w", path, ctx.Err())
	}
}
