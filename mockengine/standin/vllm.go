package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// vllmServeFlags are the `vllm serve` options the stand-in knows: what
// srtctl's direct-worker branch passes (launcher/planner/engine/vllm_router.go
// routed: host, port, the data-parallel and multi-node placement,
// --headless, --device-ids) and every engine argument InferenceX's and
// srt-slurm's vLLM recipes set (the reference corpora the tests read, the
// Dynamo-only dyn-* and router-* keys left out); a recipe's true
// boolean is a switch. vLLM's parser knows many more; the stand-in refuses
// what it has not been taught, so a recipe needing another one is taught
// here first.
var vllmServeFlags = flagSpec{
	"--all2all-backend": 1, "--api-server-count": 1, "--async-scheduling": 0,
	"--attention-backend": 1, "--attention-config": 1, "--block-size": 1, "--compilation-config": 1,
	"--cp-kv-cache-interleave-size": 1, "--cpu-offload-gb": 1, "--cudagraph-metrics": 0,
	"--data-parallel-address": 1, "--data-parallel-hybrid-lb": 0, "--data-parallel-rpc-port": 1,
	"--data-parallel-size": 1, "--data-parallel-size-local": 1, "--data-parallel-start-rank": 1,
	"--dbo-decode-token-threshold": 1, "--dcp-comm-backend": 1, "--decode-context-parallel-size": 1,
	"--default-chat-template-kwargs": 1, "--device-ids": 1, "--disable-custom-all-reduce": 0,
	"--disable-log-requests": 0, "--disable-uvicorn-access-log": 0, "--enable-auto-tool-choice": 0,
	"--enable-chunked-prefill": 0, "--enable-cumem-allocator": 0, "--enable-dbo": 0,
	"--enable-ep-weight-filter": 0, "--enable-eplb": 0, "--enable-expert-parallel": 0,
	"--enable-flashinfer-autotune": 0, "--enable-logging-iteration-details": 0,
	"--enable-prefix-caching": 0, "--enable-prompt-tokens-details": 0, "--enable-sleep-mode": 0,
	"--enforce-eager": 0, "--engram-config": 1, "--eplb-config": 1, "--gpu-memory-utilization": 1,
	"--headless": 0, "--hf-overrides": 1, "--host": 1, "--kda-prefill-backend": 1,
	"--kernel-config": 1, "--kv-cache-dtype": 1, "--kv-cache-memory": 1, "--kv-cache-memory-bytes": 1,
	"--kv-cache-metrics": 0, "--kv-events-config": 1, "--kv-transfer-config": 1,
	"--language-model-only": 0, "--linear-backend": 1, "--load-format": 1,
	"--long-prefill-token-threshold": 1, "--mamba-ssm-cache-dtype": 1, "--master-addr": 1,
	"--max-cudagraph-capture-size": 1, "--max-model-len": 1, "--max-num-batched-tokens": 1,
	"--max-num-seqs": 1, "--moe-backend": 1, "--nnodes": 1, "--no-async-scheduling": 0,
	"--no-disable-hybrid-kv-cache-manager": 0, "--no-enable-chunked-prefill": 0,
	"--no-enable-flashinfer-autotune": 0, "--no-enable-prefix-caching": 0, "--node-rank": 1,
	"--numa-bind": 0, "--numa-bind-nodes": 1, "--offload-group-size": 1, "--offload-num-in-group": 1,
	"--offload-prefetch-step": 1, "--pipeline-parallel-size": 1, "--port": 1,
	"--prefill-schedule-interval": 1, "--prefix-match-unit": 1, "--reasoning-parser": 1,
	"--safetensors-load-strategy": 1, "--scheduler-cls": 1, "--served-model-name": 1,
	"--speculative-config": 1, "--stream-interval": 1, "--tensor-parallel-size": 1,
	"--tokenizer-mode": 1, "--tool-call-parser": 1, "--trust-remote-code": 0,
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

// vllmRouterFlags are vllm-router's options (vllm-project/router
// src/main.rs@03e9af5c, CliArgs: a bool is a switch, a Vec with
// num_args 0.. takes the values up to the next flag, --decode one value
// each time). --prefill is not among them: main.rs splits it out first, a
// URL then an optional port (or "none").
var vllmRouterFlags = flagSpec{
	"--host": 1, "--port": 1, "--worker-urls": -1, "--policy": 1, "--vllm-pd-disaggregation": 0,
	"--vllm-discovery-address": 1, "--decode": 1, "--prefill-policy": 1, "--decode-policy": 1,
	"--worker-startup-timeout-secs": 1, "--worker-startup-check-interval": 1, "--cache-threshold": 1,
	"--balance-abs-threshold": 1, "--balance-rel-threshold": 1, "--eviction-interval": 1,
	"--max-tree-size": 1, "--max-payload-size": 1, "--intra-node-data-parallel-size": 1,
	"--api-key": 1, "--api-key-validation-urls": -1, "--backend": 1, "--runtime": 1, "--log-dir": 1,
	"--log-level": 1, "--enable-trace": 0, "--otlp-traces-endpoint": 1, "--otel-sampling-ratio": 1,
	"--otel-excluded-paths": -1, "--service-discovery": 0, "--selector": -1,
	"--service-discovery-port": 1, "--service-discovery-namespace": 1, "--prefill-selector": -1,
	"--decode-selector": -1, "--prometheus-port": 1, "--prometheus-host": 1, "--request-id-headers": -1,
	"--request-timeout-secs": 1, "--max-concurrent-requests": 1, "--cors-allowed-origins": -1,
	"--retry-max-retries": 1, "--retry-initial-backoff-ms": 1, "--retry-max-backoff-ms": 1,
	"--retry-backoff-multiplier": 1, "--retry-jitter-factor": 1, "--disable-retries": 0,
	"--cb-failure-threshold": 1, "--cb-success-threshold": 1, "--cb-timeout-duration-secs": 1,
	"--cb-window-duration-secs": 1, "--disable-circuit-breaker": 0, "--health-failure-threshold": 1,
	"--health-success-threshold": 1, "--health-check-timeout-secs": 1, "--health-check-interval-secs": 1,
	"--health-check-endpoint": 1, "--enable-igw": 0, "--history-backend": 1, "--profile": 0,
	"--kv-connector": 1,
}

// routerPolicies are --policy's, --prefill-policy's and --decode-policy's
// choices (the same file's value_parser).
var routerPolicies = []string{"random", "round_robin", "cache_aware", "power_of_two", "consistent_hash", "sticky_least_loaded", "rendezvous_hash"}

// splitPrefill takes main.rs's --prefill URL [PORT|none] pairs out of args.
func splitPrefill(args []string) (urls, ports, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		if args[i] != "--prefill" {
			rest = append(rest, args[i])
			continue
		}
		if i+1 >= len(args) {
			return nil, nil, nil, usagef("--prefill requires a URL immediately after")
		}
		i++
		if strings.HasPrefix(args[i], "-") {
			return nil, nil, nil, usagef("Invalid url %s", args[i])
		}
		urls, ports = append(urls, args[i]), append(ports, "")
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			next := args[i+1]
			if strings.EqualFold(next, "none") {
				i++
			} else if n, err := strconv.ParseUint(next, 10, 16); err == nil {
				ports[len(ports)-1] = strconv.FormatUint(n, 10)
				i++
			}
		}
	}
	return urls, ports, rest, nil
}

