package plan

import (
	"sort"
	"strings"
)

// writeProvenance prints the recipe's variant, the fields its override
// section set, the --set/--unset edits, loading warnings, and telemetry the recipe requests that
// this plan does not collect (Plan.Telemetry unset).
func (p *Plan) writeProvenance(ew *errWriter) {
	if p.Recipe.Variant != "" {
		ew.printf("  variant  %s of %s (every other value from its base:)\n", p.Recipe.Variant, p.Recipe.Path)
		fields := make([]string, 0, len(p.Recipe.Origins))
		for f := range p.Recipe.Origins {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			ew.printf("           %s ← %s\n", f, p.Recipe.Origins[f])
		}
	}
	for _, o := range p.Recipe.Overrides {
		ew.printf("  override %s\n", o)
	}
	for _, w := range p.Recipe.Warnings {
		ew.printf("  warning  %s\n", w)
	}
	if t := p.Recipe.Telemetry; t != nil && p.Telemetry == nil {
		ew.printf("  telemetry %s requested (required: %v, every %gs, exporter %s port %d) and NOT collected by this plan\n",
			t.Provider, t.Required, t.FrequencySeconds, t.ExporterImage, t.ExporterPort)
	}
	if t := p.Recipe.Telemetry; t != nil && t.CPUExporterPort > 0 {
		// srtctl's CPU leg is best-effort and runs the exporter binary its
		// own setup installs; slurmbench has neither that binary nor a
		// contract for its samples, so it says so rather than pretend.
		ew.printf("  telemetry cpu_power_exporter (port %d, source %s) requested and NOT collected: slurmbench runs the DCGM leg only\n",
			t.CPUExporterPort, t.CPUExporterSource)
	}
	if t := p.Telemetry; t != nil {
		ew.printf("  telemetry dcgm-power collected (required: %v, every %gs, %d GPUs on nodes %v, exporter %s port %d) into %s\n",
			t.Required, t.IntervalSeconds, len(t.Devices), t.Nodes, t.ExporterImage, t.Port, t.PowerDir)
	}
}

// ManifestExtra is what a results manifest keeps of how the recipe was
// read: the override-file config, the --set/--unset edits and every loading
// warning (e.g. keys kept last by --allow-duplicate-keys); nil when there is
// nothing to say.
func (s Source) ManifestExtra() map[string]string {
	out := map[string]string{}
	if s.Variant != "" {
		out["recipe_variant"] = s.Variant
	}
	if len(s.Overrides) > 0 {
		out["recipe_overrides"] = strings.Join(s.Overrides, "\n")
	}
	if len(s.Warnings) > 0 {
		out["recipe_warnings"] = strings.Join(s.Warnings, "\n")
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
