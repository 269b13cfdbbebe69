package benchargs

import (
	"strconv"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// Workers are the plan's engine processes as the benchmark's metrics
// scrapers (AIPERF_SERVER_METRICS_URLS) and the profiler's triggers
// address them.
type Workers struct {
	Processes []plan.Process
	Frontend  string // the frontend type: "dynamo" when the recipe names none
	// KVBMPort is DYN_KVBM_METRICS_PORT of the recipe's prefill
	// environment, else of its aggregated one; "" when neither sets it.
	KVBMPort string
}

// Endpoint is a logical worker: its role, its node and the port its
// metrics are served on.
type Endpoint struct {
	Role       plan.Role
	Node, Port int
}

// LogicalEndpoints are the worker leaders in launch order with the port
// their metrics are served on: Dynamo's system port, the public port of a
// direct vLLM serve, else the worker's HTTP port (srtctl's
// _logical_worker_endpoints; followers are not endpoints).
func (w Workers) LogicalEndpoints() []Endpoint {
	var out []Endpoint
	for _, p := range w.Processes {
		if p.Rank != 0 || (p.Role != plan.RolePrefill && p.Role != plan.RoleDecode && p.Role != plan.RoleAgg) {
			continue
		}
		var port int
		switch w.Frontend {
		case "dynamo":
			port = p.Ports["system"]
		case "vllm":
			port = plan.PortPublicFrontend
		default:
			port = p.Ports["http"]
		}
		if port > 0 {
			out = append(out, Endpoint{p.Role, p.Nodes[0], port})
		}
	}
	return out
}

// MetricsURLs is AIPERF_SERVER_METRICS_URLS for a custom command: every
// logical worker's /metrics, plus the KVBM metrics port of prefill and
// aggregated leaders when the recipe sets DYN_KVBM_METRICS_PORT; in order,
// each once.
func (w Workers) MetricsURLs() []string {
	if w.Frontend == "trtllm_serve" {
		return w.trtllmServeMetricsURLs()
	}
	var urls []string
	seen := map[string]bool{}
	add := func(node, port string) {
		u := "http://" + node + ":" + port + "/metrics"
		if !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	for _, e := range w.LogicalEndpoints() {
		add(plan.IPPlaceholder(e.Node), strconv.Itoa(e.Port))
	}
	if kvbm := w.KVBMPort; kvbm != "" {
		for _, p := range w.Processes {
			if p.Rank == 0 && (p.Role == plan.RolePrefill || p.Role == plan.RoleAgg) {
				add(plan.IPPlaceholder(p.Nodes[0]), kvbm)
			}
		}
	}
	return urls
}

// AIPerfMetricsURLs is AIPERF_SERVER_METRICS_URLS for srtctl's
// AIPerf runners (_get_aiperf_server_metrics_env without the logical-worker
// view): a direct vLLM serve's public port on each agg leader; else every
// engine process's Dynamo system port, followers included; plus the KVBM
// metrics port of prefill and agg leaders; each once, sorted.
func (w Workers) AIPerfMetricsURLs() []string {
	set := map[string]bool{}
	workers := func(f func(p plan.Process)) {
		for _, p := range w.Processes {
			if p.Role == plan.RolePrefill || p.Role == plan.RoleDecode || p.Role == plan.RoleAgg {
				f(p)
			}
		}
	}
	if w.Frontend == "vllm" || w.Frontend == schema2.FrontendSGLangDirect {
		workers(func(p plan.Process) {
			if p.Role == plan.RoleAgg && p.Rank == 0 {
				set["http://"+plan.IPPlaceholder(p.Nodes[0])+":"+strconv.Itoa(plan.PortPublicFrontend)+"/metrics"] = true
			}
		})
		if len(set) > 0 {
			return profile.SortedKeys(set)
		}
	}
	workers(func(p plan.Process) {
		if sys := p.Ports["system"]; sys > 0 {
			set["http://"+plan.IPPlaceholder(p.Nodes[0])+":"+strconv.Itoa(sys)+"/metrics"] = true
		}
	})
	if kvbm := w.KVBMPort; kvbm != "" {
		workers(func(p plan.Process) {
			if p.Rank == 0 && (p.Role == plan.RolePrefill || p.Role == plan.RoleAgg) {
				set["http://"+plan.IPPlaceholder(p.Nodes[0])+":"+kvbm+"/metrics"] = true
			}
		})
	}
	return profile.SortedKeys(set)
}

// trtllmServeMetricsURLs is AIPERF_SERVER_METRICS_URLS for a custom
// benchmark (worker_metrics_port and metrics_path): every prefill and
// decode leader's /prometheus/metrics on its HTTP port, where trtllm-serve
// serves Prometheus text (its /metrics is JSON iteration statistics); an
// aggregated worker is left out, as srtctl leaves it.
func (w Workers) trtllmServeMetricsURLs() []string {
	var urls []string
	for _, e := range w.LogicalEndpoints() {
		if e.Role == plan.RoleAgg {
			continue
		}
		urls = append(urls, "http://"+plan.IPPlaceholder(e.Node)+":"+strconv.Itoa(e.Port)+"/prometheus/metrics")
	}
	return urls
}
