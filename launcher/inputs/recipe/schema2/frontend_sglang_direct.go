package schema2

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// FrontendSGLangDirect is the frontend kind the normalizer writes for
// schema 2's `frontend.type: sglang`: srt-slurm's router-free direct SGLang
// frontend, where the one aggregated `sglang.launch_server` is the OpenAI
// endpoint itself and no router process starts
// (src/srtctl/frontends/sglang_direct.py@d376d8e4 and @2166ef58,
// registered as "sglang" in frontends/__init__.py@5bb04678). The v1-shaped
// document keeps "sglang" for what v1 meant by it, the SGLang router
// (schema 2's "sglang-router", docs/legacy-v1.md@17c4ece9), so the direct
// frontend needs a name of its own that no schema-1 recipe spells.
const FrontendSGLangDirect = "sglang-direct"

// sglangDirectRule cites where srt-slurm states the rules below.
const sglangDirectRule = "srt-slurm's direct SGLang frontend, frontends/sglang_direct.py@d376d8e4"

// checkSGLangDirect holds a direct-SGLang recipe to what srtctl's
// SGLangFrontend accepts, on the document the engine and roles steps have
// already moved into the v1 fields (each key at the line the recipe wrote
// it, its spelling in n.spelling): its required_backend is sglang (the
// pairing srtctl's schema checks at load, tests/test_frontends.py, the 2.x version in the code index,
// test_schema_enforces_required_backend_generically; slurmbench's own mock
// engine stands in for it, serving /health and /v1/models standalone as
// sglang.launch_server does); validate() refuses
// enable_multiple_frontends — srtctl's default is true (FrontendConfig,
// docs/schema-reference.md@1c3080ec), so the recipe must say false — a
// prefill/decode layout, and any number of aggregated workers but one
// (replicas would collide on the one public port with nothing to balance
// them). dynamo.sidecar, its last refusal, is refused earlier by Keys. Each
// is srtctl's own refusal (SrtctlRefuses), named as the recipe wrote it.
func (n *v2Normalizer) checkSGLangDirect(fe, typeKey *yaml.Node) error {
	refuse := func(line int, field, format string, args ...any) error {
		return &Error{Kind: SrtctlRefuses, Err: yamltree.Error{File: n.path, Line: line, Field: n.spelling.Of(field),
			Msg: "srt-slurm refuses it too: " + fmt.Sprintf(format, args...) + " (" + sglangDirectRule + ")"}}
	}
	backend := deAlias(mapGet(n.doc, "backend"))
	if k, t := mapKeyValue(backend, "type"); t != nil {
		if bt := deAlias(t).Value; bt != "sglang" && bt != "mock" {
			return refuse(k.Line, "backend.type", "the direct SGLang frontend requires engine sglang, got %q", bt)
		}
	}
	mk, mv := mapKeyValue(fe, "enable_multiple_frontends")
	if mv == nil {
		return refuse(typeKey.Line, "frontend.type", "the direct SGLang frontend binds sglang.launch_server to the public port, with no nginx or routers, and enable_multiple_frontends defaults to true; set frontend.enable_multiple_frontends: false")
	}
	if multiple, ok := yamltree.Bool(deAlias(mv)); !ok || multiple {
		return refuse(mk.Line, "frontend.enable_multiple_frontends", "the direct SGLang frontend binds sglang.launch_server to the public port, with no nginx or routers; set it to false")
	}
	res := deAlias(mapGet(n.doc, "resources"))
	for _, key := range []string{"prefill_nodes", "decode_nodes", "prefill_workers", "decode_workers"} {
		if k, _ := mapKeyValue(res, key); k != nil {
			return refuse(typeKey.Line, "frontend.type", "the direct SGLang frontend serves one aggregated worker only, not a prefill/decode layout (%s at line %d); the SGLang router is frontend.type: sglang-router", n.spelling.Of("resources."+key), k.Line)
		}
	}
	if k, v := mapKeyValue(res, "agg_workers"); v != nil && deAlias(v).Value != "1" {
		return refuse(k.Line, "resources.agg_workers", "the direct SGLang frontend serves exactly one aggregated worker, got %s: sglang.launch_server owns the public port and no router balances replicas (use frontend.type: sglang-router or dynamo)", deAlias(v).Value)
	}
	return nil
}
