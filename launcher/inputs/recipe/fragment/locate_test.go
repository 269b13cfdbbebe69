package fragment

import (
	"testing"
)

// TestLocate: a bound recipe's field is found where it was written, by
// the composing order: the variant's section, base, the telemetry block,
// the lane's shared block; a field nobody wrote by its nearest written
// parent.
func TestLocate(t *testing.T) {
	const bundle = `base:
  frontend:
    type: sglang
  roles:
    prefill:
      nodes: 2
  benchmark:
    type: sa-bench
override_a:
  frontend:
    type: trtllm_serve
zip_override_z:
  roles:
    prefill:
      nodes: [1, 2]
`
	const single = `frontend:
  type: vllm-router
services:
  - name: x
`
	const shared = `benchmark:
  type: custom
  env:
    ISL: "1"
health_check:
  max_attempts: 9
`
	const telemetry = `telemetry:
  enabled: true
  dcgm_exporter:
    container_image: dcgm-exporter
`
	b := Blocks{Shared: parse(t, shared), SharedFile: "shared.yaml", Telemetry: parse(t, telemetry), TelemetryFile: "tel.yaml"}
	for _, c := range []struct {
		name, doc, selector, field string
		want                       Place
		ok                         bool
	}{
		{"the variant's section wins over base", bundle, "override_a", "frontend.type", Place{File: "f.yaml", Line: 11, Field: "override_a.frontend.type"}, true},
		{"base when the variant does not set it", bundle, "override_a", "roles.prefill.nodes", Place{File: "f.yaml", Line: 6, Field: "base.roles.prefill.nodes"}, true},
		{"a zip group by its name", bundle, "zip_override_z[1]", "roles.prefill.nodes", Place{File: "f.yaml", Line: 15, Field: "zip_override_z.roles.prefill.nodes"}, true},
		{"the selector base", bundle, "base", "frontend.type", Place{File: "f.yaml", Line: 3, Field: "base.frontend.type"}, true},
		{"the fragment over the shared block", bundle, "override_a", "benchmark.type", Place{File: "f.yaml", Line: 8, Field: "base.benchmark.type"}, true},
		{"the shared block", bundle, "override_a", "health_check.max_attempts", Place{File: "shared.yaml", Line: 6, Field: "health_check.max_attempts", Block: "the lane's shared block"}, true},
		{"the telemetry block", single, "", "telemetry.dcgm_exporter.container_image", Place{File: "tel.yaml", Line: 4, Field: "telemetry.dcgm_exporter.container_image", Block: "the telemetry block"}, true},
		{"a key only the binder writes: its written parent", single, "", "benchmark.env.MODEL", Place{File: "shared.yaml", Line: 3, Field: "benchmark.env", Block: "the lane's shared block"}, true},
		{"a list item by its list", single, "", "services[0].name", Place{File: "f.yaml", Line: 3, Field: "services"}, true},
		{"a plain fragment", single, "", "frontend.type", Place{File: "f.yaml", Line: 2, Field: "frontend.type"}, true},
		{"nowhere", single, "", "model.path", Place{}, false},
	} {
		got, ok := Locate("f.yaml", parse(t, c.doc), c.selector, b, c.field)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: Locate(%q, %q) = %+v, %v; want %+v, %v", c.name, c.selector, c.field, got, ok, c.want, c.ok)
		}
	}
}
