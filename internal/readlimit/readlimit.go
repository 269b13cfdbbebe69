// Package readlimit reads a file only up to a bound, so a file that is not
// what it claims to be (a 6 GB "result", /dev/zero) fails with an error
// naming it instead of filling memory.
package readlimit

import (
	"fmt"
	"io"
	"os"
)

// Default bounds the files slurmbench reads back (results, run-directory
// state): each is a few KB to a few MB.
const Default = 16 << 20

// ReadFile reads path if it holds at most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than the %d MiB this file may have", path, limit>>20)
	}
	return data, nil
}
