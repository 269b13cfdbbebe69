package main

import (
	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// configErrorf is the common case: a bad input, named (exit 2).
func configErrorf(format string, args ...any) error {
	return exitcode.Errorf(exitcode.Config, format, args...)
}
