package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/enroot/oci"
	"github.com/slurmbench/slurmbench/results"
)

// The real container path on the test cluster: Slurm's own OCI containers
// (srun --container, oci.conf driving Debian's crun) with bundles that
// skopeo and umoci import from the cluster's registry (testcluster/up.sh,
// testcluster/mock-image.sh). pyxis and enroot are not on the test
// cluster: their flags and commands are checked as a contract
// (enroot/argv_test.go, enroot/contract_test.go) and the e2e suites use the
// enroot stand-in (testdata/enroot-standin).

// pushedImage is the mock-engine image in the cluster's registry.
type pushedImage struct {
	Ref    string // REGISTRY/REPOSITORY:TAG, as a profile names it
	Digest string // sha256:… of its manifest
}

var pushedLine = regexp.MustCompile(`^(\S+:\d+/\S+:[A-Za-z0-9_.-]+)@(sha256:[0-9a-f]{64})$`)

// pushMockImage builds the mock-engine image from the test's slurmbench
// binary and pushes it under tag (testcluster/mock-image.sh). It needs the
// registry that testcluster/up.sh starts (SLURMBENCH_CLUSTER_REGISTRY).
func pushMockImage(t testing.TB, c *cluster, tag string, env ...string) pushedImage {
	t.Helper()
	if os.Getenv("SLURMBENCH_CLUSTER_REGISTRY") == "" {
		msg := "SLURMBENCH_CLUSTER_REGISTRY is not set: the cluster has no registry (testcluster/up.sh starts one)"
		if os.Getenv("SLURMBENCH_REQUIRE_CLUSTER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command("bash", filepath.Join(c.repo, "testcluster", "mock-image.sh"), c.Binary, "slurmbench/mock-engine:"+tag) //nolint:noctx // bounded by the script's curl timeouts
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mock-image.sh: %v\n%s", err, stderr.String())
	}
	m := pushedLine.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		t.Fatalf("mock-image.sh printed %q, want REGISTRY/REPO:TAG@sha256:…", out)
	}
	return pushedImage{Ref: m[1], Digest: m[2]}
}

// realContainerRun prepares a run of the mock recipe whose image comes from
// the registry and whose containers start with the oci runtime.
func realContainerRun(t *testing.T, c *cluster, imageRef string, o runOpts) *run {
	t.Helper()
	r := c.prepare(t, o)
	r.editProfile(`mock-image = "slurmbench/mock-engine:e2e"`, `mock-image = "`+imageRef+`"`)
	// Only the compute nodes have skopeo and umoci: the import is a
	// one-node job; the test registry is plain HTTP.
	r.editProfile(`runtime = "enroot"
enroot = "`+c.Enroot+`"`, `runtime = "oci"
insecure_registries = ["`+os.Getenv("SLURMBENCH_CLUSTER_REGISTRY")+`"]
import_on = "compute"`)
	return r
}

// bundleOf is where the oci runtime keeps image's bundle in dir.
func bundleOf(t *testing.T, dir, image string) string {
	t.Helper()
	ref, err := enroot.ParseRef(image)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, oci.BundleName(ref))
}

// removeBundle deletes an imported bundle and its sidecar.
func removeBundle(path string) {
	_ = os.RemoveAll(path)
	_ = os.Remove(path + enroot.ManifestSuffix)
}

// stagedManifest reads the manifest.json staged under dir.
func stagedManifest(t *testing.T, dir string) results.Manifest {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "LOGS" {
			return filepath.SkipDir // the power package's own manifest.json lives there
		}
		if err == nil && !d.IsDir() && d.Name() == results.ManifestName {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("staged manifests under %s: %v, want one", dir, found)
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", found[0], err)
	}
	return m
}

