package enroot

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"

	"go.yaml.in/yaml/v3"
)

const digestA = "sha256:5027e95bf6ec536856b1b52a91d1f35ff5c564ab83e8a94758a169ff09bb8df3"

func TestParseRefForms(t *testing.T) {
	cases := []struct {
		in                          string
		registry, repo, tag, digest string
		name, uri, pyxis, squash    string
	}{
		{
			in: "lmsysorg/sglang:v0.5.19-cu130", repo: "lmsysorg/sglang", tag: "v0.5.19-cu130",
			name: "lmsysorg/sglang:v0.5.19-cu130", uri: "docker://lmsysorg/sglang:v0.5.19-cu130",
			pyxis: "lmsysorg/sglang:v0.5.19-cu130", squash: "lmsysorg_sglang_v0.5.19-cu130.sqsh",
		},
		{
			in: "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc18", registry: "nvcr.io", repo: "nvidia/tensorrt-llm/release", tag: "1.3.0rc18",
			name: "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc18", uri: "docker://nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc18",
			pyxis: "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc18", squash: "nvcr.io_nvidia_tensorrt-llm_release_1.3.0rc18.sqsh",
		},
		{
			// The pyxis form of the same image: same URI, same squash file.
			in: "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc18", registry: "nvcr.io", repo: "nvidia/tensorrt-llm/release", tag: "1.3.0rc18",
			name: "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc18", uri: "docker://nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc18",
			pyxis: "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc18", squash: "nvcr.io_nvidia_tensorrt-llm_release_1.3.0rc18.sqsh",
		},
		{
			// Pinned: enroot gets the digest as its tag (see EnrootURI).
			in: "lmsysorg/sglang:v0.5.14-cu130@" + digestA, repo: "lmsysorg/sglang", tag: "v0.5.14-cu130", digest: digestA,
			name: "lmsysorg/sglang:v0.5.14-cu130@" + digestA, uri: "docker://lmsysorg/sglang:" + digestA,
			pyxis: "lmsysorg/sglang:" + digestA, squash: "lmsysorg_sglang_v0.5.14-cu130_sha256_" + digestA[7:] + ".sqsh",
		},
		{
			in: "quay.io/rh-ee-imarkov/llm-d-nokube-vllm@" + digestA, registry: "quay.io", repo: "rh-ee-imarkov/llm-d-nokube-vllm", digest: digestA,
			name: "quay.io/rh-ee-imarkov/llm-d-nokube-vllm@" + digestA, uri: "docker://quay.io#rh-ee-imarkov/llm-d-nokube-vllm:" + digestA,
			pyxis: "quay.io#rh-ee-imarkov/llm-d-nokube-vllm:" + digestA, squash: "quay.io_rh-ee-imarkov_llm-d-nokube-vllm_sha256_" + digestA[7:] + ".sqsh",
		},
		{
			// Docker Hub official image: no namespace, enroot adds library/.
			in: "nginx:1.27.4", repo: "nginx", tag: "1.27.4",
			name: "nginx:1.27.4", uri: "docker://nginx:1.27.4", pyxis: "nginx:1.27.4", squash: "nginx_1.27.4.sqsh",
		},
		{
			// docker.io means Docker Hub: the URI has no registry, but the squash
			// name keeps the prefix exactly as the runners' sed does.
			in: "docker.io/library/nginx:1.27.4", repo: "library/nginx", tag: "1.27.4",
			name: "library/nginx:1.27.4", uri: "docker://library/nginx:1.27.4", pyxis: "library/nginx:1.27.4",
			squash: "docker.io_library_nginx_1.27.4.sqsh",
		},
		{
			in: "registry.example.com:5000/team/img", registry: "registry.example.com:5000", repo: "team/img",
			name: "registry.example.com:5000/team/img", uri: "docker://registry.example.com:5000#team/img",
			pyxis: "registry.example.com:5000#team/img", squash: "registry.example.com_5000_team_img.sqsh",
		},
		{
			in: "localhost/img:dev", registry: "localhost", repo: "img", tag: "dev",
			name: "localhost/img:dev", uri: "docker://localhost#img:dev", pyxis: "localhost#img:dev", squash: "localhost_img_dev.sqsh",
		},
		{
			in:   "/shared/squash/dynamo-sglang.sqsh",
			name: "/shared/squash/dynamo-sglang.sqsh", uri: "", pyxis: "/shared/squash/dynamo-sglang.sqsh", squash: "dynamo-sglang.sqsh",
		},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseRef(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{r.Registry, r.Repository, r.Tag, r.Digest, r.Name(), r.EnrootURI(), r.PyxisImage(), r.SquashName(), r.String()}
			want := []string{tc.registry, tc.repo, tc.tag, tc.digest, tc.name, tc.uri, tc.pyxis, tc.squash, tc.in}
			labels := []string{"Registry", "Repository", "Tag", "Digest", "Name", "EnrootURI", "PyxisImage", "SquashName", "String"}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s = %q, want %q", labels[i], got[i], want[i])
				}
			}
			if r.IsLocal() != strings.HasSuffix(tc.in, ".sqsh") {
				t.Errorf("IsLocal = %v", r.IsLocal())
			}
		})
	}
}

