package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/results"
)

// The real container path: enroot 4.1.2 and pyxis 0.24.0, built from
// third_party/ into the test cluster's rootfs (testcluster/up.sh), and the
// mock-engine image in the cluster's registry (testcluster/mock-image.sh).
// No stand-in: the profile names the enroot installed on the nodes.

// nodeEnroot is where the test cluster installs enroot on every node.
const nodeEnroot = "/usr/local/bin/enroot"

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
// the registry and whose containers start with the real runtime.
func realContainerRun(t *testing.T, c *cluster, runtime, imageRef string, o runOpts) *run {
	t.Helper()
	r := c.prepare(t, o)
	r.editProfile(`mock-image = "slurmbench/mock-engine:e2e"`, `mock-image = "`+imageRef+`"`)
	// Only the compute nodes have enroot: the import is a one-node job.
	r.editProfile(`runtime = "enroot"
enroot = "`+c.Enroot+`"`, `runtime = "`+runtime+`"
enroot = "`+nodeEnroot+`"
import_on = "compute"`)
	return r
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

// TestRealContainerRuntimes runs the demo topology (mock 2P1D, benchmark,
// staging) with the production container path: pyxis's srun
// --container-image/--container-mounts flags exactly as the production
// profiles use them, and `enroot start` with the real enroot. The image is
// imported from the registry by `enroot import` in a job on a compute node,
// by the digest its tag resolves to, and that digest is what the staged
// manifest records.
func TestRealContainerRuntimes(t *testing.T) {
	t.Parallel()
	c := setup(t)
	for _, rt := range []string{"pyxis", "enroot"} {
		t.Run(rt, func(t *testing.T) {
			name := uniqueName("e2e-" + rt)
			img := pushMockImage(t, c, name) // a fresh tag: a real import, not a cached squash
			r := realContainerRun(t, c, rt, img.Ref, runOpts{name: name, recipe: mockRecipe{Name: name}.String()})
			r.start()
			if code := r.wait(10 * time.Minute); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.output())
			}
			if got := stagedManifest(t, r.stage).Provenance.ImageDigest; got != img.Digest {
				t.Errorf("staged manifest image_digest %q, want the registry's %s\n%s", got, img.Digest, r.output())
			}
			ref, err := enroot.ParseRef(img.Ref)
			if err != nil {
				t.Fatal(err)
			}
			sqsh := filepath.Join(c.Root, "squash", ref.SquashName())
			st := enroot.Inspect(sqsh)
			if st.State != enroot.StateOK || st.Manifest.Digest != img.Digest || st.Manifest.Origin != enroot.OriginImported {
				t.Errorf("squash %s: %+v (manifest %+v), want imported by %s", sqsh, st, st.Manifest, img.Digest)
			}
			// Every container step really went through the runtime (the
			// driver's srun argv, as run under the job).
			checkStepArgv(t, r.runDir(), rt)
			_ = os.Remove(sqsh)
			_ = os.Remove(sqsh + enroot.ManifestSuffix)
		})
	}
}

// checkStepArgv checks the srun argv of the engine steps in the run
// directory (steps/*.srun.json; the native benchmark client runs outside
// the container): pyxis steps carry --container-image (the squash) and
// --container-mounts; enroot steps run the nodes' `enroot start`.
func checkStepArgv(t *testing.T, runDir, rt string) {
	t.Helper()
	var files []string
	for _, step := range []string{"prefill_w0", "prefill_w1", "decode_w0", "frontend_0"} {
		files = append(files, filepath.Join(runDir, "steps", step+".srun.json"))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var argv []string
		if err := json.Unmarshal(b, &argv); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		joined := " " + strings.Join(argv, " ") + " "
		switch rt {
		case "pyxis":
			if !strings.Contains(joined, " --container-image=/") && !strings.Contains(joined, " --container-image /") {
				t.Errorf("%s: no --container-image in %q", f, argv)
			}
			if !strings.Contains(joined, " --container-mounts") {
				t.Errorf("%s: no --container-mounts in %q", f, argv)
			}
		case "enroot":
			if !strings.Contains(joined, " "+nodeEnroot+" start ") {
				t.Errorf("%s: no %s start in %q", f, nodeEnroot, argv)
			}
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

// TestRealContainerStartFailureIsDiagnosed: an image pyxis cannot start
// (no /bin/sh, which enroot starts every container through) fails the run
// in the workers' phase; outcome.json classifies it as container_runtime
// with enroot's own log, and the summary shows that log.
func TestRealContainerStartFailureIsDiagnosed(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-noshell")
	img := pushMockImage(t, c, name, "MOCK_IMAGE_NO_SHELL=1")
	r := realContainerRun(t, c, "pyxis", img.Ref, runOpts{name: name, recipe: mockRecipe{Name: name, Attempts: 20}.String()})
	r.start()
	if code := r.wait(10 * time.Minute); code == 0 {
		t.Fatalf("exit 0 with an image that has no /bin/sh\n%s", r.output())
	}
	o := r.outcome()
	if o.Class != "container_runtime" || !strings.Contains(o.FirstError, "pyxis:") {
		t.Errorf("outcome class %q first error %q, want container_runtime from a pyxis line", o.Class, o.FirstError)
	}
	if log := strings.Join(o.RuntimeLog, "\n"); !strings.Contains(log, "/bin/sh") {
		t.Errorf("outcome runtime_log %q does not name /bin/sh", o.RuntimeLog)
	}
	if out := r.output(); !strings.Contains(out, "enroot log:") || !strings.Contains(out, "enroot-switchroot") {
		t.Errorf("the summary does not show enroot's log:\n%s", out)
	}
	ref, _ := enroot.ParseRef(img.Ref)
	sqsh := filepath.Join(c.Root, "squash", ref.SquashName())
	_ = os.Remove(sqsh)
	_ = os.Remove(sqsh + enroot.ManifestSuffix)
}
