package dynamoinstall

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/tailbuf"
)

// probeScript prints what the cache key and the install marker depend on,
// one per line: the CPython ABI tag, the machine and the prefix pip
// installs into.
const probeScript = `import platform, sys; print("cp%d%d" % sys.version_info[:2]); print(platform.machine()); print(sys.prefix)`

// probeTimeout bounds the probe: a Python that does not start within it
// will not run an engine either.
const probeTimeout = 2 * time.Minute

type pythonInfo struct {
	Path, Tag, Machine, Prefix string
}

// probePython asks the container's python3 (on env's PATH, the one every
// step runs) for its ABI tag, machine and prefix.
func probePython(ctx context.Context, env []string) (pythonInfo, error) {
	prog, err := lookPath("python3", envValue(env, "PATH"))
	if err != nil {
		return pythonInfo{}, fmt.Errorf("asking the container's python3 for its ABI tag: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "-c", probeScript)
	var stdout, stderr bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return pythonInfo{}, fmt.Errorf("asking %s for its ABI tag: %w: %s", prog, err, strings.TrimSpace(strings.Join(tailbuf.LastLines(stderr.String(), 5), "\n")))
	}
	return parseProbe(prog, stdout.String())
}

// parseProbe reads probeScript's three lines.
func parseProbe(prog, out string) (pythonInfo, error) {
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\n")
	if len(lines) != 3 {
		return pythonInfo{}, fmt.Errorf("%s printed %q, want 3 lines (ABI tag like cp312, machine like x86_64, prefix)", prog, out)
	}
	info := pythonInfo{Path: prog}
	for i, p := range []*string{&info.Tag, &info.Machine, &info.Prefix} {
		*p = strings.TrimSpace(lines[i])
		if *p == "" {
			return pythonInfo{}, fmt.Errorf("%s printed %q: line %d is empty", prog, out, i+1)
		}
	}
	if !filepath.IsAbs(info.Prefix) {
		return pythonInfo{}, fmt.Errorf("%s reports sys.prefix %q, not an absolute path", prog, info.Prefix)
	}
	return info, nil
}
