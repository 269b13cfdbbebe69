package engine

import (
	"strconv"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// sglangDirect reports schema 2's router-free `frontend.type: sglang`,
// whose frontend is the worker itself (srtctl's worker_launch "direct",
// src/srtctl/frontends/sglang_direct.py@d376d8e4).
func sglangDirect(b Builder) bool { return b.FrontendType() == schema2.FrontendSGLangDirect }

// bindPublicPort gives a direct-SGLang worker the public port: srtctl's
// SGLangFrontend answers worker_api_port "public" for every mode, so the
// worker's --port is the job's frontend port, not its allocated HTTP port;
// the leader serves there (worker_endpoint_port and worker_metrics_port
// are the frontend port on the aggregated leader, None on followers,
// tests/test_frontends.py test_worker_port_contract), and a follower rank,
// which serves no HTTP, is passed the same port. Nothing to do for other
// frontends.
func bindPublicPort(b Builder, w *Worker, proc *plan.Process) {
	if !sglangDirect(b) {
		return
	}
	w.HTTPPort = plan.PortPublicFrontend
	if w.Rank == 0 {
		proc.Ports["http"] = plan.PortPublicFrontend
	}
}

// mockDirectArgv is slurmbench's mock engine standing in for a direct
// sglang.launch_server: the leader a plain OpenAI server (standalone mode:
// /health, then /v1/models listing the model) on the public port,
// registering with no frontend since none runs; nil for a follower rank,
// which keeps the mock's follower launch.
func mockDirectArgv(b Builder, w *Worker, flags []string) []string {
	if w.Rank > 0 {
		return nil
	}
	return append([]string{b.Plan().Binary, "mock-engine", "--mode", "standalone",
		"--listen", "0.0.0.0:" + strconv.Itoa(w.HTTPPort), "--model", b.Plan().Model.ServedName}, flags...)
}
