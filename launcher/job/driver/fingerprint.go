package driver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// inheritFingerprints copies the fingerprints of the held servers (written
// when run from started them) into run to's own directory, so the manifest
// of a run measured on servers another run started still says what those
// servers ran. Only servers are copied: to's benchmark and eval write their
// own.
func inheritFingerprints(from, to *plan.Plan) error {
	src, dst := from.Layout.Fingerprints(), to.Layout.Fingerprints()
	var errs []error
	for _, proc := range from.Processes {
		if !plan.IsServer(proc.Role) {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(src, proc.Name+".task*.json"))
		for _, f := range files {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return fmt.Errorf("fingerprints: %w", err)
			}
			if err := atomicfile.CopyFile(f, filepath.Join(dst, filepath.Base(f)), atomicfile.Options{Overwrite: true, Perm: 0o644}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
