package planner

import "github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"

// sglangDirect reports schema 2's router-free `frontend.type: sglang`
// (schema2.FrontendSGLangDirect): the one aggregated sglang.launch_server
// is the endpoint; no router, nginx, NATS or etcd runs
// (src/srtctl/frontends/sglang_direct.py@d376d8e4).
func (b *builder) sglangDirect() bool { return b.frontendType() == schema2.FrontendSGLangDirect }

// dynamoWorkerEnv reports whether workers get Dynamo's runtime environment
// (DYN_SYSTEM_PORT, DYN_REQUEST_PLANE, DYN_LOG, …). srtctl sets it only for
// a frontend whose workers are Dynamo processes (worker_launch "dynamo",
// cli/mixins/worker_stage.py@033b6209 _worker_environment_defaults); a
// direct SGLang server is not one, and gets HEAD_NODE_IP alone. The SGLang
// router keeps the environment it had (schema 1's rule, which the router's
// parity tests hold).
func (b *builder) dynamoWorkerEnv() bool { return !b.sglangDirect() }

// srtctlFrontendType is frontend.type as srtctl names it to the
// benchmark's scripts (SRTCTL_FRONTEND_TYPE): the recipe's own word, so a
// direct SGLang server is "sglang" there, as its schema-2 recipe says
// (and srtctl-bench's profiling, which reads it, sends SGLang's
// /start_profile to the worker).
func (b *builder) srtctlFrontendType() string {
	if b.sglangDirect() {
		return "sglang"
	}
	return b.frontendType()
}
