package runners

import (
	"errors"
	"fmt"
	"os"

	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// CreateMountHosts creates the host directories of the volumes r's job on
// c mounts (JobMounts), as InferenceX's launcher does before it submits
// (config.py@eacb6075 create_volume_mounts, lane_mounts), so the container
// runtime finds them; those shared by every runner user are opened to all
// (best effort, as theirs). A node-local volume exists only on the nodes
// and is left to them. `slurmbench run` (the workflow step) and `matrix`
// both call it before they submit.
func (c *Cluster) CreateMountHosts(r srtlanes.Request) error {
	var errs []error
	for _, m := range c.JobMounts(r) {
		if c.Slurm.Volumes[m.Volume].Visibility == NodeLocal || m.Host == "" {
			continue
		}
		if err := os.MkdirAll(m.Host, 0o755); err != nil {
			errs = append(errs, fmt.Errorf("creating the host side of %s (%s): %w", m.From, m.Host, err))
			continue
		}
		if m.WorldWritable {
			_ = os.Chmod(m.Host, 0o777) // best effort: another user may own it
		}
	}
	return errors.Join(errs...)
}
