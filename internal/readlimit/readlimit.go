// Package readlimit reads a file only up to a bound, so a file that is not
// what it claims to be (a 6 GB "result", /dev/zero) fails with an error
// naming it instead of filling memory, and a file that never answers (a
// FIFO, a terminal) gives way when the caller's context ends.
package readlimit

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Default bounds the files slurmbench reads (recipes, profiles, results,
// run-directory state): each is a few KB to a few MB.
const Default = 16 << 20

// ReadFile reads path if it holds at most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	return ReadFileContext(context.Background(), path, limit)
}

// ReadFileContext is ReadFile that returns when ctx ends even if the open
// or a read blocks (a FIFO, a terminal), so a signal always ends a command
// that reads a user-named file.
func ReadFileContext(ctx context.Context, path string, limit int64) ([]byte, error) {
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
			err = fmt.Errorf("%s: larger than the %d MiB limit", path, limit>>20)
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
