package recipe

import (
	"strings"
	"testing"
)

// TestVLLMRouterFrontendRead: frontend.type vllm-router is read as
// written in both layouts (schema 2 normalizes other router names, not
// this one), and a misspelling stays refused naming the field.
func TestVLLMRouterFrontendRead(t *testing.T) {
	const v1 = `name: t
model: {path: dsr1, container: img, precision: fp4}
resources: {gpu_type: b200, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}
backend: {type: vllm}
benchmark: {type: sa-bench, isl: 1, osl: 1, concurrencies: [1]}
`
	cases := []struct {
		name, text, want, err string
	}{
		{"schema 2", v2Base + "engine: vllm\nroles:\n  agg: {nodes: 1, workers: 1}\nfrontend: {type: vllm-router}\n", "vllm-router", ""},
		{"schema 2 with args", v2Base + "engine: vllm\nroles:\n  agg: {nodes: 1, workers: 1}\nfrontend: {type: vllm-router, args: {policy: consistent_hash}}\n", "vllm-router", ""},
		{"v1", v1 + "frontend: {type: vllm-router}\n", "vllm-router", ""},
		{"v1 misspelt", v1 + "frontend: {type: vllm_router}\n", "", "frontend.type"},
		{"schema 2 misspelt", v2Base + "engine: vllm\nroles:\n  agg: {nodes: 1, workers: 1}\nfrontend: {type: vllm-routers}\n", "", "frontend.type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := parse(t, c.text)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Frontend.Type != c.want {
				t.Errorf("frontend.type %q, want %q", r.Frontend.Type, c.want)
			}
		})
	}
}
