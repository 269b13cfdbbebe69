package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestSrtctlCommands: srtctl-bench and stage-model take their arguments as
// written (an aiperf flag among them is an argument, not a flag of
// slurmbench's) and refuse a bad call with a usage error.
func TestSrtctlCommands(t *testing.T) {
	src := filepath.Join(t.TempDir(), "model")
	if err := os.MkdirAll(filepath.Join(src, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "w", "a.bin"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "local", "model")
	for _, tc := range []struct {
		name string
		env  string
		args []string
		code exitcode.Code
		want string
	}{
		{name: "no type", args: []string{"srtctl-bench"}, code: exitcode.Config, want: "TYPE is required"},
		{name: "flags are arguments", args: []string{"srtctl-bench", "--benchmark-duration", "600"}, code: exitcode.Config, want: `unknown type "--benchmark-duration"`},
		{name: "stage one argument", args: []string{"stage-model", src}, code: exitcode.Config, want: "want SOURCE DEST"},
		{name: "stage bad fan-out", env: "0", args: []string{"stage-model", src, dest}, code: exitcode.Config, want: "STAGE_PARALLEL"},
		{name: "stage", env: "2", args: []string{"stage-model", src, dest}, want: "manifest verified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("STAGE_PARALLEL", tc.env)
			}
			out, errOut, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("exit %d, output %q %q; want %d and %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(dest, "w", "a.bin")); err != nil || string(b) != "abc" {
		t.Errorf("staged copy: %q %v", b, err)
	}
}
