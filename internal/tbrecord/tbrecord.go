// Package tbrecord is a testing.TB that records Skipf and Fatalf instead of
// ending the test, for testing helpers whose job is to skip or fail their
// caller (a missing cluster, missing data).
package tbrecord

import (
	"fmt"
	"testing"
)

// TB wraps a real testing.TB; Skipf and Fatalf only record their message.
type TB struct {
	testing.TB
	SkipMsg, FatalMsg string
}

func (r *TB) Helper()                           {}
func (r *TB) Skipf(format string, args ...any)  { r.SkipMsg = fmt.Sprintf(format, args...) }
func (r *TB) Fatalf(format string, args ...any) { r.FatalMsg = fmt.Sprintf(format, args...) }
