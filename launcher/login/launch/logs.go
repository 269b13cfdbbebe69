package launch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// PrintLog prints path, and with follow keeps printing what is appended
// until done reports the job ended.
func PrintLog(ctx context.Context, w io.Writer, path string, follow bool, done func(context.Context) bool) error {
	var off int64
	pump := func() error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err
		}
		n, err := io.Copy(w, f)
		off += n
		return err
	}
	if err := pump(); err != nil && !(follow && os.IsNotExist(err)) {
		return exitcode.With(exitcode.Config, fmt.Errorf("reading %s: %w", filepath.Base(path), err))
	}
	for follow {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
		_ = pump()
		if done(ctx) {
			_ = pump()
			return nil
		}
	}
	return nil
}
