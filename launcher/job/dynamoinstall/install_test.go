package dynamoinstall

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/syncbuf"
	"github.com/slurmbench/slurmbench/launcher/job/dynamoinstall/dynamoinstalltest"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

const (
	release    = "1.2.1"
	releaseKey = "version-1.2.1/cp312-x86_64"
)

// node is one container: its Python prefix and its /tmp.
type node struct{ prefix, tmp string }

func newNode(t *testing.T) node {
	return node{prefix: t.TempDir(), tmp: t.TempDir()}
}

type harness struct {
	t     *testing.T
	fakes *dynamoinstalltest.Fakes
	cache string
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, fakes: dynamoinstalltest.New(t), cache: filepath.Join(t.TempDir(), "dynamo-wheels")}
}

func (h *harness) options(n node, d plan.Dynamo, log *syncbuf.Buffer, extraEnv ...string) Options {
	d.Cache = h.cache
	if log == nil {
		log = &syncbuf.Buffer{}
	}
	return Options{Dynamo: d, Tmp: n.tmp, Env: h.fakes.Env(n.prefix, extraEnv...), Stdout: log, Stderr: log,
		ProgressEvery: 50 * time.Millisecond, LockTimeout: time.Minute}
}

func (h *harness) install(n node, d plan.Dynamo, extraEnv ...string) (Result, string, error) {
	h.t.Helper()
	var log syncbuf.Buffer
	res, err := Install(context.Background(), h.options(n, d, &log, extraEnv...))
	return res, log.String(), err
}

// cacheNames lists the cache directory (without its lock directory).
func (h *harness) cacheNames() []string {
	names, err := dirNames(h.cache)
	if err != nil && !os.IsNotExist(err) {
		h.t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if n != ".locks" {
			out = append(out, n)
		}
	}
	return out
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	names, err := dirNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Errorf("%s holds %q, want nothing left behind", dir, names)
	}
}

// TestInstallRelease: the first container fetches into the cache and
// installs; the same container again does nothing; another container
// installs from the cache without fetching.
func TestInstallRelease(t *testing.T) {
	h := newHarness(t)
	d := plan.Dynamo{Version: release}
	n1 := newNode(t)
	res, log, err := h.install(n1, d)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, log)
	}
	entry := filepath.Join(h.cache, releaseKey)
	wantFiles := []string{"ai_dynamo_runtime-1.2.1-cp310-abi3-manylinux_2_28_x86_64.whl", "ai_dynamo-1.2.1-py3-none-any.whl"}
	if !res.Fetched || !res.Installed || res.Key != releaseKey || res.Entry != entry || !reflect.DeepEqual(res.Files, wantFiles) {
		t.Errorf("result %+v", res)
	}
	calls := h.fakes.Calls(t)
	want := []string{
		"python3 -c " + probeScript,
		"python3 -m pip download --no-deps --only-binary=:all: --extra-index-url https://pypi.nvidia.com --dest " +
			filepath.Join(h.cache, ".tmp-version-1.2.1_cp312-x86_64-"),
		"python3 -m pip install --break-system-packages --extra-index-url https://pypi.nvidia.com " +
			filepath.Join(entry, wantFiles[0]) + " " + filepath.Join(entry, wantFiles[1]),
	}
	if len(calls) != 3 || calls[0] != want[0] || !strings.HasPrefix(calls[1], want[1]) || calls[2] != want[2] {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	names, _ := dirNames(entry)
	if !reflect.DeepEqual(names, []string{".complete", wantFiles[1], wantFiles[0]}) {
		t.Errorf("entry holds %q", names)
	}
	if fi, err := os.Stat(entry); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("entry mode: %v %v", fi, err)
	}
	if got := h.cacheNames(); !reflect.DeepEqual(got, []string{"version-1.2.1"}) {
		t.Errorf("cache holds %q, want only the entry", got)
	}
	emptyDir(t, n1.tmp)
	if got := installedKey(n1.prefix); got != releaseKey {
		t.Errorf("marker in the prefix = %q", got)
	}
	for _, banner := range []string{"dynamo-install: fetch 1/1: python3 -m pip download", "dynamo-install: install 1/1: python3 -m pip install", "Collecting ai-dynamo==1.2.1"} {
		if !strings.Contains(log, banner) {
			t.Errorf("log lacks %q:\n%s", banner, log)
		}
	}

	// The same container (another task, or the frontend after a worker).
	res, _, err = h.install(n1, d)
	if err != nil || res.Installed || res.Fetched {
		t.Errorf("second run in the same container: %+v, %v", res, err)
	}
	if n := h.fakes.Count(t, "python3 -m pip"); n != 2 {
		t.Errorf("%d pip calls after a second run in the same container, want still 2", n)
	}

	// Another node: installs from the cache.
	res, _, err = h.install(newNode(t), d)
	if err != nil || !res.Installed || res.Fetched {
		t.Errorf("run on another node: %+v, %v", res, err)
	}
	if dl, in := h.fakes.Count(t, "python3 -m pip download"), h.fakes.Count(t, "python3 -m pip install"); dl != 1 || in != 2 {
		t.Errorf("%d downloads and %d installs after two nodes, want 1 and 2", dl, in)
	}
}

