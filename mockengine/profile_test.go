package mockengine

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileEndpoints: a worker accepts SGLang's and Dynamo's start/stop
// profiling requests and on stop writes its profile into output_dir, or
// into SGLANG_TORCH_PROFILER_DIR when output_dir cannot be made; a stop
// without a start and a bad body are refused.
func TestProfileEndpoints(t *testing.T) {
	fallback := filepath.Join(t.TempDir(), "agg")
	t.Setenv(profileDirEnv, fallback)
	s, err := New(Options{Mode: ModeAgg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	s.ready.Store(true)
	post := func(path, body string) int {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("/stop_profile", "{}"); code != http.StatusBadRequest {
		t.Errorf("stop before start: %d", code)
	}
	if code := post("/start_profile", "{"); code != http.StatusBadRequest {
		t.Errorf("bad body: %d", code)
	}
	own := filepath.Join(t.TempDir(), "profiles", "agg")
	for _, tc := range []struct{ prefix, dir, want string }{
		{"", own, own},
		{"/engine", "/proc/no-such-dir/agg", fallback},
	} {
		if code := post(tc.prefix+"/start_profile", `{"output_dir":"`+tc.dir+`","start_step":3,"num_steps":2,"activities":["CPU","GPU"]}`); code != http.StatusOK {
			t.Fatalf("%s start: %d", tc.prefix, code)
		}
		if code := post(tc.prefix+"/stop_profile", "{}"); code != http.StatusOK {
			t.Fatalf("%s stop: %d", tc.prefix, code)
		}
		files, _ := filepath.Glob(filepath.Join(tc.want, "mock-agg-*.profile.json"))
		if len(files) != 1 {
			t.Fatalf("%s: profiles in %s: %v", tc.prefix, tc.want, files)
		}
		b, _ := os.ReadFile(files[0])
		var got struct {
			Mode  string         `json:"mode"`
			Start map[string]any `json:"start_request"`
		}
		if err := json.Unmarshal(b, &got); err != nil || got.Mode != "agg" || got.Start["num_steps"] != 2.0 {
			t.Errorf("%s: profile %s (%v)", tc.prefix, b, err)
		}
	}
}

// TestSlowDownEndpoint: /slow_down sets the per-token sleep, null clears
// it, a bad body or value is refused.
func TestSlowDownEndpoint(t *testing.T) {
	s, err := New(Options{Mode: ModeDecode})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	s.ready.Store(true)
	for _, tc := range []struct {
		body string
		code int
		want int64
	}{
		{`{"forward_sleep_time": 0.25}`, http.StatusOK, 250_000_000},
		{`{"forward_sleep_time": -1}`, http.StatusBadRequest, 250_000_000},
		{`{`, http.StatusBadRequest, 250_000_000},
		{`{"forward_sleep_time": null}`, http.StatusOK, 0},
	} {
		resp, err := http.Post(srv.URL+"/slow_down", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code || s.forwardSleep.Load() != tc.want {
			t.Errorf("%s: HTTP %d, sleep %d; want %d, %d", tc.body, resp.StatusCode, s.forwardSleep.Load(), tc.code, tc.want)
		}
	}
}
