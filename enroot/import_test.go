package enroot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot/enroottest"
)

// helperEnv makes the test binary act as one importing process (see
// TestMain); the concurrency test starts several.
const helperEnv = "ENROOT_TEST_IMPORT_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(importHelper())
	}
	os.Exit(m.Run())
}

// importHelper imports $HELPER_IMAGE into $HELPER_SQUASH_DIR with the
// enroot at $HELPER_ENROOT and prints the Result as JSON.
func importHelper() int {
	ref, err := ParseRef(os.Getenv("HELPER_IMAGE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	im, err := NewImporter(Options{SquashDir: os.Getenv("HELPER_SQUASH_DIR"), Enroot: os.Getenv("HELPER_ENROOT"), LockTimeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	res, err := im.Import(context.Background(), ref)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(map[string]string{"action": string(res.Action), "path": res.Path})
	return 0
}

// envRunner runs commands locally with extra environment, so tests can
// configure the stand-in without touching the test process's environment.
type envRunner struct {
	env []string
}

func (r envRunner) Run(ctx context.Context, cmd Command) error {
	cmd.Env = append(append([]string(nil), r.env...), cmd.Env...)
	return LocalRunner{KillGrace: time.Second}.Run(ctx, cmd)
}

type fixture struct {
	dir    string // squash directory
	log    string // stand-in call log
	ref    Ref
	target string
}

func newFixture(t *testing.T, image string) fixture {
	t.Helper()
	ref, err := ParseRef(image)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return fixture{dir: dir, log: filepath.Join(t.TempDir(), "enroot.log"), ref: ref, target: filepath.Join(dir, ref.SquashName())}
}

// importer returns an Importer using the stand-in enroot. knobs are extra
// environment entries for it (ENROOT_STANDIN_*).
func (f fixture) importer(t *testing.T, opts Options, knobs ...string) *Importer {
	t.Helper()
	opts.SquashDir = f.dir
	opts.Enroot = enroottest.StandinPath(t)
	opts.Runner = envRunner{env: append([]string{"ENROOT_STANDIN_LOG=" + f.log}, knobs...)}
	opts.Logf = t.Logf
	opts.Version = "test"
	im, err := NewImporter(opts)
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func (f fixture) calls(t *testing.T) []enroottest.Call {
	t.Helper()
	calls, err := enroottest.ReadCalls(f.log)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

func (f fixture) imports(t *testing.T) int { return enroottest.Count(f.calls(t), "import") }

// checkClean fails if an import left private directories or temp files.
func (f fixture) checkClean(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if n == f.ref.SquashName() || n == f.ref.SquashName()+ManifestSuffix || n == f.ref.SquashName()+".lock" {
			continue
		}
		t.Errorf("left behind in the squash directory: %s", n)
	}
}

func (f fixture) checkSidecar(t *testing.T, origin string) *Manifest {
	t.Helper()
	st := Inspect(f.target)
	if st.State != StateOK {
		t.Fatalf("after import: %s (%s)", st.State, st.Problem)
	}
	m := st.Manifest
	if m.Ref != f.ref.String() || m.Name != f.ref.Name() || m.EnrootURI != f.ref.EnrootURI() || m.Origin != origin || m.Version != "test" || m.CreatedAt.IsZero() {
		t.Errorf("sidecar %+v", m)
	}
	return m
}

// watchTarget polls path until stop is closed and reports every moment the
// file existed and was not a complete squashfs image.
func watchTarget(path string, stop <-chan struct{}) (seen int, bad []string) {
	for {
		select {
		case <-stop:
			return seen, bad
		default:
		}
		if _, err := os.Stat(path); err == nil {
			seen++
			if _, err := ValidateSquash(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				bad = append(bad, err.Error())
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func TestConcurrentImportsRunEnrootOnce(t *testing.T) {
	f := newFixture(t, "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc18")
	im := f.importer(t, Options{}, "ENROOT_STANDIN_IMPORT_DELAY=0.5")

	stop := make(chan struct{})
	var seen int
	var bad []string
	watched := make(chan struct{})
	go func() { seen, bad = watchTarget(f.target, stop); close(watched) }()

	const n = 4
	results := make([]Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = im.Import(context.Background(), f.ref)
		}()
	}
	wg.Wait()
	time.Sleep(20 * time.Millisecond)
	close(stop)
	<-watched

	imported := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if results[i].Path != f.target {
			t.Errorf("result %d path %s", i, results[i].Path)
		}
		if results[i].Action == ActionImported {
			imported++
		}
	}
	if got := f.imports(t); got != 1 || imported != 1 {
		t.Errorf("enroot import ran %d times, %d results say imported; want 1 and 1", got, imported)
	}
	if seen == 0 {
		t.Error("the watcher never saw the target; the test proves nothing")
	}
	for _, b := range bad {
		t.Errorf("a reader saw an incomplete squash: %s", b)
	}
	f.checkSidecar(t, OriginImported)
	f.checkClean(t)
}

func TestConcurrentImportProcessesRunEnrootOnce(t *testing.T) {
	f := newFixture(t, "lmsysorg/sglang:v0.5.14-cu130@"+digestA)
	const n = 4
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=1",
			"HELPER_IMAGE="+f.ref.String(), "HELPER_SQUASH_DIR="+f.dir, "HELPER_ENROOT="+enroottest.StandinPath(t),
			"ENROOT_STANDIN_LOG="+f.log, "ENROOT_STANDIN_IMPORT_DELAY=0.5")
		outs[i] = new(bytes.Buffer)
		cmd.Stdout = outs[i]
		cmd.Stderr = os.Stderr
		cmds[i] = cmd
	}
	stop := make(chan struct{})
	var seen int
	var bad []string
	watched := make(chan struct{})
	go func() { seen, bad = watchTarget(f.target, stop); close(watched) }()
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	actions := map[string]int{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		var out struct{ Action, Path string }
		if err := json.Unmarshal(outs[i].Bytes(), &out); err != nil || out.Path != f.target {
			t.Fatalf("process %d printed %q: %v", i, outs[i], err)
		}
		actions[out.Action]++
	}
	close(stop)
	<-watched
	if got := f.imports(t); got != 1 || actions[string(ActionImported)] != 1 {
		t.Errorf("enroot import ran %d times; actions %v; want exactly one import", got, actions)
	}
	if seen == 0 {
		t.Error("the watcher never saw the target; the test proves nothing")
	}
	for _, b := range bad {
		t.Errorf("a reader saw an incomplete squash: %s", b)
	}
	// The digest reaches enroot as the tag (see Ref.EnrootURI).
	for _, c := range f.calls(t) {
		if c.Command() == "import" && c.Argv[len(c.Argv)-1] != "docker://lmsysorg/sglang:"+digestA {
			t.Errorf("import argv %q", c.Argv)
		}
	}
	f.checkClean(t)
}

func TestImportUsesPrivateEnrootPathsAndArgv(t *testing.T) {
	f := newFixture(t, "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1")
	scratch := t.TempDir()
	im := f.importer(t, Options{Arch: "aarch64", ScratchDir: scratch})
	res, err := im.Import(context.Background(), f.ref)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != ActionImported || res.Size != 4096 {
		t.Errorf("result %+v", res)
	}
	calls := f.calls(t)
	if len(calls) != 1 {
		t.Fatalf("calls %+v", calls)
	}
	argv := calls[0].Argv
	want := []string{"import", "--arch", "aarch64", "-o", "", "docker://nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1"}
	if len(argv) != len(want) || argv[4] == "" {
		t.Fatalf("import argv %q", argv)
	}
	for i := range want {
		if want[i] != "" && argv[i] != want[i] {
			t.Errorf("import argv %q, want %q", argv, want)
		}
	}
	// The output goes to a private directory inside the squash directory
	// (same filesystem, so the rename is atomic), never to the target.
	if out := argv[4]; filepath.Dir(filepath.Dir(out)) != f.dir || out == f.target || filepath.Base(out) != f.ref.SquashName() {
		t.Errorf("enroot wrote to %s", out)
	}
	for _, v := range []string{"ENROOT_CACHE_PATH", "ENROOT_DATA_PATH", "ENROOT_TEMP_PATH", "ENROOT_RUNTIME_PATH"} {
		p := calls[0].Env[v]
		if !strings.HasPrefix(p, scratch+"/") {
			t.Errorf("%s = %q, want a private directory under the scratch directory %s", v, p, scratch)
		}
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch directory not cleaned: %v", left)
	}
	f.checkSidecar(t, OriginImported)
	f.checkClean(t)
	if info, err := os.Stat(f.target); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("target %v, %v: want mode 0644 so everyone sharing the cache can read it", info.Mode(), err)
	}
}

func TestFailedImportLeavesNothing(t *testing.T) {
	f := newFixture(t, "lmsysorg/sglang:v0.5.16-cu130")
	im := f.importer(t, Options{}, "ENROOT_STANDIN_FAIL_IMPORT=1", "ENROOT_STANDIN_IMPORT_DELAY=0.05")
	_, err := im.Import(context.Background(), f.ref)
	if err == nil {
		t.Fatal("import succeeded")
	}
	for _, want := range []string{`importing image "lmsysorg/sglang:v0.5.16-cu130"`, "exit status 1", "No space left on device", "[ERROR] Failed to import"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(f.target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("target after a failed import: %v", err)
	}
	f.checkClean(t)
}

func TestImportThatWritesNoValidSquashFails(t *testing.T) {
	f := newFixture(t, "nginx:1.27.4")
	fake := filepath.Join(t.TempDir(), "enroot")
	// An "enroot" that exits 0 having written half a file, as a killed
	// mksquashfs under a shell that ignores the error would.
	script := "#!/bin/sh\nwhile [ \"$1\" != -o ]; do shift; done\nprintf 'hsqs' > \"$2\"\necho 'mksquashfs: killed' >&2\n"
	writeFile(t, fake, []byte(script))
	os.Chmod(fake, 0o755)
	im, err := NewImporter(Options{SquashDir: f.dir, Enroot: fake})
	if err != nil {
		t.Fatal(err)
	}
	_, err = im.Import(context.Background(), f.ref)
	if err == nil || !errors.Is(err, ErrInvalidSquash) || !strings.Contains(err.Error(), "mksquashfs: killed") || !strings.Contains(err.Error(), `"nginx:1.27.4"`) {
		t.Fatalf("error %v", err)
	}
	f.checkClean(t)
}

func TestFreshSidecarSkipsReadingTheImage(t *testing.T) {
	f := newFixture(t, "vllm/vllm-openai:v0.27.1")
	im := f.importer(t, Options{})
	if _, err := im.Import(context.Background(), f.ref); err != nil {
		t.Fatal(err)
	}
	// Zero the image but keep its size and mtime: the cheap check cannot
	// notice, which shows it does not read the file.
	info, _ := os.Stat(f.target)
	writeFile(t, f.target, make([]byte, info.Size()))
	if err := os.Chtimes(f.target, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	res, err := im.Import(context.Background(), f.ref)
	if err != nil || res.Action != ActionCached {
		t.Errorf("second import: %+v, %v; want cached", res, err)
	}
	if f.imports(t) != 1 {
		t.Errorf("enroot import ran %d times", f.imports(t))
	}
}

func TestStaleSidecarTriggersFullValidation(t *testing.T) {
	f := newFixture(t, "vllm/vllm-openai:v0.27.1")
	im := f.importer(t, Options{})
	if _, err := im.Import(context.Background(), f.ref); err != nil {
		t.Fatal(err)
	}

	// Same content, new mtime: stale sidecar, the file validates, adopted.
	later := time.Now().Add(time.Hour)
	os.Chtimes(f.target, later, later)
	if st := Inspect(f.target); st.State != StateStale || !strings.Contains(st.Problem, "sidecar records") {
		t.Errorf("Inspect after touch: %s %q", st.State, st.Problem)
	}
	res, err := im.Import(context.Background(), f.ref)
	if err != nil || res.Action != ActionValidated {
		t.Fatalf("import after touch: %+v, %v; want validated", res, err)
	}
	if m := f.checkSidecar(t, OriginAdopted); !m.MTime.Equal(later.Truncate(0)) && !m.MTime.Equal(mtime(t, f.target)) {
		t.Errorf("sidecar mtime %s", m.MTime)
	}
	if f.imports(t) != 1 {
		t.Errorf("enroot import ran %d times, want 1", f.imports(t))
	}

	// Corrupt content and a new mtime: full validation fails, re-import.
	writeFile(t, f.target, make([]byte, 4096))
	res, err = im.Import(context.Background(), f.ref)
	if err != nil || res.Action != ActionImported {
		t.Fatalf("import after corruption: %+v, %v; want imported", res, err)
	}
	if f.imports(t) != 2 {
		t.Errorf("enroot import ran %d times, want 2", f.imports(t))
	}
	f.checkSidecar(t, OriginImported)
	f.checkClean(t)
}

func mtime(t *testing.T, path string) time.Time {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime()
}

func TestCorruptOrTruncatedSquashIsReimported(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{"garbage without sidecar", func(t *testing.T, path string) {
			writeFile(t, path, bytes.Repeat([]byte("not squashfs "), 400))
		}},
		{"truncated with a stale sidecar", func(t *testing.T, path string) {
			if err := enroottest.WriteSquash(path, 1<<20); err != nil {
				t.Fatal(err)
			}
			info, _ := os.Stat(path)
			writeManifest(path, &Manifest{Ref: "x", Size: info.Size(), MTime: info.ModTime()})
			os.Truncate(path, 512<<10)
		}},
		{"sidecar unreadable, file corrupt", func(t *testing.T, path string) {
			writeFile(t, path, []byte("hsqs"))
			writeFile(t, path+ManifestSuffix, []byte("{not json"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "ghcr.io#semianalysisai/trtllm-deepseek-v4:feat-deepseek_v4-c185066")
			tc.prepare(t, f.target)
			if st := Inspect(f.target); st.State != StateInvalid {
				t.Fatalf("prepared file is %s", st.State)
			}
			res, err := f.importer(t, Options{}).Import(context.Background(), f.ref)
			if err != nil || res.Action != ActionImported {
				t.Fatalf("%+v, %v", res, err)
			}
			f.checkSidecar(t, OriginImported)
			f.checkClean(t)
		})
	}
}

func TestValidSquashWithoutSidecarIsAdopted(t *testing.T) {
	// What the InferenceX runners leave: a valid <sed>.sqsh, no sidecar.
	f := newFixture(t, "lmsysorg/sglang:v0.5.12-cu130")
	if err := enroottest.WriteSquash(f.target, 8192); err != nil {
		t.Fatal(err)
	}
	res, err := f.importer(t, Options{}).Import(context.Background(), f.ref)
	if err != nil || res.Action != ActionValidated || res.Size != 8192 {
		t.Fatalf("%+v, %v", res, err)
	}
	if f.imports(t) != 0 {
		t.Error("enroot import ran for a valid squash")
	}
	f.checkSidecar(t, OriginAdopted)
}

// holdLock takes the image's lock the way another importer would.
func holdLock(t *testing.T, path string) {
	t.Helper()
	lf, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lf.Close() })
}

func TestLockTimeoutNamesImageAndLock(t *testing.T) {
	f := newFixture(t, "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24")
	im := f.importer(t, Options{LockTimeout: 300 * time.Millisecond})
	holdLock(t, im.LockPath(f.ref))
	start := time.Now()
	res, err := im.Import(context.Background(), f.ref)
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("err = %v, want ErrLockTimeout", err)
	}
	for _, want := range []string{f.ref.String(), im.LockPath(f.ref), "300ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// Tolerant bound: 300 ms is the timeout; without one the wait is endless.
	if elapsed := time.Since(start); elapsed > time.Minute || res.LockWait < 300*time.Millisecond {
		t.Errorf("gave up after %s (lock wait %s)", elapsed, res.LockWait)
	}
	if f.imports(t) != 0 {
		t.Error("enroot import ran without the lock")
	}
}

func TestLockWaitFollowsContext(t *testing.T) {
	f := newFixture(t, "nginx:1.27.4")
	im := f.importer(t, Options{LockTimeout: time.Hour})
	holdLock(t, im.LockPath(f.ref))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := im.Import(ctx, f.ref)
	// Tolerant bound: the lock timeout is an hour, the context 200 ms.
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Minute {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}

func TestCancelledImportStopsEnrootAndCleansUp(t *testing.T) {
	f := newFixture(t, "nginx:1.27.4")
	im := f.importer(t, Options{}, "ENROOT_STANDIN_IMPORT_DELAY=60")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err := im.Import(ctx, f.ref)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// Tolerant bound: the stand-in import takes 60 s unless stopped.
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("cancel took %s", elapsed)
	}
	calls := f.calls(t)
	if len(calls) != 1 {
		t.Fatalf("calls %+v", calls)
	}
	if err := syscall.Kill(calls[0].PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the stand-in (pid %d) still runs: %v", calls[0].PID, err)
	}
	if _, err := os.Stat(f.target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("target after a cancelled import: %v", err)
	}
	f.checkClean(t)
}

func TestAbandonedImportDirectoriesAreRemovedWhenOld(t *testing.T) {
	f := newFixture(t, "nginx:1.27.4")
	old := filepath.Join(f.dir, "."+f.ref.SquashName()+".import-111")
	young := filepath.Join(f.dir, "."+f.ref.SquashName()+".import-222")
	other := filepath.Join(f.dir, ".other.sqsh.import-333")
	for _, d := range []string{old, young, other} {
		if err := os.MkdirAll(filepath.Join(d, "ENROOT_CACHE_PATH"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-13 * time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(other, long, long)
	if got, _ := AbandonedImports(f.dir); len(got) != 3 {
		t.Errorf("AbandonedImports = %v", got)
	}
	if _, err := f.importer(t, Options{}).Import(context.Background(), f.ref); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]bool{old: false, young: true, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", d, err == nil, want)
		}
	}
}

func TestLocalSquashIsValidatedNotImported(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dynamo-sglang.sqsh")
	if err := enroottest.WriteSquash(path, 4096); err != nil {
		t.Fatal(err)
	}
	ref, _ := ParseRef(path)
	f := newFixture(t, "nginx:1.27.4")
	im := f.importer(t, Options{})
	res, err := im.Import(context.Background(), ref)
	if err != nil || res.Action != ActionLocal || res.Path != path {
		t.Fatalf("%+v, %v", res, err)
	}
	writeFile(t, path, []byte("broken"))
	if _, err := im.Import(context.Background(), ref); !errors.Is(err, ErrInvalidSquash) || !strings.Contains(err.Error(), path) {
		t.Errorf("broken local squash: %v", err)
	}
	missing, _ := ParseRef(filepath.Join(dir, "missing.sqsh"))
	if _, err := im.Import(context.Background(), missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing local squash: %v", err)
	}
	if f.imports(t) != 0 {
		t.Error("enroot import ran for a local squash")
	}
}

func TestNewImporterChecksOptions(t *testing.T) {
	file := writeFile(t, filepath.Join(t.TempDir(), "f"), nil)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{}, "no squash directory"},
		{Options{SquashDir: "relative"}, "not absolute"},
		{Options{SquashDir: "/nonexistent/squash"}, "no such file"},
		{Options{SquashDir: file}, "not a directory"},
		{Options{SquashDir: t.TempDir(), ScratchDir: "tmp"}, "scratch directory"},
	} {
		if _, err := NewImporter(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewImporter(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestListReportsEachState(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		if err := enroottest.WriteSquash(p, size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := mk("ok.sqsh", 4096)
	info, _ := os.Stat(ok)
	writeManifest(ok, &Manifest{Ref: "ok:1", Size: info.Size(), MTime: info.ModTime()})
	mk("unrecorded.sqsh", 4096)
	stale := mk("stale.sqsh", 8192)
	writeManifest(stale, &Manifest{Ref: "stale:1", Size: 4096, MTime: info.ModTime()})
	writeFile(t, filepath.Join(dir, "invalid.sqsh"), []byte("hsqs"))
	writeFile(t, filepath.Join(dir, "ok.sqsh.lock"), nil)
	writeFile(t, filepath.Join(dir, "notes.txt"), nil)
	os.Mkdir(filepath.Join(dir, ".x.sqsh.import-1"), 0o700)

	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]State{}
	for _, st := range list {
		got[filepath.Base(st.Path)] = st.State
	}
	want := map[string]State{"ok.sqsh": StateOK, "unrecorded.sqsh": StateUnrecorded, "stale.sqsh": StateStale, "invalid.sqsh": StateInvalid}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List states %v, want %v", got, want)
	}
	if st := Inspect(filepath.Join(dir, "missing.sqsh")); st.State != StateMissing || st.State.Usable() {
		t.Errorf("missing: %+v", st)
	}
}

// TestImportRunsAgainOnce: an import that left no valid squash file, or
// that a registry failure that may pass stopped, runs once more; one that
// failed for a reason that stays (a 404, an error enroot gives for the
// image) or failed twice is reported, and nothing is left behind.
func TestImportRunsAgainOnce(t *testing.T) {
	exit1 := errors.New("exit status 1")
	for _, tc := range []struct {
		name    string
		answers []answer
		imports int
		ok      bool
	}{
		{"invalid squash, then imported", []answer{{file: "not a squashfs"}, {pass: true}}, 2, true},
		{"registry 500, then imported", []answer{{output: "[ERROR] URL https://r/v2/x/manifests/t returned error code: 500 Internal Server Error\n", err: exit1}, {pass: true}}, 2, true},
		{"dropped connection, then imported", []answer{{output: "curl: (56) Recv failure: Connection reset by peer\n", err: exit1}, {pass: true}}, 2, true},
		{"invalid squash twice", []answer{{file: "not a squashfs"}}, 2, false},
		{"404: not again", []answer{{output: "[ERROR] URL https://r/v2/x/manifests/t returned error code: 404 Not Found\n", err: exit1}, {pass: true}}, 1, false},
		{"enroot's own error: not again", []answer{{output: "[ERROR] Could not process JSON input\n", err: exit1}, {pass: true}}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "10.77.0.1:5000/slurmbench/mock-engine:demo")
			var calls []string
			im := f.importer(t, Options{})
			im.opts.Runner = scriptedRunner{next: im.opts.Runner, command: "import", answers: tc.answers, calls: &calls}
			res, err := im.Import(context.Background(), f.ref)
			if n := countCalls(calls, "import"); n != tc.imports {
				t.Errorf("enroot import ran %d times, want %d (calls %q)", n, tc.imports, calls)
			}
			if tc.ok {
				if err != nil || res.Action != ActionImported {
					t.Fatalf("Import: %+v, %v", res, err)
				}
				f.checkSidecar(t, OriginImported)
			} else {
				if err == nil {
					t.Fatalf("Import succeeded: %+v", res)
				}
				if _, serr := os.Stat(f.target); !errors.Is(serr, os.ErrNotExist) {
					t.Errorf("a failed import left %s (%v)", f.target, serr)
				}
			}
			f.checkClean(t)
		})
	}
}
