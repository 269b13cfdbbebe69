package schema2

import (
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree/yamltreetest"
)

// TestNormalizeFrontendTypes: schema 2's frontend.type words land on the
// v1-shaped kinds the reader plans (docs/legacy-v1.md@17c4ece9's table):
// "sglang-router" is v1's "sglang" (the router) and schema 2's own
// "sglang", the router-free direct server, gets a kind of its own, at the
// line the recipe wrote it.
func TestNormalizeFrontendTypes(t *testing.T) {
	for _, c := range []struct{ written, want string }{
		{"sglang", FrontendSGLangDirect},
		{"sglang-router", "sglang"},
		{"dynamo", "dynamo"},
		{"vllm", "vllm"},
	} {
		t.Run(c.written, func(t *testing.T) {
			doc, _, _, err := Normalize("r.yaml", yamltreetest.Parse(t, "schema: 2\nname: x\nfrontend:\n  enable_multiple_frontends: false\n  type: "+c.written+"\n"), noKeyCheck)
			if err != nil {
				t.Fatal(err)
			}
			if got := at(doc, "frontend.type"); got != c.want {
				t.Errorf("frontend.type %q normalized to %q, want %q", c.written, got, c.want)
			}
			if k, _ := yamltree.KeyValue(yamltree.Get(doc, "frontend"), "type"); k == nil || k.Line != 5 {
				t.Errorf("frontend.type key line %v, want 5 (where the recipe wrote it)", k)
			}
		})
	}
}
