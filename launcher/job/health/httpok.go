package health

import (
	"context"
	"net/http"
)

// HTTPOK is a server that is ready when GET /health answers 200, whatever
// the body (empty or not): trtllm-serve, the aggregated worker or the
// disaggregated orchestrator of srtctl's trtllm_serve frontend (srt-slurm
// src/srtctl/frontends/trtllm_serve.py@3c0b8d46 probe_ready, core/health.py
// probe_http_ok). Like Models it counts no workers: serving or not.
const HTTPOK Kind = "http-ok"

// countsWorkers reports whether the kind's answer counts prefill and
// decode workers (Dynamo, the routers) rather than only saying it serves.
func (k Kind) countsWorkers() bool { return k != Models && k != HTTPOK }

// probeHTTPOK is one HTTPOK poll: the status is all that counts.
func probeHTTPOK(ctx context.Context, c *http.Client, base string, s *Seen) error {
	if _, err := get(ctx, c, base+"/health", s); err != nil {
		return err
	}
	s.Detail = "serving (GET /health: 200)"
	return nil
}
