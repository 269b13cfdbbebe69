package profile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// aliasRecord is a runners.yaml of one cluster with the slurm.squash
// block squash and the srt-slurm keys srt (both indented in place).
func aliasRecord(t *testing.T, squash, srt string) string {
	t.Helper()
	body := `labels:
  cluster:c1: [c1_00]
clusters:
  c1:
    gpus-per-node: 4
    arch: x86_64
    scheduler: slurm
    slurm:
      partition: batch
      exclusive: false
` + squash + `      srt-slurm:
        network-interface: ""
        shared-run-root: /shared/runs
` + srt
	path := filepath.Join(t.TempDir(), "runners.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRecordAliases: the [containers] a record-derived profile carries are
// exactly the names InferenceX's launcher writes into srtslurm.yaml's
// containers (config.py@eacb6075 render), each to the staged image; the
// DCGM exporter's only for a job that collects power (AddDCGMExporter).
func TestRecordAliases(t *testing.T) {
	const image = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.9.0"
	const squash = `      squash:
        dir: /sq
        import: compute
        helper-dirs:
          nginx: {key-style: plus, import: pre-staged}
          dcgm-exporter: {dir: /helpers, import: unchecked}
`
	for _, c := range []struct {
		name, squash, srt, image string
		power                    bool // the job collects DCGM power
		want                     map[string]string
	}{
		{
			name:   "container and nginx aliases and IMAGE in both spellings",
			squash: squash, image: image,
			srt: "        container-aliases: [dynamo-sglang, latest]\n        nginx-aliases: [nginx-sqsh]\n",
			want: map[string]string{
				"dynamo-sglang": image, "latest": image,
				"nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.9.0": image,
				"nginx-sqsh": "/sq/nginx+1.27.4.sqsh",
			},
		},
		{
			name:   "no nginx-aliases so no nginx staged",
			squash: squash, image: image,
			srt:  "        container-aliases: [dynamo-sglang]\n",
			want: map[string]string{"dynamo-sglang": image, "nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.9.0": image},
		},
		{
			name:   "a power job on a power-telemetry cluster names the DCGM exporter by its helper policy",
			squash: squash, image: "lmsysorg/sglang:v0.5", power: true,
			srt: "        nginx-aliases: [nginx-sqsh, nginx-b]\n        power-telemetry: {dcgm-port: 19401, cpu-source: acpi}\n",
			want: map[string]string{
				"nginx-sqsh": "/sq/nginx+1.27.4.sqsh", "nginx-b": "/sq/nginx+1.27.4.sqsh",
				"dcgm-exporter": "/helpers/nvcr.io_nvidia_k8s_dcgm-exporter_4.6.0-4.8.3-distroless.sqsh",
			},
		},
		{
			name:   "a job without power on the same cluster has no exporter alias",
			squash: squash, image: "lmsysorg/sglang:v0.5",
			srt:  "        nginx-aliases: [nginx-sqsh, nginx-b]\n        power-telemetry: {dcgm-port: 19401, cpu-source: acpi}\n",
			want: map[string]string{"nginx-sqsh": "/sq/nginx+1.27.4.sqsh", "nginx-b": "/sq/nginx+1.27.4.sqsh"},
		},
		{
			name:   "a job without power on a power-exporter-port cluster has none either",
			squash: squash,
			srt:    "        power-exporter-port: 9555\n",
			want:   map[string]string{},
		},
		{
			name:   "a power job on a power-exporter-port cluster whose squash cache imports: the reference",
			squash: "      squash: {dir: /sq, import: compute}\n", power: true,
			srt:  "        power-exporter-port: 9555\n",
			want: map[string]string{"dcgm-exporter": "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless"},
		},
		{
			name:   "a pre-staged main image names the squash file",
			squash: "      squash: {dir: /sq, import: pre-staged, key-style: plus-strip-nvcr}\n", image: image,
			srt: "        container-aliases: [dynamo-sglang]\n",
			want: map[string]string{
				"dynamo-sglang": "/sq/nvidia+ai-dynamo+sglang-runtime+0.9.0.sqsh",
				image:           "/sq/nvidia+ai-dynamo+sglang-runtime+0.9.0.sqsh",
				"nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.9.0": "/sq/nvidia+ai-dynamo+sglang-runtime+0.9.0.sqsh",
			},
		},
		{
			name:   "no image given so only the helpers",
			squash: squash,
			srt:    "        container-aliases: [dynamo-sglang]\n        nginx-aliases: [nginx-sqsh]\n",
			want:   map[string]string{"nginx-sqsh": "/sq/nginx+1.27.4.sqsh"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := aliasRecord(t, c.squash, c.srt)
			p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "c1_00", Home: "/h", Image: c.image, Framework: "dynamo-sglang"})
			if err != nil {
				t.Fatal(err)
			}
			if c.power && !p.AddDCGMExporter() {
				t.Error("AddDCGMExporter added nothing")
			}
			if !mapsEqual(p.Containers, c.want) {
				t.Errorf("containers:\n got %v\nwant %v", p.Containers, c.want)
			}
			for name := range c.want {
				if _, ok := p.SourceOf("containers." + name); !ok {
					t.Errorf("containers.%s: no source", name)
				}
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestContainerRefBareName: a name that is no alias is the image pyxis
// pulls for a record's profile (srtctl passes it through), and refused
// for an operator's own profile.
func TestContainerRefBareName(t *testing.T) {
	file := aliasRecord(t, "", "        nginx-aliases: [nginx-sqsh]\n")
	rec, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: "c1_00", Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	own := &Profile{Path: "own.toml", Containers: map[string]string{"nginx-sqsh": "/sq/nginx.sqsh"}}
	for _, c := range []struct {
		p       *Profile
		name    string
		want    string
		wantErr string
	}{
		{rec, "nginx", "nginx", ""},
		{rec, "nginx-sqsh", "nginx:1.27.4", ""}, // no squash cache: the reference, imported by slurmbench
		{rec, "docker.io/library/nginx:1.27.4", "docker.io/library/nginx:1.27.4", ""},
		{own, "nginx", "", `"nginx" is not a [containers] alias of own.toml`},
		{own, "nginx-sqsh", "/sq/nginx.sqsh", ""},
		{own, "nginx:1.27.4", "nginx:1.27.4", ""},
	} {
		got, err := c.p.ContainerRef(c.name)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s ContainerRef(%q) = %q, %v; want an error with %q", c.p.Path, c.name, got, err, c.wantErr)
			}
		case err != nil || got != c.want:
			t.Errorf("%s ContainerRef(%q) = %q, %v; want %q", c.p.Path, c.name, got, err, c.want)
		}
	}
}

func TestPyxisSpelling(t *testing.T) {
	for in, want := range map[string]string{
		"nvcr.io/nvidia/x:1":      "nvcr.io#nvidia/x:1",
		"localhost/x:1":           "localhost#x:1",
		"reg:5000/a/b":            "reg:5000#a/b",
		"lmsysorg/sglang:v0.5":    "lmsysorg/sglang:v0.5",
		"nginx":                   "nginx",
		"nvcr.io#nvidia/x:1":      "nvcr.io#nvidia/x:1",
		"docker.io/library/nginx": "docker.io#library/nginx",
	} {
		if got := PyxisSpelling(in); got != want {
			t.Errorf("PyxisSpelling(%q) = %q, want %q", in, got, want)
		}
	}
}
