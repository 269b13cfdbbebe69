package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// vllmServeFlags are the `vllm serve` options srtctl's direct-worker
// branch passes (launcher/planner/engine/vllm_router.go routed) and the
// engine arguments a router recipe's vllm_config sets in the sample
// recipes; a switch takes no value, everything else one. vLLM's parser
// knows many more; the stand-in refuses what it has not been taught, so a
// recipe needing another one is taught here first.
var vllmServeFlags = flagSpec{
	"--host": 1, "--port": 1, "--served-model-name": 1, "--kv-transfer-config": 1,
	"--tensor-parallel-size": 1, "--pipeline-parallel-size": 1, "--data-parallel-size": 1,
	"--data-parallel-size-local": 1, "--data-parallel-start-rank": 1, "--data-parallel-address": 1,
	"--data-parallel-rpc-port": 1, "--data-parallel-hybrid-lb": 0, "--enable-expert-parallel": 0,
	"--master-addr": 1, "--nnodes": 1, "--node-rank": 1, "--headless": 0, "--device-ids": 1,
	"--max-num-seqs": 1, "--max-model-len": 1, "--max-num-batched-tokens": 1,
	"--gpu-memory-utilization": 1, "--trust-remote-code": 0, "--enforce-eager": 0,
	"--block-size": 1, "--kv-cache-dtype": 1, "--no-enable-prefix-caching": 0,
	"--enable-prefix-caching": 0, "--api-server-count": 1, "--disable-log-requests": 0,
	"--compilation-config": 1, "--async-scheduling": 0,
}

// vllmServe is `vllm serve MODEL ...`: the leader (and each node of a
// router-local DP endpoint) serves the OpenAI API on --host:--port; a
// --headless rank serves nothing and runs until the step ends.
func vllmServe(ctx context.Context, o Options) error {
	if len(o.Args) == 0 || o.Args[0] != "serve" {
		return usagef("want `vllm serve MODEL [options]`, got %q", o.Args)
	}
	var model string
	got, err := parseFlags(o.Args[1:], vllmServeFlags, func(a string) error {
		if model != "" {
			return usagef("unrecognized arguments: %s", a)
		}
		model = a
		return nil
	})
	if err != nil {
		return err
	}
	if model == "" {
		return usagef("the model is required")
	}
	if kv := last(got, "--kv-transfer-config"); kv != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(kv), &m); err != nil {
			return usagef("--kv-transfer-config: not a JSON object: %v", err)
		}
	}
	if _, headless := got["--headless"]; headless {
		fmt.Fprintf(o.Log, "vllm serve (stand-in): headless rank %s of %s\n", last(got, "--node-rank"), last(got, "--nnodes"))
		<-ctx.Done()
		return nil
	}
	host, port := last(got, "--host"), last(got, "--port")
	if port == "" {
		port = "8000"
	}
	if _, err := strconv.Atoi(port); err != nil {
		return usagef("--port: invalid int value: %q", port)
	}
	name := last(got, "--served-model-name")
	if name == "" {
		name = model
	}
	opts, err := engineOptions(o, name)
	if err != nil {
		return err
	}
	return serveEngine(ctx, opts, net.JoinHostPort(host, port))
}

// vllmRouterFlags are the vllm-router options our planner passes
// (launcher/planner/infra/vllm_router.go addVLLMRouter): the workers, the
// bind address, the managed startup options, and the frontend.args the
// sample recipes set. --prefill takes a URL and, optionally, its bootstrap
// port; --worker-urls every URL up to the next flag.
var vllmRouterFlags = flagSpec{
	"--vllm-pd-disaggregation": 0, "--prefill": -1, "--decode": 1, "--worker-urls": -1,
	"--host": 1, "--port": 1, "--intra-node-data-parallel-size": 1, "--worker-startup-timeout-secs": 1,
	"--policy": 1, "--prefill-policy": 1, "--decode-policy": 1, "--request-timeout-secs": 1,
	"--log-level": 1, "--max-concurrent-requests": 1,
}

// vllmRouter is `vllm-router`: P/D with --vllm-pd-disaggregation, the
// prefill and decode workers given; else the --worker-urls, each request
// going whole to one of them. GET /workers reports them as the real
// router does; it serves once every worker answers /health.
func vllmRouter(ctx context.Context, o Options) error {
	got, err := parseFlags(o.Args, vllmRouterFlags, nil)
	if err != nil {
		return err
	}
	r := &pdRouter{name: "vllm-router", log: o.Log, workersAPI: true}
	_, pd := got["--vllm-pd-disaggregation"]
	switch {
	case pd:
		if len(got["--worker-urls"]) > 0 {
			return usagef("--worker-urls cannot be combined with --vllm-pd-disaggregation")
		}
		// --prefill's values come flattened: a URL, then a port when the
		// next value is not a URL.
		vals := got["--prefill"]
		for i := 0; i < len(vals); i++ {
			if !strings.HasPrefix(vals[i], "http://") && !strings.HasPrefix(vals[i], "https://") {
				return usagef("--prefill: %q is not a worker URL", vals[i])
			}
			r.prefill, r.bootstrap = append(r.prefill, vals[i]), append(r.bootstrap, "")
			if i+1 < len(vals) && !strings.Contains(vals[i+1], "://") {
				if _, err := strconv.Atoi(vals[i+1]); err != nil {
					return usagef("--prefill %s: bootstrap port %q is not a number", vals[i], vals[i+1])
				}
				r.bootstrap[len(r.bootstrap)-1] = vals[i+1]
				i++
			}
		}
		r.decode = got["--decode"]
		if len(r.prefill) == 0 || len(r.decode) == 0 {
			return usagef("--vllm-pd-disaggregation needs --prefill and --decode workers")
		}
	default:
		if len(got["--prefill"]) > 0 || len(got["--decode"]) > 0 {
			return usagef("--prefill and --decode need --vllm-pd-disaggregation")
		}
		r.decode = got["--worker-urls"]
		if len(r.decode) == 0 {
			return usagef("no workers: give --worker-urls, or --vllm-pd-disaggregation with --prefill and --decode")
		}
	}
	host, port := last(got, "--host"), last(got, "--port")
	if host == "" || port == "" {
		return usagef("the stand-in needs --host and --port (srtctl always passes both)")
	}
	timeout := 600
	if t := last(got, "--worker-startup-timeout-secs"); t != "" {
		if timeout, err = strconv.Atoi(t); err != nil {
			return usagef("--worker-startup-timeout-secs: %q is not a number", t)
		}
	}
	return r.run(ctx, net.JoinHostPort(host, port), timeout)
}
