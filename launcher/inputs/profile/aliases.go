package profile

import (
	"errors"
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
//   - for a TileRT point (FRAMEWORK tilert): "tilert-decode" → the staged
//     main image and "tilert-prefill" → the staged PREFILL_IMAGE (the
//     cache's own policy: staged with no framework), which its recipes
//     name as the two roles' containers;
//
// The "dcgm-exporter" alias is not the cluster's but the job's: InferenceX
// stages the exporter and names it only for a job that collects DCGM power
// (write_lane_config: `if power.dcgm`), which AddDCGMExporter adds once the
// job's recipe is known.
//
// No other name is an alias there: "nginx", which recipes of the sample
// write as frontend.nginx_container, is not one on any cluster of
// runners.yaml@03eaa88a, and srtctl leaves a name that is no alias as it
// is (core/config.py@020fbc6c resolve_container_aliases) for pyxis, which
// pulls it from Docker Hub (library/nginx, tag latest). ContainerRef does
// the same for a profile with a record.
func (p *Profile) recordAliases(o RunnersOptions, srt *runners.SrtSlurm, from func(key, field, note string)) error {
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
	if o.Framework == FrameworkTileRT && o.Image != "" {
		if o.PrefillImage == "" {
			return errors.New("a TileRT point (FRAMEWORK tilert) needs PREFILL_IMAGE: InferenceX names its prefill image tilert-prefill")
		}
		p.Containers[TileRTDecodeAlias] = p.StagedImage(o.Image, o.Framework, o.ModelPrefix)
		p.Sources["containers."+TileRTDecodeAlias] = Source{File: "IMAGE", Note: "a TileRT point's decode image, staged by the record's squash policy"}
		p.Containers[TileRTPrefillAlias] = p.StagedImage(o.PrefillImage, "", "")
		p.Sources["containers."+TileRTPrefillAlias] = Source{File: "PREFILL_IMAGE", Note: "a TileRT point's prefill image, staged by the record's squash cache"}
	}
	return nil
}

// FrameworkTileRT is the FRAMEWORK of TileRT points, whose jobs InferenceX
// gives two images (config.py@eacb6075 write_lane_config).
const FrameworkTileRT = "tilert"

// TileRTDecodeAlias and TileRTPrefillAlias are the container aliases of a
// TileRT job: its main image and its PREFILL_IMAGE.
const (
	TileRTDecodeAlias  = "tilert-decode"
	TileRTPrefillAlias = "tilert-prefill"
)

// AddDCGMExporter names the staged DCGM exporter image (the record's
// helper-dirs.dcgm-exporter policy) "dcgm-exporter" in a record-derived
// profile, for a job that collects DCGM power. InferenceX's launcher
// stages the exporter and writes that alias into srtslurm.yaml's
// containers only for such a job (config.py@eacb6075 write_lane_config,
// `if power.dcgm`): a point of a `power: true` row on a lane that allows it
// (drivers/srt/power.py, the version whose decide_power reads the point's
// power field), whose bound recipe is the one that carries the telemetry
// block; the recipe-driven rule before it was the same test on the recipe
// (power.py@bede049f recipe_enables_dcgm_power: telemetry enabled with a
// dcgm_exporter). Any other job of the cluster has no such alias, so
// nothing checks, stages or imports an exporter image for it. A profile
// without a record, or one whose TOML names the alias itself, is left as
// it is. It reports whether it added the alias.
func (p *Profile) AddDCGMExporter() bool {
	if p.Record == nil || p.Record.Cluster == nil {
		return false
	}
	if _, ok := p.Containers[DCGMExporterAlias]; ok {
		return false
	}
	if p.Containers == nil {
		p.Containers = map[string]string{}
	}
	if p.Sources == nil {
		p.Sources = map[string]Source{}
	}
	c := p.Record.Cluster
	field := "slurm.squash.helper-dirs.dcgm-exporter"
	if _, ok := c.Lines["clusters."+c.ID+"."+field]; !ok {
		field = "slurm.squash"
		if c.Slurm.Squash == nil {
			field = "slurm"
		}
	}
	p.Containers[DCGMExporterAlias] = p.stagedHelper(DCGMExporterImage, runners.HelperDCGMExporter)
	p.Sources["containers."+DCGMExporterAlias] = Source{File: p.Record.Inventory.Path, Line: c.LineOf(field), Field: "clusters." + c.ID + "." + field,
		Note: "InferenceX's staged " + DCGMExporterImage + ", for this job: it collects DCGM power"}
	return true
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
