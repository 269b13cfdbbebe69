package driver

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestProfileRequests: around an sa-bench run the driver sends each
// leader lib/profiling.sh's start request (its body, its path) and then an
// empty stop; a refusing worker is logged and the run goes on.
func TestProfileRequests(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/bad") {
			http.Error(w, "no profiler", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	pl := &plan.Plan{Benchmark: plan.Benchmark{Type: "sa-bench"}, Profiling: &plan.Profiling{Type: "torch", Trigger: []plan.ProfileTrigger{
		{Role: plan.RolePrefill, URL: "http://{ip:0}:" + port, StartPath: "/engine/start_profile", StopPath: "/engine/stop_profile", Body: `{"start_step":1}`},
		{Role: plan.RoleDecode, URL: "http://{ip:1}:" + port, StartPath: "/bad/start", StopPath: "/bad/stop", Body: `{"start_step":2}`},
	}}}
	var log bytes.Buffer
	d := &driver{plan: pl, log: &log, alloc: Allocation{Hosts: []string{"n0", "n1"}, IPs: []string{host, host}},
		opts: Options{HTTPClient: srv.Client()}}
	if !profilesTriggered(pl) {
		t.Fatal("an sa-bench run with triggers is not triggered")
	}
	d.startProfiles(context.Background())
	d.stopProfiles(context.Background())
	want := []string{
		`POST /engine/start_profile application/json {"start_step":1}`,
		`POST /bad/start application/json {"start_step":2}`,
		`POST /engine/stop_profile application/json {}`,
		`POST /bad/stop application/json {}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(log.String(), "HTTP 404: no profiler") || !strings.Contains(log.String(), "/engine/start_profile (prefill) accepted") {
		t.Errorf("log:\n%s", log.String())
	}
	for _, p := range []*plan.Plan{
		{Benchmark: plan.Benchmark{Type: "mmlu"}, Profiling: pl.Profiling},
		{Benchmark: plan.Benchmark{Type: "sa-bench"}, Profiling: &plan.Profiling{Type: "nsys-time"}},
		{Benchmark: plan.Benchmark{Type: "sa-bench"}},
	} {
		if profilesTriggered(p) {
			t.Errorf("%+v: triggered (its script triggers, or nothing to trigger)", p.Benchmark)
		}
	}
}

// TestMakeProfileDirs: every worker mode's profile directory exists before
// the workers start (nsys writes its -o file there and makes no directory).
func TestMakeProfileDirs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "profiles")
	pl := &plan.Plan{Profiling: &plan.Profiling{Type: "nsys", Dir: dir}, Processes: []plan.Process{
		{Role: plan.RolePrefill}, {Role: plan.RoleAgg}, {Role: plan.RoleBenchmark}}}
	if err := makeProfileDirs(pl); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"prefill", "agg"} {
		if st, err := os.Stat(filepath.Join(dir, m)); err != nil || !st.IsDir() {
			t.Errorf("%s: %v", m, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "decode")); err == nil {
		t.Error("a directory for a mode with no worker")
	}
	if err := makeProfileDirs(&plan.Plan{}); err != nil {
		t.Error(err)
	}
}
