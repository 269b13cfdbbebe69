package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/enroot/oci"
)

// Faults of the real container path (the oci runtime's imports with
// Debian's skopeo and umoci, the test registry), through `slurmbench images
// import` with a profile whose imports run as a job on a compute node, as
// run's do.

// importProfile is a profile for the oci runtime, importing on a compute
// node into squashDir ("" = the shared e2e squash directory).
func importProfile(t *testing.T, c *cluster, squashDir string) string {
	t.Helper()
	r := realContainerRun(t, c, "slurmbench/mock-engine:e2e", runOpts{name: uniqueName("e2e-import"), recipe: "name: unused\n"})
	if squashDir != "" {
		r.editProfile(`squash_dir = "`+filepath.Join(c.Root, "squash")+`"`, `squash_dir = "`+squashDir+`"`)
	}
	return r.profile
}

type importResult struct {
	code           int
	stdout, stderr string
}

// imagesImport runs `slurmbench images import --profile P REF`.
func imagesImport(ctx context.Context, c *cluster, profile, ref string) importResult {
	cmd := exec.CommandContext(ctx, c.Binary, "images", "import", "--profile", profile, ref)
	cmd.Env = c.baseEnv("")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return importResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// TestOCIImportConcurrentOnce: four imports of the same image at once
// import it once; the other three wait on the lock and find the bundle.
func TestOCIImportConcurrentOnce(t *testing.T) {
	t.Parallel()
	c := setup(t)
	img := pushMockImage(t, c, uniqueName("conc"))
	profile := importProfile(t, c, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res := make([]importResult, 4)
	var wg sync.WaitGroup
	for i := range res {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = imagesImport(ctx, c, profile, img.Ref) }()
	}
	wg.Wait()
	actions := map[string]int{}
	for i, r := range res {
		if r.code != 0 {
			t.Fatalf("import %d: exit %d\n%s%s", i, r.code, r.stdout, r.stderr)
		}
		actions[strings.SplitN(r.stdout, "\t", 2)[0]]++
	}
	if actions["imported"] != 1 || actions["cached"] != 3 {
		t.Errorf("actions %v, want one imported and three cached", actions)
	}
	bundle := bundleOf(t, filepath.Join(c.Root, "squash"), img.Ref)
	defer removeBundle(bundle)
	if st := oci.Inspect(bundle); st.State != enroot.StateOK || st.Manifest.Digest != img.Digest {
		t.Errorf("%s: %+v, want ok with digest %s", bundle, st, img.Digest)
	}
}

// TestOCIImportReplacesABrokenBundle: a bundle in the cache whose
// config.json was cut short or removed, or whose root filesystem is gone,
// is found unusable and imported again.
func TestOCIImportReplacesABrokenBundle(t *testing.T) {
	t.Parallel()
	c := setup(t)
	img := pushMockImage(t, c, uniqueName("broken"))
	profile := importProfile(t, c, "")
	bundle := bundleOf(t, filepath.Join(c.Root, "squash"), img.Ref)
	defer removeBundle(bundle)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if r := imagesImport(ctx, c, profile, img.Ref); r.code != 0 || !strings.HasPrefix(r.stdout, "imported\t") {
		t.Fatalf("first import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct {
		name   string
		break_ func() error
	}{
		{"config.json truncated", func() error { return os.Truncate(filepath.Join(bundle, "config.json"), 10) }},
		{"config.json removed", func() error { return os.Remove(filepath.Join(bundle, "config.json")) }},
		{"rootfs removed", func() error { return os.RemoveAll(filepath.Join(bundle, "rootfs")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.break_(); err != nil {
				t.Fatal(err)
			}
			if st := oci.Inspect(bundle); st.State != enroot.StateInvalid {
				t.Fatalf("after breaking it: %s, want invalid", st.State)
			}
			r := imagesImport(ctx, c, profile, img.Ref)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "imported\t") {
				t.Fatalf("import after breaking it: exit %d, want a new import\n%s%s", r.code, r.stdout, r.stderr)
			}
			if st := oci.Inspect(bundle); st.State != enroot.StateOK || st.Manifest.Digest != img.Digest {
				t.Errorf("re-imported bundle: %+v", st)
			}
		})
	}
}

// dropProxy forwards to the registry but cuts every layer download after
// a few bytes, as a registry or proxy that drops the connection mid-layer.
type dropProxy struct {
	addr       string
	layerGets  atomic.Int32
	upstream   string
	layerBytes int64 // blobs at least this big are cut
}

func startDropProxy(t *testing.T, registry string) *dropProxy {
	t.Helper()
	host, _, err := net.SplitHostPort(registry)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0")) // the bridge address: nodes reach it
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{addr: ln.Addr().String(), upstream: registry, layerBytes: 1 << 20}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

func (p *dropProxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	out, err := http.NewRequestWithContext(req.Context(), req.Method, "http://"+p.upstream+req.URL.RequestURI(), req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = req.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	cut := req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") && resp.ContentLength >= p.layerBytes
	w.WriteHeader(resp.StatusCode)
	if !cut {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	p.layerGets.Add(1)
	_, _ = io.CopyN(w, resp.Body, 64<<10)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	// Drop the connection with the layer half sent.
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
		}
	}
}

// TestOCIImportRegistryDropsMidLayer: a layer whose download is cut is
// fetched again (skopeo's retries, then a second copy), then the import
// gives up; images import exits 3 naming the image, and nothing is left in
// the image directory.
func TestOCIImportRegistryDropsMidLayer(t *testing.T) {
	t.Parallel()
	c := setup(t)
	tag := uniqueName("drop")
	img := pushMockImage(t, c, tag)
	p := startDropProxy(t, os.Getenv("SLURMBENCH_CLUSTER_REGISTRY"))
	ref := p.addr + "/slurmbench/mock-engine:" + tag
	dir := filepath.Join(c.Root, "squash-drop-"+tag)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o777)
	defer os.RemoveAll(dir)
	profile := importProfile(t, c, dir)
	// The proxy is plain HTTP too.
	reg := os.Getenv("SLURMBENCH_CLUSTER_REGISTRY")
	if b, err := os.ReadFile(profile); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(profile, []byte(strings.Replace(string(b), `"`+reg+`"`, `"`+reg+`", "`+p.addr+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := imagesImport(ctx, c, profile, ref)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (image)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, ref) {
		t.Errorf("the error does not name the image %s:\n%s", ref, r.stderr)
	}
	if n := p.layerGets.Load(); n < 2 {
		t.Errorf("the layer was fetched %d times, want a retry\n%s%s", n, r.stdout, r.stderr)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range left {
		if !strings.HasSuffix(f, ".lock") && filepath.Base(f) != ".imports" {
			t.Errorf("left in the squash directory: %s", f)
		}
	}
	_ = img
}

// TestOCIImportFullImageDir: an image directory that fills up during the
// import (a small tmpfs, mounted where the nodes see it too) makes images
// import exit 3 naming the directory and the space it had; no partial
// bundle is left, and once there is room the next import succeeds.
func TestOCIImportFullImageDir(t *testing.T) {
	t.Parallel()
	c := setup(t)
	mnt := os.Getenv("SLURMBENCH_CLUSTER_MOUNT_DIR")
	if mnt == "" || os.Geteuid() != 0 {
		msg := "needs root and SLURMBENCH_CLUSTER_MOUNT_DIR (testcluster/up.sh) to mount a small tmpfs the nodes see"
		if os.Getenv("SLURMBENCH_REQUIRE_CLUSTER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	tag := uniqueName("full")
	img := pushMockImage(t, c, tag)
	dir := filepath.Join(mnt, tag)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	mount := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil { //nolint:noctx // a local mount
			t.Fatalf("mount %v: %v\n%s", args, err, out)
		}
	}
	// 8 MiB: less than the layer alone (the static binary, ~12 MiB).
	mount("-t", "tmpfs", "-o", "size=8m,mode=0777", "slurmbench-e2e-full", dir)
	t.Cleanup(func() {
		_ = exec.Command("umount", dir).Run() //nolint:noctx // a local unmount
		_ = os.Remove(dir)
	})
	profile := importProfile(t, c, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := imagesImport(ctx, c, profile, img.Ref)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (image)\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"no space left in " + dir, "needs more than the "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"+oci.Suffix))
	work, _ := oci.AbandonedImports(dir)
	if len(left)+len(work) > 0 {
		t.Errorf("left after the failed import: %v %v", left, work)
	}

	mount("-o", "remount,size=256m", dir)
	r = imagesImport(ctx, c, profile, img.Ref)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "imported\t") {
		t.Fatalf("import with room: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if st := oci.Inspect(bundleOf(t, dir, img.Ref)); st.State != enroot.StateOK || st.Manifest.Digest != img.Digest {
		t.Errorf("bundle after the second import: %+v", st)
	}
}

// TestOCIImportPinnedDigest: a tag@sha256 reference imports by the digest
// (skopeo asks the registry for that manifest, and checks every blob's
// sha256), the sidecar records it, and a digest the registry does not hold
// fails the import with exit 3.
func TestOCIImportPinnedDigest(t *testing.T) {
	t.Parallel()
	c := setup(t)
	tag := uniqueName("pinned")
	img := pushMockImage(t, c, tag)
	profile := importProfile(t, c, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	pinned := img.Ref + "@" + img.Digest
	r := imagesImport(ctx, c, profile, pinned)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "imported\t") {
		t.Fatalf("pinned import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bundle := bundleOf(t, filepath.Join(c.Root, "squash"), pinned)
	defer removeBundle(bundle)
	if st := oci.Inspect(bundle); st.State != enroot.StateOK || st.Manifest.Digest != img.Digest {
		t.Errorf("pinned bundle %s: %+v, want ok with digest %s", bundle, st, img.Digest)
	}

	wrong := img.Ref + "@sha256:" + strings.Repeat("0", 64)
	r = imagesImport(ctx, c, profile, wrong)
	if r.code != 3 {
		t.Fatalf("import of a digest the registry lacks: exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, strings.Repeat("0", 64)) {
		t.Errorf("the error does not name the digest:\n%s", r.stderr)
	}
	if left := bundleOf(t, filepath.Join(c.Root, "squash"), wrong); fileExists(left) {
		t.Errorf("a bundle for the missing digest: %s", left)
	}
}