// TestInstallConcurrentNodes: four nodes against one empty cache fetch
// once; the others wait on the cache lock and install from the entry.
func TestInstallConcurrentNodes(t *testing.T) {
	h := newHarness(t)
	d := plan.Dynamo{Wheel: "1.3.0.dev20260718"}
	var wg sync.WaitGroup
	results := make([]Result, 4)
	errs := make([]error, 4)
	logs := make([]syncbuf.Buffer, 4)
	for i := range results {
		n := newNode(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := h.options(n, d, &logs[i], dynamoinstalltest.EnvSleep+"=0.3")
			results[i], errs[i] = Install(context.Background(), o)
		}()
	}
	wg.Wait()
	fetched := 0
	for i, res := range results {
		if errs[i] != nil || !res.Installed {
			t.Errorf("node %d: %+v, %v\n%s", i, res, errs[i], logs[i].String())
		}
		if res.Fetched {
			fetched++
		}
	}
	if dl, in := h.fakes.Count(t, "python3 -m pip download"), h.fakes.Count(t, "python3 -m pip install"); dl != 1 || in != 4 || fetched != 1 {
		t.Errorf("%d downloads (%d results say fetched) and %d installs, want 1 and 4", dl, fetched, in)
	}
	if got := h.cacheNames(); !reflect.DeepEqual(got, []string{"wheel-1.3.0.dev20260718"}) {
		t.Errorf("cache holds %q", got)
	}
	waited := 0
	for i := range logs {
		if strings.Contains(logs[i].String(), "another node is filling the cache entry") {
			waited++
		}
	}
	if waited == 0 {
		t.Error("no node reported waiting for the cache lock")
	}
}

// TestInstallTasksShareContainer: MPI tasks sharing one container install
// once, the others wait on the container's lock.
func TestInstallTasksShareContainer(t *testing.T) {
	h := newHarness(t)
	n := newNode(t)
	var wg sync.WaitGroup
	installed := make([]bool, 3)
	for i := range installed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := Install(context.Background(), h.options(n, plan.Dynamo{Version: release}, nil, dynamoinstalltest.EnvSleep+"=0.2"))
			if err != nil {
				t.Error(err)
			}
			installed[i] = res.Installed
		}()
	}
	wg.Wait()
	if in := h.fakes.Count(t, "python3 -m pip install"); in != 1 {
		t.Errorf("%d installs in one container, want 1 (installed: %v)", in, installed)
	}
}

// TestInstallFetchFails: a failed fetch leaves no entry and no temporary
// directory, and its error ends with the step's output.
func TestInstallFetchFails(t *testing.T) {
	h := newHarness(t)
	n := newNode(t)
	_, log, err := h.install(n, plan.Dynamo{Version: "9.9.9"}, dynamoinstalltest.EnvFail+"=download")
	var se *StepError
	if !errors.As(err, &se) || se.Phase != "fetch" || !strings.Contains(se.Tail, "No matching distribution") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "fetch step 1/1 (python3 -m pip download") || !strings.Contains(log, "No matching distribution") {
		t.Errorf("err %q, log %q", err, log)
	}
	if got := h.cacheNames(); len(got) != 0 {
		t.Errorf("cache holds %q after a failed fetch", got)
	}
	emptyDir(t, n.tmp)
	if installedKey(n.prefix) != "" || h.fakes.Count(t, "python3 -m pip install") != 0 {
		t.Error("a failed fetch installed or marked the container")
	}
}

