package runner

import (
	"slices"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/internal/fingerprint"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// runtimeProvenance completes the manifest's provenance with what only the
// job knows: every step's fingerprint (argv, environment names, packages,
// GPUs and driver, read in its container), the image's digest (pinned in
// its reference, else none) and its squash file's sha256 when the import
// recorded one, and the --set/--unset edits.
func runtimeProvenance(pl *plan.Plan, p *results.Provenance) {
	recs, problems := fingerprint.ReadDir(pl.Layout.Fingerprints())
	var steps []string
	for _, proc := range pl.Processes {
		steps = append(steps, proc.Name)
	}
	p.Runtime = results.RuntimeOf(recs, steps, problems)
	p.Overrides = slices.Clone(pl.Recipe.Overrides)
	if p.ImageDigest == "" {
		p.ImageDigest = ImageDigest(pl)
	}
	if pl.Image.Squash != "" {
		if m, err := enroot.ReadManifest(pl.Image.Squash); err == nil && m.SHA256 != "" {
			p.ImageSquashSHA256 = m.SHA256
		}
	}
}
