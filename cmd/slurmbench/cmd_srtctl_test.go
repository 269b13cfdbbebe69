package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/enroot/enroottest"
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
	// A node-local cache directory that does not exist yet.
	node := filepath.Join(t.TempDir(), "raid", "squash")
	standin := enroottest.StandinPath(t)
	t.Setenv("ENROOT_STANDIN_LOG", filepath.Join(t.TempDir(), "enroot.log"))
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
		{name: "import-node one argument", args: []string{"import-node", "/x/a.sqsh"}, code: exitcode.Config, want: "want SQUASH IMAGE"},
		{name: "import-node into another file than the image's", args: []string{"import-node", "--enroot", standin, filepath.Join(node, "other.sqsh"), "nvcr.io#nvidia/x:1"},
			code: exitcode.Image, want: "the plan starts containers from"},
		{name: "import-node", args: []string{"import-node", "--enroot", standin, filepath.Join(node, "nvcr.io_nvidia_x_1.sqsh"), "nvcr.io#nvidia/x:1"},
			want: "imported " + filepath.Join(node, "nvcr.io_nvidia_x_1.sqsh")},
		{name: "import-node under a relative lock file", args: []string{"import-node", "--enroot", standin, "--lock-file", "x.lock", filepath.Join(node, "nvcr.io_nvidia_y_1.sqsh"), "nvcr.io#nvidia/y:1"},
			code: exitcode.Image, want: "is not absolute"},
		{name: "import-node under a locks-dir lock", args: []string{"import-node", "--enroot", standin, "--lock-timeout", "10m", "--lock-file", filepath.Join(node, ".locks", "nvcr.io_nvidia_y_1.lock"),
			filepath.Join(node, "nvcr.io_nvidia_y_1.sqsh"), "nvcr.io#nvidia/y:1"},
			want: "imported " + filepath.Join(node, "nvcr.io_nvidia_y_1.sqsh")},
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
	if _, err := os.Stat(filepath.Join(node, ".locks", "nvcr.io_nvidia_y_1.lock")); err != nil {
		t.Errorf("import-node --lock-file: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "w", "a.bin")); err != nil || string(b) != "abc" {
		t.Errorf("staged copy: %q %v", b, err)
	}
}