// vllmRouter is `vllm-router`: P/D with --vllm-pd-disaggregation, the
// prefill and decode workers given; else the --worker-urls, each request
// going whole to one of them. GET /workers reports them as the real
// router does; it serves once every worker answers /health.
func vllmRouter(ctx context.Context, o Options) error {
	prefill, ports, rest, err := splitPrefill(o.Args)
	if err != nil {
		return err
	}
	got, err := parseFlags(rest, vllmRouterFlags, nil)
	if err != nil {
		return err
	}
	for _, f := range []string{"--policy", "--prefill-policy", "--decode-policy"} {
		if v := last(got, f); v != "" && !slices.Contains(routerPolicies, v) {
			return usagef("invalid value '%s' for '%s' (possible values: %s)", v, f, strings.Join(routerPolicies, ", "))
		}
	}
	for _, f := range []string{"--vllm-discovery-address", "--service-discovery", "--enable-igw", "--api-key-validation-urls"} {
		if _, set := got[f]; set {
			return usagef("%s: the stand-in routes only to the workers on its command line", f)
		}
	}
	r := &pdRouter{name: "vllm-router", log: o.Log, workersAPI: true}
	if _, pd := got["--vllm-pd-disaggregation"]; pd {
		r.prefill, r.bootstrap, r.decode = prefill, ports, got["--decode"]
		if len(r.prefill) == 0 || len(r.decode) == 0 {
			return usagef("--vllm-pd-disaggregation needs --prefill and --decode workers")
		}
	} else {
		if len(prefill) > 0 || len(got["--decode"]) > 0 {
			return usagef("--prefill and --decode need --vllm-pd-disaggregation")
		}
		r.decode = got["--worker-urls"]
		if len(r.decode) == 0 {
			return usagef("no workers: give --worker-urls, or --vllm-pd-disaggregation with --prefill and --decode")
		}
	}
	host, port := last(got, "--host"), last(got, "--port")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "30000"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return usagef("invalid value '%s' for '--port'", port)
	}
	timeout := 600
	if t := last(got, "--worker-startup-timeout-secs"); t != "" {
		if timeout, err = strconv.Atoi(t); err != nil {
			return usagef("invalid value '%s' for '--worker-startup-timeout-secs'", t)
		}
	}
	return r.run(ctx, net.JoinHostPort(host, port), timeout)
}
