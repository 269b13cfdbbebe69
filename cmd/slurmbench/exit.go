package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// configErrorf is the common case: a bad input, named (exit 2).
func configErrorf(format string, args ...any) error {
	return exitcode.Errorf(exitcode.Config, format, args...)
}

// reportError prints err on one line and returns its exit code. Joined
// errors (several problems found at once) are separated by "; ".
func reportError(w io.Writer, err error) exitcode.Code {
	if msg := strings.TrimSpace(err.Error()); msg != "" {
		fmt.Fprintf(w, "slurmbench: %s\n", strings.ReplaceAll(msg, "\n", "; "))
	}
	return exitcode.Of(err)
}

// usageError makes a flag that does not parse a config error (exit 2, one
// line) instead of urfave/cli's usage dump on stdout and exit 1.
func usageError(c *cli.Context, err error, _ bool) error {
	return exitcode.Errorf(exitcode.Config, "%w (see slurmbench %s --help)", err, c.Command.Name)
}
