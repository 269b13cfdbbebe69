package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// ExporterProvenanceFile names what produced a power run's GPU samples:
// InferenceX's launcher writes it into the workspace on a power lane and
// stages it into LOGS/power beside power-producer-sha.txt for the power
// audit (inferencex-e2e/infx/launch/drivers/srt/config.py stored id
// 71004434997, EXPORTER_PROVENANCE; collect.py@4847f2da, _stage_logs and
// finish_single_node).
const ExporterProvenanceFile = "exporter-image.sha256"

// ExporterProvenance is the file's line for the exporter image, as
// InferenceX's image_provenance gives it
// (backends/slurm/__init__.py@fc6a81ef): a squash file (an absolute path)
// as sha256sum prints it, "<hex>  <path>"; a registry reference as itself.
func ExporterProvenance(image string) (string, error) {
	if !filepath.IsAbs(image) {
		return image, nil
	}
	f, err := os.Open(image)
	if err != nil {
		return "", fmt.Errorf("exporter image %s: %w", image, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("exporter image %s: %w", image, err)
	}
	return hex.EncodeToString(h.Sum(nil)) + "  " + image, nil
}

// writeStamp writes one line, value, to dir/name atomically.
func writeStamp(dir, name, value string) error {
	if dir == "" {
		return nil
	}
	return writeFile(filepath.Join(dir, name), []byte(value+"\n"))
}

// writeFile replaces path atomically with data.
func writeFile(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, atomicfile.Options{Overwrite: true}); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
