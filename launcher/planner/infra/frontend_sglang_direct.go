package infra

import (
	"fmt"
	"slices"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// addSGLangDirect is schema 2's router-free `frontend.type: sglang`: srtctl
// starts no frontend process (SGLangFrontend.start_frontends returns none,
// src/srtctl/frontends/sglang_direct.py@d376d8e4) because the one
// aggregated sglang.launch_server binds the public port itself
// (worker_api_port "public"). The public endpoint is therefore the
// aggregated leader's node (direct_endpoint_nodes = agg_leader_nodes): the
// health gate, the benchmark and the eval all go there, at the public port
// the engine gave the leader. No nginx, no router, no NATS or etcd.
func (b *builder) addSGLangDirect() error {
	if b.Recipe().SchemaVersion < 2 {
		// Only the schema-2 normalizer writes this kind, after srtctl's
		// checks of it; a schema-1 "sglang" is the router.
		return b.Fail("frontend.type", "%q is not a schema-1 frontend type (schema 1's \"sglang\" is the SGLang router; the router-free direct server is schema 2's frontend.type: sglang)", schema2.FrontendSGLangDirect)
	}
	for _, p := range b.Plan().Processes {
		if p.Role == plan.RoleAgg && p.Rank == 0 && len(p.Nodes) > 0 {
			if p.Ports["http"] != portPublicFrontend {
				return b.Fail("frontend.type", "the direct SGLang server %s binds port %d, not the public port %d", p.Name, p.Ports["http"], portPublicFrontend)
			}
			b.SetAPINode(p.Nodes[0])
			b.warnUnusedFrontendFields()
			return nil
		}
	}
	return b.Fail("frontend.type", "frontend.type: sglang needs one aggregated worker to serve the endpoint; the plan has none")
}

// warnUnusedFrontendFields says in the plan that the frontend block's
// process settings do nothing here: with no frontend process srtctl reads
// neither its args, env nor placement (the endpoint is the worker's node),
// and drops them without a word; slurmbench drops them too, but says so.
func (b *builder) warnUnusedFrontendFields() {
	fe := b.Recipe().Frontend
	var set []string
	if len(fe.Args) > 0 {
		set = append(set, "frontend.args")
	}
	if len(fe.Env) > 0 {
		set = append(set, "frontend.env")
	}
	if fe.OrchestratorPlacement != "" || fe.DedicatedNode {
		set = append(set, "frontend.placement")
	}
	if len(set) == 0 {
		return
	}
	pl := b.Plan()
	pl.Recipe.Warnings = append(slices.Clip(pl.Recipe.Warnings), fmt.Sprintf("%s: %s ignored: the direct SGLang frontend starts no frontend process; the aggregated worker on node %d is the endpoint (as srtctl ignores them)",
		b.Recipe().Path, strings.Join(set, ", "), b.APINode()))
}
