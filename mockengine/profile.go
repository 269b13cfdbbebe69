package mockengine

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// The profiling endpoints of an engine: SGLang's /start_profile and
// /stop_profile, and the /engine/… paths Dynamo's worker serves them on.
// The mock captures nothing; it writes a small JSON "profile" (the start
// request and the requests completed while profiling) so a run's
// profile collection can be exercised without GPUs.

// profileState is one capture in progress.
type profileState struct {
	mu       sync.Mutex
	dir      string
	req      map[string]any
	startGen int64
}

// profileDirEnv is where the mock writes when the requested output_dir
// cannot be made (a container path the stand-in runtime does not mount);
// srtctl gives workers the same directory as a host path.
const profileDirEnv = "SGLANG_TORCH_PROFILER_DIR"

func (s *Server) handleStartProfile(p *profileState) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "start_profile: " + err.Error()})
			return
		}
		dir, _ := req["output_dir"].(string)
		if dir == "" || !filepath.IsAbs(dir) || os.MkdirAll(dir, 0o755) != nil {
			dir = os.Getenv(profileDirEnv)
			if dir == "" || os.MkdirAll(dir, 0o755) != nil {
				writeJSON(w, http.StatusInternalServerError, map[string]string{"error": fmt.Sprintf("start_profile: output_dir %v cannot be written and %s is not set", req["output_dir"], profileDirEnv)})
				return
			}
		}
		p.mu.Lock()
		p.dir, p.req, p.startGen = dir, req, s.completed.Load()
		p.mu.Unlock()
		s.log.Printf("start_profile: %v into %s", req, dir)
		writeJSON(w, http.StatusOK, map[string]string{"message": "Start profiling."})
	}
}

func (s *Server) handleStopProfile(p *profileState) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.req == nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "stop_profile: profiling was not started"})
			return
		}
		port := "0"
		if s.addr != nil {
			port = s.addr.String()[strings.LastIndexByte(s.addr.String(), ':')+1:]
		}
		out := map[string]any{"mode": string(s.opts.Mode), "start_request": p.req, "requests_completed": s.completed.Load() - p.startGen}
		b, _ := json.MarshalIndent(out, "", "  ")
		path := filepath.Join(p.dir, fmt.Sprintf("mock-%s-%s.profile.json", s.opts.Mode, port))
		if err := atomicfile.WriteFile(path, append(b, '\n'), atomicfile.Options{Overwrite: true, Perm: 0o644}); err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "stop_profile: " + err.Error()})
			return
		}
		p.req = nil
		s.log.Printf("stop_profile: wrote %s", path)
		writeJSON(w, http.StatusOK, map[string]string{"message": "Stop profiling."})
	}
}

func (s *Server) profileRoutes(mux *http.ServeMux) {
	p := &profileState{}
	for _, prefix := range []string{"", "/engine"} {
		mux.HandleFunc("POST "+prefix+"/start_profile", s.handleStartProfile(p))
		mux.HandleFunc("POST "+prefix+"/stop_profile", s.handleStopProfile(p))
	}
}

// handleSlowDown is SGLang's POST /slow_down: {"forward_sleep_time": S}
// sleeps S seconds per forward (here: per token) until a request with
// null turns it off.
func (s *Server) handleSlowDown(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Sleep *float64 `json:"forward_sleep_time"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "slow_down: " + err.Error()})
		return
	}
	if req.Sleep != nil && !(*req.Sleep >= 0 && *req.Sleep < 3600) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "slow_down: forward_sleep_time out of range"})
		return
	}
	if req.Sleep == nil {
		s.forwardSleep.Store(0)
		s.log.Printf("slow_down: off")
	} else {
		s.forwardSleep.Store(int64(*req.Sleep * float64(time.Second)))
		s.log.Printf("slow_down: forward_sleep_time=%gs", *req.Sleep)
	}
	writeJSON(w, http.StatusOK, map[string]string{"message": "success"})
}
