package launch

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/slurmbench/slurmbench/enroot"
)

// TestImagesListShowsOCIBundles: the oci runtime's bundles share the
// squash directory and images ls shows them beside the squash files, whole
// or broken; import work directories are not bundles.
func TestImagesListShowsOCIBundles(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "nvcr.io_nvidia_x_1.oci")
	if err := os.MkdirAll(filepath.Join(whole, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"ociVersion": "1.0.0", "process": {"args": ["/bin/sh"]}, "root": {"path": "rootfs"}}`
	if err := os.WriteFile(filepath.Join(whole, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"broken.oci", ".nvcr.io_nvidia_x_1.oci.import-123/bundle"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	err := ImagesList(context.Background(), ImagesOptions{IO: IO{Stdout: &out, Stderr: &errOut, JSON: true}, SquashDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var rows []ImageListing
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	states := map[string]enroot.State{}
	for _, r := range rows {
		states[r.File] = r.State
	}
	if len(rows) != 2 || states["nvcr.io_nvidia_x_1.oci"] != enroot.StateUnrecorded || states["broken.oci"] != enroot.StateInvalid {
		t.Errorf("rows %+v, want the whole bundle unrecorded and the broken one invalid", rows)
	}
	if !bytes.Contains(errOut.Bytes(), []byte(".oci.import-123")) {
		t.Errorf("the import directory is not reported:\n%s", errOut.String())
	}
}
