package profile

import (
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
)

// DCGMExporterImage is the DCGM exporter image InferenceX stages for a
// power job and names "dcgm-exporter" in srtslurm.yaml's containers
// (infx/launch/drivers/srt/config.py@eacb6075 DCGM_EXPORTER_IMAGE).
const DCGMExporterImage = "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless"

// DCGMExporterAlias is the alias InferenceX's shared telemetry block
// (configs/srt-recipes/telemetry-dcgm.yaml) and its launcher's telemetry
// overrides (power.py telemetry_arguments) name the exporter image by.
const DCGMExporterAlias = "dcgm-exporter"

// recordAliases fills [containers] as InferenceX's launcher writes
// srtslurm.yaml's containers for a job on the record's cluster
// (infx/launch/drivers/srt/config.py@eacb6075 render and
// write_lane_config), in its order, later names winning:
//   - every srt-slurm.container-aliases name, the point's image (IMAGE)
//     and IMAGE itself in both spellings (registry/path and pyxis's
//     registry#path, pyxis_spelling) → the staged main image;
//   - every srt-slurm.nginx-aliases name → the staged nginx:1.27.4 (the
//     helper policy helper-dirs.nginx), only when the record names some;
//   - "dcgm-exporter" → the staged exporter image (helper-dirs.dcgm-exporter)
//     on a cluster with power telemetry, where every job that is not
//     eval-only collects DCGM power (power.py@03eaa88a resolve_power; an
//     eval-only job runs no telemetry, so the alias is idle there).
//
// No other name is an alias there: "nginx", which recipes of the sample
// write as frontend.nginx_container, is not one on any cluster of
// runners.yaml@03eaa88a, and srtctl leaves a name that is no alias as it
// is (core/config.py@020fbc6c resolve_container_aliases) for pyxis, which
// pulls it from Docker Hub (library/nginx, tag latest). ContainerRef does
// the same for a profile with a record.
func (p *Profile) recordAliases(o RunnersOptions, srt *runners.SrtSlurm, from func(key, field, note string)) {
	if o.Image != "" {
		staged := p.StagedImage(o.Image, o.Framework, o.ModelPrefix)
		for _, a := range srt.ContainerAliases {
			p.Containers[a] = staged
			from("containers."+a, "slurm.srt-slurm.container-aliases", "the point's image (IMAGE)")
		}
		for _, a := range uniq(o.Image, PyxisSpelling(o.Image)) {
			if a == staged {
				continue // the reference is what runs: no alias needed
			}
			p.Containers[a] = staged
			p.Sources["containers."+a] = Source{File: "IMAGE", Note: "the point's image, staged by the record's squash policy"}
		}
	}
	if len(srt.NginxAliases) > 0 {
		nginx := p.stagedHelper(NginxImage, runners.HelperNginx)
		for _, a := range srt.NginxAliases {
			p.Containers[a] = nginx
			from("containers."+a, "slurm.srt-slurm.nginx-aliases", "InferenceX's staged "+NginxImage)
		}
	}
	switch {
	case srt.PowerTelemetry != nil:
		p.Containers[DCGMExporterAlias] = p.stagedHelper(DCGMExporterImage, runners.HelperDCGMExporter)
		from("containers."+DCGMExporterAlias, "slurm.srt-slurm.power-telemetry", "InferenceX's staged "+DCGMExporterImage)
	case srt.PowerExporterPort > 0:
		p.Containers[DCGMExporterAlias] = p.stagedHelper(DCGMExporterImage, runners.HelperDCGMExporter)
		from("containers."+DCGMExporterAlias, "slurm.srt-slurm.power-exporter-port", "InferenceX's staged "+DCGMExporterImage)
	}
}

// PyxisSpelling is image with its registry before '#' (pyxis's
// registry#path) when its first component names a registry (has a dot
// or a port, or is localhost), else image unchanged
// (config.py@eacb6075 pyxis_spelling): recipes spell NGC images either way.
func PyxisSpelling(image string) string {
	first, rest, ok := strings.Cut(image, "/")
	if ok && !strings.Contains(image, "#") && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first + "#" + rest
	}
	return image
}

func uniq(names ...string) []string {
	var out []string
	for _, n := range names {
		if n != "" && (len(out) == 0 || out[len(out)-1] != n) {
			out = append(out, n)
		}
	}
	return out
}
