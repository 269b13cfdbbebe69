// Package readlimit reads a file only up to a bound, so a file that is not
// what it claims to be (a 6 GB "result", /dev/zero, a FIFO) fails with an
// error naming it instead of filling memory or blocking forever.
package readlimit

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Default bounds the files slurmbench reads back (results, run-directory
// state): each is a few KB to a few MB.
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
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than the %s this file may have", path, Size(limit))
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