// TestInstallStepFails: a failed install keeps the (complete) entry and
// leaves the container unmarked, so the next try installs without a fetch.
func TestInstallStepFails(t *testing.T) {
	h := newHarness(t)
	n := newNode(t)
	d := plan.Dynamo{Version: release}
	_, _, err := h.install(n, d, dynamoinstalltest.EnvFail+"=install")
	var se *StepError
	if !errors.As(err, &se) || se.Phase != "install" {
		t.Fatalf("err = %v", err)
	}
	if installedKey(n.prefix) != "" {
		t.Error("a failed install marked the container")
	}
	emptyDir(t, n.tmp)
	res, _, err := h.install(n, d)
	if err != nil || !res.Installed || res.Fetched {
		t.Errorf("retry: %+v, %v", res, err)
	}
}

// TestInstallSourceBuild: a source commit is built with maturin in the
// bindings directory, packed with its source, and installed editable from
// a directory of the container's own.
func TestInstallSourceBuild(t *testing.T) {
	h := newHarness(t)
	n := newNode(t)
	const hash = "5b4bc1dd70965017a737c71b19db5a0aeaa88727"
	res, log, err := h.install(n, plan.Dynamo{Hash: hash})
	if err != nil {
		t.Fatalf("install: %v\n%s", err, log)
	}
	entry := filepath.Join(h.cache, "hash-"+hash, "cp312-x86_64")
	if !reflect.DeepEqual(res.Files, []string{dynamoinstalltest.RuntimeWheelFromSource, "dynamo-src.tar.gz"}) || res.Entry != entry {
		t.Errorf("result %+v", res)
	}
	var maturin, editable string
	for _, c := range h.fakes.Calls(t) {
		switch {
		case strings.HasPrefix(c, "maturin "):
			maturin = c
		case strings.Contains(c, " -e "):
			editable = c
		case strings.HasPrefix(c, "curl "):
			t.Errorf("rustup fetched although cargo is on PATH: %s", c)
		}
	}
	if !strings.Contains(maturin, "/dynamo/lib/bindings/python rustflags=-C target-cpu=native --cfg tokio_unstable") {
		t.Errorf("maturin call %q", maturin)
	}
	if h.fakes.Count(t, "apt-get install") != 1 || h.fakes.Count(t, "git -C ") != 1 {
		t.Errorf("calls:\n%s", strings.Join(h.fakes.Calls(t), "\n"))
	}
	// The editable tree outlives the command, in the container's tmp.
	src, ok := strings.CutPrefix(editable, "python3 -m pip install --break-system-packages -e ")
	if !ok || !strings.HasPrefix(src, n.tmp+"/slurmbench-dynamo-") {
		t.Fatalf("editable install %q", editable)
	}
	if b, err := os.ReadFile(filepath.Join(src, "README.md")); err != nil || string(b) != "fake dynamo source\n" {
		t.Errorf("unpacked source: %q, %v", b, err)
	}
	names, _ := dirNames(n.tmp)
	if len(names) != 1 {
		t.Errorf("tmp holds %q, want only the editable tree (build tree removed)", names)
	}
}

