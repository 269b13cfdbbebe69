package runner

import (
	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// ImageDigest is the registry digest of the image a run started, for the
// staged manifest: what the squash file's sidecar recorded when it was
// imported (the digest enroot imported by), else the digest pinned in the
// reference; "" for a local squash or an import whose enroot could not tell.
// It is read at staging, after prepare imported the image.
func ImageDigest(pl *plan.Plan) string {
	if pl.Image.Squash != "" {
		if m, err := enroot.ReadManifest(pl.Image.Squash); err == nil && m.Digest != "" {
			return m.Digest
		}
	}
	if pl.Image.Ref != "" {
		if ref, err := enroot.ParseRef(pl.Image.Ref); err == nil {
			return ref.Digest
		}
	}
	return ""
}
