// Package dynamoinstalltest provides stand-ins for the programs a Dynamo
// fetch and install run (python3 with pip, apt-get, git, maturin, cargo),
// so tests exercise the real command without a network or a Python.
//
// Every stand-in appends "prog args..." to a log file and makes what the
// real program would leave behind: pip download writes empty wheels into
// --dest, git clone makes a source tree, maturin writes a runtime wheel.
// Their behaviour is set through environment variables (see Env).
package dynamoinstalltest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Environment variables the stand-ins read.
const (
	EnvLog     = "SLURMBENCH_FAKE_LOG"     // file every call is appended to
	EnvPrefix  = "SLURMBENCH_FAKE_PREFIX"  // sys.prefix python3 reports
	EnvMachine = "SLURMBENCH_FAKE_MACHINE" // platform.machine() (default x86_64)
	// EnvProbe, when set, is printed verbatim for the probe instead of
	// the tag, machine and prefix lines; EnvProbeExit is its exit code.
	EnvProbe     = "SLURMBENCH_FAKE_PROBE"
	EnvProbeExit = "SLURMBENCH_FAKE_PROBE_EXIT"
	// EnvFail names a call that fails with exit 1: "download" or "install"
	// (pip), or "maturin".
	EnvFail = "SLURMBENCH_FAKE_FAIL"
	// EnvSleep is how long (seconds) pip download and maturin take.
	EnvSleep = "SLURMBENCH_FAKE_SLEEP"
)

// RuntimeWheelFromSource is the wheel the maturin stand-in builds.
const RuntimeWheelFromSource = "ai_dynamo_runtime-0.9.0-cp312-cp312-linux_x86_64.whl"

const logLine = `printf '%s\n' "$(basename "$0") $*" >> "$` + EnvLog + `"
`

var scripts = map[string]string{
	"python3": logLine + `if [ "$1" = -c ]; then
	if [ -n "${` + EnvProbe + `+x}" ]; then
		printf '%s' "$` + EnvProbe + `"
		exit "${` + EnvProbeExit + `:-0}"
	fi
	printf 'cp312\n%s\n%s\n' "${` + EnvMachine + `:-x86_64}" "$` + EnvPrefix + `"
	exit 0
fi
if [ "$1 $2" != "-m pip" ]; then
	echo "fake python3: unexpected arguments: $*" >&2
	exit 2
fi
shift 2
sub=$1
shift
if [ "$` + EnvFail + `" = "$sub" ]; then
	echo "Looking in indexes: https://pypi.org/simple, https://pypi.nvidia.com"
	echo "ERROR: No matching distribution found (fake pip $sub)" >&2
	exit 1
fi
case $sub in
download)
	dest=
	ver=
	while [ $# -gt 0 ]; do
		case $1 in
		--dest) dest=$2; shift ;;
		ai-dynamo==*) ver=${1#ai-dynamo==} ;;
		esac
		shift
	done
	echo "Collecting ai-dynamo==$ver"
	sleep "${` + EnvSleep + `:-0}"
	: > "$dest/ai_dynamo_runtime-$ver-cp310-abi3-manylinux_2_28_x86_64.whl"
	: > "$dest/ai_dynamo-$ver-py3-none-any.whl"
	echo "Saved $dest"
	;;
install)
	echo "Successfully installed (fake)"
	;;
esac
`,
	"apt-get": logLine,
	"cargo":   logLine,
	"git": logLine + `if [ "$1" = clone ]; then
	mkdir -p "$3/lib/bindings/python" && echo "fake dynamo source" > "$3/README.md"
fi
`,
	"maturin": `printf '%s\n' "maturin $* dir=$PWD rustflags=$RUSTFLAGS" >> "$` + EnvLog + `"
if [ "$` + EnvFail + `" = maturin ]; then
	echo "error: could not compile dynamo-runtime (fake)" >&2
	exit 1
fi
dest=
while [ $# -gt 0 ]; do
	[ "$1" = -o ] && { dest=$2; shift; }
	shift
done
sleep "${` + EnvSleep + `:-0}"
: > "$dest/` + RuntimeWheelFromSource + `"
`,
}

// Fakes is a directory of stand-ins and the log they append to.
type Fakes struct {
	Dir string
	Log string
}

// New writes the stand-ins into a temporary directory.
func New(t testing.TB) *Fakes {
	t.Helper()
	dir := t.TempDir()
	f := &Fakes{Dir: filepath.Join(dir, "bin"), Log: filepath.Join(dir, "calls.log")}
	if err := os.Mkdir(f.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(f.Dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// Env is this process's environment with the stand-ins first on PATH,
// python3 reporting prefix, and the given extra "NAME=value" settings.
func (f *Fakes) Env(prefix string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "SLURMBENCH_FAKE_") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+f.Dir+string(os.PathListSeparator)+os.Getenv("PATH"), EnvLog+"="+f.Log, EnvPrefix+"="+prefix)
	return append(env, extra...)
}

// Setenv puts the same settings as Env into this process's environment
// for the rest of the test (for code that reads os.Environ itself).
func (f *Fakes) Setenv(t *testing.T, prefix string, extra ...string) {
	t.Helper()
	t.Setenv("PATH", f.Dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(EnvLog, f.Log)
	t.Setenv(EnvPrefix, prefix)
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Calls are the logged calls so far, one "prog args..." each.
func (f *Fakes) Calls(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(f.Log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// Count is how many logged calls start with prefix.
func (f *Fakes) Count(t testing.TB, prefix string) int {
	t.Helper()
	n := 0
	for _, c := range f.Calls(t) {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}
