package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// configErrorf is the common case: a bad input, named (exit 2).
func configErrorf(format string, args ...any) error {
	return exitcode.Errorf(exitcode.Config, format, args...)
}

// reportError prints err and returns its exit code: one problem per line,
// so several found at once (joined errors, failed preflight checks) are a
// list, not one long line.
func reportError(w io.Writer, err error) exitcode.Code {
	if msg := strings.TrimSpace(err.Error()); msg != "" {
		lines := strings.Split(msg, "\n")
		fmt.Fprintf(w, "slurmbench: %s\n", lines[0])
		for _, l := range lines[1:] {
			if l = strings.TrimSpace(l); l != "" {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
	return exitcode.Of(err)
}
