package workflow

import (
	"fmt"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

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