func TestParseRefMalformed(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "empty"},
		{" lmsysorg/sglang:v1", "whitespace at byte 0"},
		{"lmsysorg/sglang:v1 ", "whitespace at byte 18"},
		{"lmsysorg/sg lang:v1", "whitespace"},
		{"nvcr.io#nvidia#x", "more than one '#'"},
		{"nvcr.io#nvidia/x#y:1", "more than one '#'"},
		{"#nvidia/x:1", "empty registry before '#'"},
		{"nvcr.io#", "empty repository"},
		{"nvcr.io#:tag", "empty repository"},
		{"Lmsysorg/sglang:v1", `repository "Lmsysorg/sglang" must be lowercase`},
		{"nvcr.io/NVIDIA/x:1", `repository "NVIDIA/x" must be lowercase`},
		{"lmsysorg/sglang:bad!tag", `bad tag "bad!tag"`},
		{"lmsysorg/sglang:-x", `bad tag "-x"`},
		{"lmsysorg/sglang:", `bad tag ""`},
		{"lmsysorg/sglang:" + strings.Repeat("a", 129), "bad tag"},
		{"lmsysorg//sglang", `component ""`},
		{"lmsysorg/sglang/", `component ""`},
		{"lmsysorg/sg--lang_", `component "sg--lang_"`},
		{"repo@sha256:abc", `bad digest "sha256:abc"`},
		{"repo:tag@md5:" + strings.Repeat("a", 32), "bad digest"},
		{"repo:tag@" + strings.ToUpper(digestA), "bad digest"},
		{"repo:tag@", `bad digest ""`},
		{"repo@" + digestA + "@" + digestA, "more than one '@'"},
		{"$oauthtoken@nvcr.io#nvidia/x:1", "credentials (USER@)"},
		{"docker://lmsysorg/sglang:v1", `URL scheme (docker://); give the image itself, e.g. "lmsysorg/sglang:v1"`},
		{"bad_host!.io#x/y", `bad registry "bad_host!.io"`},
		{"relative/dir/image.sqsh", "absolute path"},
		{"./image.sqsh", "absolute path"},
		{"/shared/squash/image.tar", "must be a .sqsh file"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseRef(tc.in)
			var re *RefError
			if !errors.As(err, &re) {
				t.Fatalf("ParseRef(%q) = %v, want a *RefError", tc.in, err)
			}
			if re.Input != tc.in || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q should quote the input and say %q", err, tc.want)
			}
		})
	}
}

// Every image in InferenceX's nvidia-master.yaml must parse, and its
// renderings must be what enroot and the runners expect.
func TestParseRefNvidiaMasterImages(t *testing.T) {
	path := shareddata.Path(t, "data", "inferencex", "configs", "nvidia-master.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var configs map[string]struct {
		Image string `yaml:"image"`
	}
	if err := yaml.Unmarshal(data, &configs); err != nil {
		t.Fatal(err)
	}
	// enroot 3.x's URI grammar (docker.sh), without USER@.
	enrootURI := regexp.MustCompile(`^docker://([^#]+#)?[a-z0-9/._-]+(:[A-Za-z0-9._:-]+)?$`)
	runnerSed := regexp.MustCompile(`[/:@#]`)
	seen := map[string]bool{}
	forms := map[string]int{}
	for key, c := range configs {
		if c.Image == "" {
			t.Errorf("%s: no image", key)
			continue
		}
		if seen[c.Image] {
			continue
		}
		seen[c.Image] = true
		r, err := ParseRef(c.Image)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		switch {
		case r.Digest != "":
			forms["pinned"]++
		case strings.Contains(c.Image, "#"):
			forms["pyxis"]++
		case r.Registry != "":
			forms["registry"]++
		default:
			forms["docker"]++
		}
		if uri := r.EnrootURI(); !enrootURI.MatchString(uri) || strings.Count(uri, "#") > 1 {
			t.Errorf("%s: enroot URI %q does not fit enroot's grammar", c.Image, uri)
		}
		if want := runnerSed.ReplaceAllString(c.Image, "_") + ".sqsh"; r.SquashName() != want {
			t.Errorf("%s: squash name %q, the runners use %q", c.Image, r.SquashName(), want)
		}
		if again, err := ParseRef(r.Name()); err != nil || again.Name() != r.Name() || again.EnrootURI() != r.EnrootURI() {
			t.Errorf("%s: Name %q does not round-trip: %v", c.Image, r.Name(), err)
		}
		if r.Registry != "" && !strings.Contains(c.Image, "#") {
			pyxisForm, err := ParseRef(strings.Replace(c.Image, "/", "#", 1))
			if err != nil || pyxisForm.Name() != r.Name() || pyxisForm.SquashName() != r.SquashName() {
				t.Errorf("%s: the pyxis form parses to %q / %q: %v", c.Image, pyxisForm.Name(), pyxisForm.SquashName(), err)
			}
		}
	}
	t.Logf("%d configs, %d distinct images, forms %v", len(configs), len(seen), forms)
	for _, f := range []string{"docker", "registry", "pyxis", "pinned"} {
		if forms[f] == 0 {
			t.Errorf("no %s-form image found; is %s the expected file?", f, path)
		}
	}
}

func TestRefTextRoundTrip(t *testing.T) {
	in := struct {
		Image Ref `json:"image"`
	}{}
	if err := json.Unmarshal([]byte(`{"image":"nvcr.io#nvidia/x:1.0"}`), &in); err != nil {
		t.Fatal(err)
	}
	if in.Image.EnrootURI() != "docker://nvcr.io#nvidia/x:1.0" {
		t.Errorf("decoded %+v", in.Image)
	}
	out, err := json.Marshal(in)
	if err != nil || string(out) != `{"image":"nvcr.io#nvidia/x:1.0"}` {
		t.Errorf("Marshal = %s, %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"image":"nvcr.io#nvidia#x"}`), &in); err == nil || !strings.Contains(err.Error(), "more than one '#'") {
		t.Errorf("bad reference decoded without the reason: %v", err)
	}
}