// TestInstallRepairsCache: a directory in the entry's place that is not
// complete is replaced, and old temporary entries of killed fetches go.
func TestInstallRepairsCache(t *testing.T) {
	h := newHarness(t)
	entry := filepath.Join(h.cache, releaseKey)
	stale := filepath.Join(h.cache, ".tmp-version-1.2.1_cp312-x86_64-123")
	for _, dir := range []string{entry, stale} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "partial.whl"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A temporary entry younger than staleTempAge may be another node's
	// running fetch (where flock is node-local): kept.
	young := filepath.Join(h.cache, ".tmp-version-1.2.1_cp312-x86_64-456")
	if err := os.Mkdir(young, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-staleTempAge - time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	res, log, err := h.install(newNode(t), plan.Dynamo{Version: release})
	if err != nil || !res.Fetched {
		t.Fatalf("%+v, %v\n%s", res, err, log)
	}
	if err := os.Remove(young); err != nil {
		t.Errorf("the young temporary entry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(entry, "partial.whl")); !os.IsNotExist(err) {
		t.Error("the incomplete entry was kept")
	}
	if got := h.cacheNames(); !reflect.DeepEqual(got, []string{"version-1.2.1"}) {
		t.Errorf("cache holds %q", got)
	}
	if names, _ := dirNames(filepath.Dir(entry)); len(names) != 1 {
		t.Errorf("entry parent holds %q", names)
	}
}

// holdLock takes path's flock as another node would.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("node042 pid 7\n"); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// TestInstallWaitsForCacheLock: a waiter says whom it waits for every
// ProgressEvery, gives up after LockTimeout, and uses an entry the holder
// completed instead of fetching again.
func TestInstallWaitsForCacheLock(t *testing.T) {
	h := newHarness(t)
	d := plan.Dynamo{Version: release}
	release := holdLock(t, filepath.Join(h.cache, ".locks", "version-1.2.1_cp312-x86_64.lock"))

	var log syncbuf.Buffer
	o := h.options(newNode(t), d, &log)
	o.LockTimeout = 300 * time.Millisecond
	_, err := Install(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") || !strings.Contains(err.Error(), "held by node042 pid 7") {
		t.Errorf("err = %v", err)
	}
	if n := strings.Count(log.String(), "another node is filling the cache entry (held by node042 pid 7)"); n < 3 {
		t.Errorf("%d progress lines in 300ms at 50ms, want several:\n%s", n, log.String())
	}

	// The holder completes the entry, then lets go: the waiter installs
	// from it without fetching.
	done := make(chan struct{})
	var res Result
	go func() {
		defer close(done)
		res, err = Install(context.Background(), h.options(newNode(t), d, nil))
	}()
	time.Sleep(100 * time.Millisecond)
	entry := filepath.Join(h.cache, releaseKey)
	if err := os.MkdirAll(entry, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ai_dynamo_runtime-1.2.1-cp310-abi3-manylinux_2_28_x86_64.whl", "ai_dynamo-1.2.1-py3-none-any.whl", ".complete"} {
		if err := os.WriteFile(filepath.Join(entry, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	release()
	<-done
	if err != nil || res.Fetched || !res.Installed || h.fakes.Count(t, "python3 -m pip download") != 0 {
		t.Errorf("after the holder filled the entry: %+v, %v; calls %q", res, err, h.fakes.Calls(t))
	}
}

// TestInstallProbeErrors: what the container's python3 says (or does not)
// is reported clearly, before anything touches the cache.
func TestInstallProbeErrors(t *testing.T) {
	cases := []struct {
		name  string
		probe string // printed instead of the probe's lines
		exit  string
		want  string
	}{
		{"two lines", "cp312\nx86_64\n", "", "printed \"cp312\\nx86_64\\n\", want 3 lines (ABI tag like cp312, machine like x86_64, prefix)"},
		{"not cpython", "py3\nx86_64\n/usr\n", "", `python tag "py3" is not like cp312`},
		{"machine", "cp312\nx86 64\n/usr\n", "", `machine "x86 64" is not like x86_64`},
		{"empty line", "cp312\n\n/usr\n", "", "line 2 is empty"},
		{"relative prefix", "cp312\nx86_64\nusr\n", "", `sys.prefix "usr", not an absolute path`},
		{"python fails", "", "3", "exit status 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			extra := []string{dynamoinstalltest.EnvProbe + "=" + tc.probe}
			if tc.exit != "" {
				extra = append(extra, dynamoinstalltest.EnvProbeExit+"="+tc.exit)
			}
			_, _, err := h.install(newNode(t), plan.Dynamo{Version: release}, extra...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(h.cache); !os.IsNotExist(err) {
				t.Error("the cache was touched")
			}
		})
	}
	// No python3 in the container at all.
	h := newHarness(t)
	o := h.options(newNode(t), plan.Dynamo{Version: release}, nil)
	o.Env = []string{"PATH=" + t.TempDir()}
	if _, err := Install(context.Background(), o); err == nil || !strings.Contains(err.Error(), "python3 not found on PATH") {
		t.Errorf("err = %v", err)
	}
}

// TestInstallBadOptions: the cache and tmp must be absolute; the source
// must be one the plan accepts.
func TestInstallBadOptions(t *testing.T) {
	h := newHarness(t)
	n := newNode(t)
	o := h.options(n, plan.Dynamo{Version: release}, nil)
	o.Dynamo.Cache = "wheels"
	if _, err := Install(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("relative cache: %v", err)
	}
	if _, _, err := h.install(n, plan.Dynamo{Version: "../x"}); err == nil || !strings.Contains(err.Error(), "not a version") {
		t.Errorf("bad version: %v", err)
	}
	if _, _, err := h.install(n, plan.Dynamo{}); err == nil || !strings.Contains(err.Error(), "nothing to install") {
		t.Errorf("no source: %v", err)
	}
}

// TestInstallStopped: a cancelled context stops the running step and its
// children at once (the whole process group gets SIGTERM) and leaves no
// temporary entry.
func TestInstallStopped(t *testing.T) {
	h := newHarness(t)
	n := newNode(t)
	ctx, cancel := context.WithCancel(context.Background())
	o := h.options(n, plan.Dynamo{Version: release}, nil, dynamoinstalltest.EnvSleep+"=300")
	// Without the group kill, the sleeping child would hold the output
	// pipe open for the whole grace period.
	o.KillGrace = 5 * time.Minute
	go func() {
		for h.fakes.Count(t, "python3 -m pip download") == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := Install(ctx, o)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the stopped fetch did not end within a minute")
	}
	if got := h.cacheNames(); len(got) != 0 {
		t.Errorf("cache holds %q", got)
	}
	emptyDir(t, n.tmp)
}

// TestInstallReadOnlyPrefix: where the Python prefix cannot take the
// marker, it goes to tmp.
func TestInstallReadOnlyPrefix(t *testing.T) {
	h := newHarness(t)
	n := node{prefix: filepath.Join(t.TempDir(), "missing"), tmp: t.TempDir()}
	res, log, err := h.install(n, plan.Dynamo{Version: release})
	if err != nil || !res.Installed {
		t.Fatalf("%+v, %v", res, err)
	}
	if installedKey(n.tmp) != releaseKey || !strings.Contains(log, "is not writable") {
		t.Errorf("marker in tmp %q; log:\n%s", installedKey(n.tmp), log)
	}
	if res, _, err := h.install(n, plan.Dynamo{Version: release}); err != nil || res.Installed {
		t.Errorf("second run: %+v, %v", res, err)
	}
}

// TestInstallOtherKeyReinstalls: one marker per prefix, naming the key
// installed last, since installing another key replaces the packages.
func TestInstallOtherKeyReinstalls(t *testing.T) {
	h := newHarness(t)
	n := newNode(t)
	for i, v := range []string{"1.2.1", "1.3.0", "1.2.1"} {
		res, _, err := h.install(n, plan.Dynamo{Version: v})
		if err != nil || !res.Installed {
			t.Fatalf("run %d (%s): %+v, %v", i, v, res, err)
		}
	}
	if dl, in := h.fakes.Count(t, "python3 -m pip download"), h.fakes.Count(t, "python3 -m pip install"); dl != 2 || in != 3 {
		t.Errorf("%d downloads, %d installs; want 2 and 3", dl, in)
	}
}

func TestStepEnv(t *testing.T) {
	env := stepEnv([]string{"PATH=/usr/bin", "HOME=/root", "RUSTFLAGS=old"}, Step{
		Env: map[string]string{"RUSTFLAGS": "-C target-cpu=native"}, PathPrepend: []string{"/root/.cargo/bin"},
	})
	want := []string{"HOME=/root", "PATH=/root/.cargo/bin:/usr/bin", "RUSTFLAGS=-C target-cpu=native"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("env = %q, want %q", env, want)
	}
	// A step's program is found on its own PATH.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "maturin"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notexec"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := lookPath("maturin", "/nonexistent:"+dir); err != nil || p != filepath.Join(dir, "maturin") {
		t.Errorf("lookPath = %q, %v", p, err)
	}
	if _, err := lookPath("notexec", dir); err == nil {
		t.Error("a file without x bits was found")
	}
}
