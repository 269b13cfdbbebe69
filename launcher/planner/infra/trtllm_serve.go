package infra

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// trtllmServeOrchestrator is the disaggregated orchestrator's step: srtctl
// names its srun step trtllm_serve_orchestrator and its log
// {node}_frontend_0.out, the Dynamo frontend's pattern, so tools that
// collect frontend logs treat both alike.
const trtllmServeOrchestrator = "frontend_0"

// addTRTLLMServe places frontend.type: trtllm_serve as srtctl does
// (src/srtctl/frontends/trtllm_serve.py@3c0b8d46, start_frontends): one
// public endpoint on the frontend node at the public port, never nginx.
//
// Aggregated, the one trtllm-serve worker binds the public port itself
// (the engine gave it that port) and no frontend process starts.
//
// Disaggregated, `trtllm-serve disaggregated --config /logs/ser.yaml`
// starts once every prefill and decode leader answers GET /health with 200
// (srtctl waits on each in turn with the health check's attempts and
// interval, and fails the job when one does not come up): ser.yaml lists
// the prefill leaders as context_servers and the decode leaders as
// generation_servers, by address and HTTP port, and binds 0.0.0.0 at the
// public port.
//
// The planner has held the recipe to srtctl's load-time rules
// (planner.checkTRTLLMServe); the count of aggregated workers is checked
// again here, on the processes laid out.
func (b *builder) addTRTLLMServe(head int) error {
	pl, r := b.Plan(), b.Recipe()
	node, err := b.PlacedNode(r.Frontend.OrchestratorPlacement, "frontend.orchestrator_placement")
	if err != nil {
		return err
	}
	var prefill, decode, agg []int // process indices of endpoint leaders
	for i, p := range pl.Processes {
		if p.Rank != 0 {
			continue
		}
		switch p.Role {
		case plan.RolePrefill:
			prefill = append(prefill, i)
		case plan.RoleDecode:
			decode = append(decode, i)
		case plan.RoleAgg:
			agg = append(agg, i)
		}
	}
	if pl.Mode != "disaggregated" {
		if len(agg) != 1 {
			return b.Fail("resources.agg_workers", "trtllm_serve aggregate mode requires exactly one aggregated worker, whose trtllm-serve is the public endpoint (got %d)", len(agg))
		}
		if leader := pl.Processes[agg[0]].Nodes[0]; leader != node {
			// srtctl sends the health check and the clients to the
			// frontend node, where nothing would listen.
			return b.Fail("frontend.orchestrator_placement", "places the endpoint on node %d, but the aggregated trtllm-serve worker serves on node %d", node, leader)
		}
		b.SetAPINode(node)
		return nil
	}
	if len(prefill) == 0 || len(decode) == 0 {
		return b.Fail("frontend.type", "trtllm_serve requires disaggregated prefill and decode workers (got %d prefill, %d decode)", len(prefill), len(decode))
	}
	var after []string
	urls := func(idx []int) []string {
		var out []string
		for _, i := range idx {
			p := &pl.Processes[i]
			port := p.Ports["http"]
			// The driver polls it with the health check's attempts and
			// interval, as srtctl's wait_for_health.
			p.Ready = &plan.Probe{Node: p.Nodes[0], Port: port, Path: "/health", Status: 200}
			after = append(after, p.Name)
			out = append(out, plan.IPPlaceholder(p.Nodes[0])+":"+strconv.Itoa(port))
		}
		return out
	}
	ctx, gen := urls(prefill), urls(decode)
	conf := serYAML(ctx, gen, portPublicFrontend)

	env := r.Frontend.Env.Strings()
	for k, v := range b.Profile().Env.Set {
		env[k] = v
	}
	argv := append([]string{"trtllm-serve", "disaggregated", "--config", "/logs/ser.yaml"}, b.frontendArgs()...)
	b.SetAPINode(node)
	b.Add(plan.Process{
		Name: trtllmServeOrchestrator, Role: plan.RoleFrontend, Nodes: []int{node}, Container: true, Mounts: b.engineMounts(),
		Env: env, Argv: argv, Files: map[string]string{filepath.Join(pl.Layout.Logs, "ser.yaml"): conf},
		Ports: map[string]int{"http": portPublicFrontend}, Log: b.LogPath(trtllmServeOrchestrator), Critical: true,
		After: after,
		// tensorrt_llm needs an MPI launcher even for the single-rank
		// orchestrator (srtctl: the Dynamo frontend's reason too).
		Srun: plan.SrunOptions{MPI: "pmix"},
	})
	return nil
}

// serYAML is ser.yaml as srtctl writes it (yaml.safe_dump, keys in
// insertion order): the server lists with their counts, then the
// orchestrator's own address. The addresses hold {ip:N} placeholders the
// driver fills in; "a.b.c.d:port" is a plain scalar to PyYAML, as written.
func serYAML(ctx, gen []string, port int) string {
	var s strings.Builder
	list := func(key string, urls []string) {
		fmt.Fprintf(&s, "%s:\n  num_instances: %d\n  urls:\n", key, len(urls))
		for _, u := range urls {
			fmt.Fprintf(&s, "  - %s\n", u)
		}
	}
	list("context_servers", ctx)
	list("generation_servers", gen)
	fmt.Fprintf(&s, "hostname: 0.0.0.0\nport: %d\n", port)
	return s.String()
}
