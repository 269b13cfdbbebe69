package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// jwtPattern matches any JWT (the test cluster's tokens are HS256 JWTs).
var jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+`)

// TestSecrets: the slurmrestd token and HF_TOKEN appear in no log, argv,
// artifact, summary or output of a run. SLURM_JWT holds a marker the
// server refuses, so the client mints real tokens with the profile's
// token_command: those must not leak either.
func TestSecrets(t *testing.T) {
	// Not parallel: it samples every process on the machine for secrets,
	// so no other test may run beside it.
	c := setup(t)
	jwtMarker := uniqueName("jwt-marker-secret")
	hfMarker := uniqueName("hf_marker_secret")
	c.mintToken(t, 60) // skips where test-cluster tokens cannot be minted
	mint, calls := c.minter(t, 3600)
	name := uniqueName("e2e-secrets")
	dir := t.TempDir()
	summary, output := filepath.Join(dir, "step-summary.md"), filepath.Join(dir, "github-output")
	// The stand-in enroot logs its calls (imports here, starts on the
	// nodes): on the shared filesystem, passed to the job by name.
	enrootLog := filepath.Join(c.Root, "runs", name+"-enroot-calls.jsonl")
	t.Cleanup(func() { os.Remove(enrootLog) })
	// Written by the import here (root) and by jobs (the cluster's user).
	if err := os.WriteFile(enrootLog, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(enrootLog, 0o666)
	r := c.prepare(t, runOpts{name: name, token: jwtMarker,
		slurm:  []string{"token_command = " + tomlList(mint)},
		recipe: mockRecipe{Name: name, OSL: 600, ITL: "5ms"}.String(),
		env: []string{"HF_TOKEN=" + hfMarker, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT=" + output,
			"ENROOT_STANDIN_LOG=" + enrootLog, "IMAGE=slurmbench/mock-engine:" + uniqueName("secrets")}})
	r.editProfile(`passthrough = ["HF_TOKEN"]`, `passthrough = ["HF_TOKEN", "ENROOT_STANDIN_LOG"]`)

	// Sample every process's argv (and whether the HF token reached a
	// process's environment, so the test is not vacuous) while it runs.
	stopSampling := sampleProcs(jwtMarker, hfMarker)
	r.start()
	code := r.wait(5 * time.Minute)
	sampled := stopSampling()
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	if n := countLines(calls); n == 0 {
		t.Errorf("the token command never ran: the marker token was not refused?")
	}
	t.Logf("%d /proc samples", sampled.samples)
	for _, l := range sampled.leaks {
		t.Errorf("secret in a process's argv: %s", l)
	}
	if !sampled.hfDelivered {
		t.Errorf("HF_TOKEN never reached a job process's environment: the passthrough is broken or the test vacuous")
	}

	secrets := map[string]*regexp.Regexp{
		"SLURM_JWT": regexp.MustCompile(regexp.QuoteMeta(jwtMarker)),
		"HF_TOKEN":  regexp.MustCompile(regexp.QuoteMeta(hfMarker)),
		"a JWT":     jwtPattern,
	}
	check := func(where string, data []byte) {
		for what, re := range secrets {
			if re.Match(data) {
				t.Errorf("%s found in %s", what, where)
			}
		}
	}
	check("run's stdout", []byte(r.stdout.String()))
	check("run's stderr", []byte(r.stderr.String()))
	for _, root := range []string{r.runDir(), r.stage, summary, output, enrootLog} {
		n := scanTree(t, root, check)
		if n == 0 {
			t.Errorf("%s: nothing to scan", root)
		}
	}
}

// procSamples is what sampleProcs saw.
type procSamples struct {
	leaks       []string
	hfDelivered bool
	samples     int
}

// sampleProcs scans every process (scanProcs) every 100 ms until the
// returned stop is called, which returns what was seen.
func sampleProcs(markers ...string) (stop func() procSamples) {
	var (
		mu  sync.Mutex
		got procSamples
	)
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			procs, delivered := scanProcs(markers...)
			mu.Lock()
			got.leaks = append(got.leaks, procs...)
			got.hfDelivered = got.hfDelivered || delivered
			got.samples++
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() procSamples {
		close(done)
		<-sampled
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// scanProcs returns processes whose argv holds a marker, and whether any
// process's environment holds the HF marker.
func scanProcs(markers ...string) (leaks []string, hfInEnv bool) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil {
			for _, m := range markers {
				if bytes.Contains(b, []byte(m)) {
					leaks = append(leaks, "pid "+e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
				}
			}
			if jwtPattern.Match(b) {
				leaks = append(leaks, "pid "+e.Name()+" has a JWT in its argv")
			}
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && bytes.Contains(env, []byte("HF_TOKEN="+markers[1])) {
			// slurmbench run itself holds it; a job process proves delivery.
			if bytes.Contains(b, []byte("mock-engine")) {
				hfInEnv = true
			}
		}
	}
	return leaks, hfInEnv
}

// scanTree calls check on every file under root (or root itself), reading
// gzip'd tar archives member by member, and returns how many it read.
func scanTree(t *testing.T, root string, check func(where string, data []byte)) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if filepath.Base(path) == "slurmbench" && strings.HasSuffix(filepath.Dir(path), "bin") {
			return nil // the binary copy
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		check(path, b)
		if strings.HasSuffix(path, ".tar.gz") {
			n += scanTarGz(t, path, b, check)
		}
		return nil
	})
	if err != nil {
		t.Errorf("scanning %s: %v", root, err)
	}
	return n
}

func scanTarGz(t *testing.T, path string, b []byte, check func(string, []byte)) int {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return 0
	}
	tr := tar.NewReader(zr)
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return n
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Errorf("%s: %s: %v", path, h.Name, err)
			return n
		}
		n++
		check(path+":"+h.Name, data)
	}
}
