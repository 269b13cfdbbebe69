// Package readlimit reads a file only up to a bound, so a file that is not
// what it claims to be (a 6 GB "result", /dev/zero, a FIFO) fails with an
// error naming it instead of filling memory or blocking forever, and a
// user-named input that never answers gives way when the caller's context
// ends.
package readlimit

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Default bounds the files slurmbench reads (recipes, profiles, results,
// run-directory state): each is a few KB to a few MB.
const Default = 16 << 20

// ReadFile reads path if it is a regular file (after symlinks) holding at
// most limit bytes. It is opened non-blocking and checked before any read,
// so a FIFO or device put where a file was expected is refused at once
// instead of blocking the reader (open(2) of a FIFO waits for a writer).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	return readAll(path, f, limit)
}

// ReadFileContext reads a user-named input (a recipe, a profile) of at most
// limit bytes. Unlike ReadFile it takes what the user named, a pipe or FIFO
// included (`-r <(sed ... r.yaml)`), and returns when ctx ends even if the
// open or a read blocks, so a signal always ends the command.
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
		data, err := readAll(path, f, limit)
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

func readAll(path string, r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than the %s limit", path, Size(limit))
	}
	return data, nil
}

// Size says a limit for humans: "16 MiB", "512 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
