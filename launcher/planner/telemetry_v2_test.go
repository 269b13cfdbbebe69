package planner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// TestTelemetrySchema2DefaultExporter: a schema-2 recipe that enables
// telemetry without a dcgm_exporter gets the profile's [telemetry]
// exporter (srtctl 2.x: the cluster's default_gpu_exporter); without one
// the plan is refused naming the field.
func TestTelemetrySchema2DefaultExporter(t *testing.T) {
	text := strings.Replace(trtllmRecipeV2, "benchmark:", "telemetry: {enabled: true}\nbenchmark:", 1)
	r, err := recipe.Parse(filepath.Join(t.TempDir(), "t.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	td := testdataDir(t)
	p := loadProfile(t, filepath.Join(td, "profiles", "gb300.toml"))
	p.Telemetry.ExporterImage = "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3"
	pl, err := Build(inputs(p, r))
	if err != nil {
		t.Fatal(err)
	}
	if pl.Telemetry == nil || pl.Telemetry.ExporterImage != "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3" {
		t.Fatalf("telemetry %+v, want the profile's exporter", pl.Telemetry)
	}
	p.Telemetry.ExporterImage = ""
	if _, err := Build(inputs(p, r)); err == nil || !strings.Contains(err.Error(), "telemetry.dcgm_exporter.container_image") {
		t.Errorf("no exporter anywhere: %v", err)
	}
}
