package srtctlbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// profiling is the start/stop requests sglang-bench and trace-replay send
// the workers around their sweep, from the step's environment as the
// planner sets it (planner's profilingBenchmarkEnv). The rules are those
// of srtctl's scripts/lib/profiling.sh @c88ef731, read as facts: nothing
// unless PROFILE_TYPE is nsys or torch, PROFILE_OUTPUT_DIR is set and some
// PROFILE_<PHASE>_ENDPOINTS (or _IPS) are; an endpoint without a port gets
// WORKER_PORT (9090); a phase's steps default to 0–50 and an empty range
// skips the worker; the body names <output>/<phase>, the start step, the
// step count and the activities (CPU and GPU for torch, CUDA_PROFILER for
// nsys); the paths are Dynamo's /engine/start_profile or SGLang's
// /start_profile by SRTCTL_FRONTEND_TYPE (another frontend fails the run);
// a refused request is a warning; stop sends {} to every endpoint once
// start has run, also when the sweep failed.
type profiling struct {
	r         *run
	noop      bool // trace-replay on TRT-LLM: the workers profile themselves
	typ       string
	outputDir string
	port      string
	frontend  string
	phases    []profilePhase
	started   bool
}

type profilePhase struct {
	name, dir   string
	endpoints   []string
	start, stop int
}

// profileRequestTimeout bounds one request: a hung worker must not hold the
// benchmark (lib/profiling.sh's curl has no bound).
const profileRequestTimeout = 30 * time.Second

// profilingFromEnv reads the profiling variables; trtllm is trace-replay's
// PROFILING_BACKEND=trtllm switch, under which the workers start and stop
// their own profiles and nothing is sent.
func (r *run) profilingFromEnv(trtllm bool) (*profiling, error) {
	p := &profiling{r: r, noop: trtllm, typ: r.getenv("PROFILE_TYPE"), outputDir: r.getenv("PROFILE_OUTPUT_DIR"),
		port: r.getenv("WORKER_PORT"), frontend: r.getenv("SRTCTL_FRONTEND_TYPE")}
	if p.typ == "" {
		p.typ = "none"
	}
	if p.port == "" {
		p.port = "9090"
	}
	if p.frontend == "" {
		p.frontend = r.getenv("FRONTEND_TYPE")
	}
	for _, name := range []string{"prefill", "decode", "agg"} {
		key := "PROFILE_" + strings.ToUpper(name)
		ph := profilePhase{name: name, dir: r.getenv(key + "_OUTPUT_DIR")}
		if ph.dir == "" && p.outputDir != "" {
			ph.dir = p.outputDir + "/" + name
		}
		eps := r.getenv(key + "_ENDPOINTS")
		if eps == "" {
			eps = r.getenv(key + "_IPS")
		}
		for _, ep := range strings.Split(eps, ",") {
			if ep != "" {
				ph.endpoints = append(ph.endpoints, ep)
			}
		}
		var err error
		if ph.start, err = envInt(r, key+"_START_STEP", 0); err != nil {
			return nil, err
		}
		if ph.stop, err = envInt(r, key+"_STOP_STEP", 50); err != nil {
			return nil, err
		}
		p.phases = append(p.phases, ph)
	}
	return p, nil
}

func envInt(r *run, key string, def int) (int, error) {
	v := r.getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("profiling: %s=%q is not a step number", key, v)
	}
	return n, nil
}

func (p *profiling) paths() (string, string, error) {
	switch p.frontend {
	case "dynamo":
		return "/engine/start_profile", "/engine/stop_profile", nil
	case "sglang":
		return "/start_profile", "/stop_profile", nil
	}
	return "", "", fmt.Errorf("profiling: SRTCTL_FRONTEND_TYPE %q: want dynamo or sglang", p.frontend)
}

func (p *profiling) start(ctx context.Context) error {
	if p.typ == "none" {
		return nil
	}
	if p.noop {
		p.r.logf("profiling: %s, started and stopped by the TRT-LLM workers themselves; nothing to send", p.typ)
		return nil
	}
	var any bool
	for _, ph := range p.phases {
		any = any || len(ph.endpoints) > 0
	}
	switch {
	case p.typ != "nsys" && p.typ != "torch":
		p.r.logf("Warning: profiling: PROFILE_TYPE %q is neither nsys nor torch; not profiling", p.typ)
		return nil
	case p.outputDir == "":
		p.r.logf("Warning: profiling: PROFILE_TYPE %s without PROFILE_OUTPUT_DIR; not profiling", p.typ)
		return nil
	case !any:
		p.r.logf("Warning: profiling: PROFILE_TYPE %s without worker endpoints; not profiling", p.typ)
		return nil
	}
	startPath, _, err := p.paths()
	if err != nil {
		return err
	}
	activities := []string{"CUDA_PROFILER"}
	if p.typ == "torch" {
		activities = []string{"CPU", "GPU"}
	}
	_ = os.MkdirAll(p.outputDir, 0o755) // the workers write there; the script ignores a failure too
	for _, ph := range p.phases {
		if len(ph.endpoints) == 0 {
			continue
		}
		_ = os.MkdirAll(ph.dir, 0o755)
		for _, ep := range ph.endpoints {
			n := ph.stop - ph.start
			if n <= 0 {
				p.r.logf("Warning: profiling: %s steps %d-%d on %s: an empty range, not profiled", ph.name, ph.start, ph.stop, ep)
				continue
			}
			body, _ := json.Marshal(struct {
				OutputDir  string   `json:"output_dir"`
				StartStep  int      `json:"start_step"`
				NumSteps   int      `json:"num_steps"`
				Activities []string `json:"activities"`
			}{ph.dir, ph.start, n, activities})
			p.r.logf("profiling: starting on %s (%s steps %d-%d)", p.hostPort(ep), ph.name, ph.start, ph.stop)
			if err := p.post(ctx, p.hostPort(ep)+startPath, string(body)); err != nil {
				p.r.logf("Warning: profiling: %v", err)
			}
		}
	}
	p.started = true
	return nil
}

func (p *profiling) stop(ctx context.Context) {
	if !p.started {
		return
	}
	p.started = false
	_, stopPath, err := p.paths()
	if err != nil {
		return
	}
	for _, ph := range p.phases {
		for _, ep := range ph.endpoints {
			p.r.logf("profiling: stopping on %s", p.hostPort(ep))
			if err := p.post(ctx, p.hostPort(ep)+stopPath, "{}"); err != nil {
				p.r.logf("Warning: profiling: %v", err)
			}
		}
	}
	p.r.logf("profiling: results in %s", p.outputDir)
}

func (p *profiling) hostPort(ep string) string {
	if strings.Contains(ep, ":") {
		return ep
	}
	return ep + ":" + p.port
}

func (p *profiling) post(ctx context.Context, hostPath, body string) error {
	ctx, cancel := context.WithTimeout(ctx, profileRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+hostPath, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.r.o.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("http://%s: HTTP %d: %s", hostPath, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}
