package hostsetup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestHostCommandsScript: the script runs its arguments as srtctl's
// `bash -c "c1 && c2"` runs the list: in one shell (a cd or a variable
// carries over), in order, ending at the first failure with its status.
func TestHostCommandsScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "host_setup.sh")
	if err := os.WriteFile(script, []byte(CommandsScript), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		commands []string
		code     int
		out      string
	}{
		{[]string{"cd " + dir, "X=1", `echo "$PWD $X" > out`}, 0, dir + " 1\n"},
		{[]string{"echo a > out", "(exit 3)", "echo b >> out"}, 3, "a\n"},
		{[]string{"false || echo or > out", "echo 'quoted; not split' >> out"}, 0, "or\nquoted; not split\n"},
		{nil, 0, ""},
	} {
		_ = os.Remove(filepath.Join(dir, "out"))
		cmd := exec.Command(bash, append([]string{script}, c.commands...)...)
		cmd.Dir = dir
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		out, _ := os.ReadFile(filepath.Join(dir, "out"))
		if code != c.code || string(out) != c.out {
			t.Errorf("%q: exit %d, out %q; want %d, %q", c.commands, code, out, c.code, c.out)
		}
	}
}

// TestNodes: srtctl's host_setup targets: head, infra, workers in order,
// each once; or the workers.
func TestNodes(t *testing.T) {
	for _, c := range []struct {
		which       string
		head, infra int
		workers     []int
		want        []int
	}{
		{"all", 0, 0, []int{0, 1, 2}, []int{0, 1, 2}},
		{"all", 1, 0, []int{3, 1, 2}, []int{1, 0, 2, 3}},
		{"workers", 1, 0, []int{2, 1, 2}, []int{1, 2}},
		{"", 3, 3, []int{0}, []int{3, 0}},
	} {
		if got := Nodes(c.which, c.head, c.infra, c.workers); !slices.Equal(got, c.want) {
			t.Errorf("Nodes(%q, %d, %d, %v) = %v, want %v", c.which, c.head, c.infra, c.workers, got, c.want)
		}
	}
}