// TestOCIContainerRuntime runs the demo topology (mock 2P1D, benchmark,
// staging) with Slurm's own containers: every engine step is srun
// --container=BUNDLE, the image imported from the registry by skopeo and
// umoci in a job on a compute node, by the digest its tag resolves to, and
// that digest is what the staged manifest records.
func TestOCIContainerRuntime(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-oci")
	img := pushMockImage(t, c, name) // a fresh tag: a real import, not a cached bundle
	r := realContainerRun(t, c, img.Ref, runOpts{name: name, recipe: mockRecipe{Name: name}.String()})
	bundle := bundleOf(t, filepath.Join(c.Root, "squash"), img.Ref)
	defer removeBundle(bundle)
	r.start()
	if code := r.wait(10 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	if got := stagedManifest(t, r.stage).Provenance.ImageDigest; got != img.Digest {
		t.Errorf("staged manifest image_digest %q, want the registry's %s\n%s", got, img.Digest, r.output())
	}
	st := oci.Inspect(bundle)
	if st.State != enroot.StateOK || st.Manifest.Digest != img.Digest || st.Manifest.Origin != enroot.OriginImported {
		t.Errorf("bundle %s: %+v (manifest %+v), want imported by %s", bundle, st, st.Manifest, img.Digest)
	}
	checkStepArgv(t, r.runDir(), bundle)
}

// checkStepArgv checks the srun argv of the engine steps in the run
// directory (steps/*.srun.json; the native benchmark client runs outside
// the container): each names its own bundle with --container, whose
// config.json starts the image's root filesystem read-only.
func checkStepArgv(t *testing.T, runDir, image string) {
	t.Helper()
	for _, step := range []string{"prefill_w0", "prefill_w1", "decode_w0", "frontend_0"} {
		f := filepath.Join(runDir, "steps", step+".srun.json")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var argv []string
		if err := json.Unmarshal(b, &argv); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		stepBundle := filepath.Join(runDir, "steps", step+oci.Suffix)
		if !slices.Contains(argv, "--container="+stepBundle) {
			t.Errorf("%s: no --container=%s in %q", f, stepBundle, argv)
		}
		var cfg struct {
			Root struct {
				Path     string `json:"path"`
				Readonly bool   `json:"readonly"`
			} `json:"root"`
		}
		if b, err := os.ReadFile(filepath.Join(stepBundle, "config.json")); err != nil || json.Unmarshal(b, &cfg) != nil {
			t.Errorf("%s/config.json: %v", stepBundle, err)
		} else if cfg.Root.Path != filepath.Join(image, "rootfs") || !cfg.Root.Readonly {
			t.Errorf("%s/config.json root %+v, want %s/rootfs read-only", stepBundle, cfg.Root, image)
		}
	}
}

// TestMockImageIsReproducible: the same binary gives the same image digest,
// whatever the tag and however often it is built.
func TestMockImageIsReproducible(t *testing.T) {
	t.Parallel()
	c := setup(t)
	a := pushMockImage(t, c, uniqueName("repro"))
	b := pushMockImage(t, c, uniqueName("repro"))
	if a.Digest != b.Digest {
		t.Errorf("two builds of the same binary: %s and %s", a.Digest, b.Digest)
	}
}

// TestOCIContainerStartFailureIsDiagnosed: an image the runtime cannot
// start (/proc is a file, where crun mounts procfs) fails the run in the
// workers' phase; outcome.json classifies it as container_runtime with
// crun's own error, and the summary shows that log.
func TestOCIContainerStartFailureIsDiagnosed(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-broken")
	img := pushMockImage(t, c, name, "MOCK_IMAGE_BROKEN=1")
	r := realContainerRun(t, c, img.Ref, runOpts{name: name, recipe: mockRecipe{Name: name, Attempts: 20}.String()})
	defer removeBundle(bundleOf(t, filepath.Join(c.Root, "squash"), img.Ref))
	r.start()
	if code := r.wait(10 * time.Minute); code == 0 {
		t.Fatalf("exit 0 with an image whose /proc is a file\n%s", r.output())
	}
	o := r.outcome()
	if o.Class != "container_runtime" || !strings.Contains(o.FirstError, "proc") {
		t.Errorf("outcome class %q first error %q, want container_runtime from crun's line about /proc", o.Class, o.FirstError)
	}
	if log := strings.Join(o.RuntimeLog, "\n"); !strings.Contains(log, "proc") {
		t.Errorf("outcome runtime_log %q does not name /proc", o.RuntimeLog)
	}
	if out := r.output(); !strings.Contains(out, "runtime log:") {
		t.Errorf("the summary does not show the runtime's log:\n%s", out)
	}
}
