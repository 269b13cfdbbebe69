package infra

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
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
	conf, err := b.serYAML(urls(prefill), urls(decode), portPublicFrontend)
	if err != nil {
		return err
	}

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

// serYAML is ser.yaml as srtctl writes it (_build_ser, then
// yaml.safe_dump with keys in insertion order): each server list with its
// count, and frontend.ctx_router / gen_router as its "router"; then the
// orchestrator's own address; then frontend.server_config_extra over the
// top level (Python's dict.update: a key already there keeps its place).
// The addresses hold {ip:N} placeholders the driver fills in; written
// plain, as PyYAML writes "a.b.c.d:port".
func (b *builder) serYAML(ctx, gen []string, port int) (string, error) {
	fe := b.Recipe().Frontend
	servers := func(urls []string, router *recipe.Raw, field string) (*yaml.Node, error) {
		list := &yaml.Node{Kind: yaml.SequenceNode}
		for _, u := range urls {
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: u})
		}
		m := serMap("num_instances", serInt(len(urls)), "urls", list)
		if router != nil && router.Node != nil && router.Node.Tag != "!!null" {
			r, err := b.serMapping(router, field)
			if err != nil {
				return nil, err
			}
			if len(r.Content) > 0 { // srtctl skips an empty mapping (falsy)
				m.Content = append(m.Content, serStr("router"), r)
			}
		}
		return m, nil
	}
	c, err := servers(ctx, fe.CtxRouter, "frontend.ctx_router")
	if err != nil {
		return "", err
	}
	g, err := servers(gen, fe.GenRouter, "frontend.gen_router")
	if err != nil {
		return "", err
	}
	doc := serMap("context_servers", c, "generation_servers", g, "hostname", serStr("0.0.0.0"), "port", serInt(port))
	if x := fe.ServerConfigExtra; x != nil && x.Node != nil && x.Node.Tag != "!!null" {
		extra, err := b.serMapping(x, "frontend.server_config_extra")
		if err != nil {
			return "", err
		}
	keys:
		for i := 0; i+1 < len(extra.Content); i += 2 {
			for j := 0; j+1 < len(doc.Content); j += 2 {
				if doc.Content[j].Value == extra.Content[i].Value {
					doc.Content[j+1] = extra.Content[i+1]
					continue keys
				}
			}
			doc.Content = append(doc.Content, extra.Content[i], extra.Content[i+1])
		}
	}
	text, err := engine.EncodePyYAML(doc)
	if err != nil {
		return "", b.Fail("frontend.type", "writing ser.yaml: %v", err)
	}
	// yaml.v3 quotes a string that opens with '{'; the driver's
	// substitution leaves a.b.c.d:port, which PyYAML writes plain.
	return serPlaceholder.ReplaceAllString(text, "$1"), nil
}

// serPlaceholder is a quoted worker address of ser.yaml.
var serPlaceholder = regexp.MustCompile(`'(\{ip:[0-9]+\}:[0-9]+)'`)

// serMapping is a recipe mapping (srtctl's dict(...) of it) as written back.
func (b *builder) serMapping(r *recipe.Raw, field string) (*yaml.Node, error) {
	n := engine.PyYAMLCopy(r.Node)
	if n.Kind != yaml.MappingNode {
		return nil, b.Fail(field, "a mapping, as srtctl's dict(...) of it needs, not %s", strings.TrimPrefix(n.Tag, "!!"))
	}
	return n, nil
}

func serStr(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
func serInt(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

// serMap is a mapping of key, value pairs in order.
func serMap(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, serStr(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}
