package enroot

import (
	"context"
	"fmt"
	"regexp"

	"github.com/slurmbench/slurmbench/internal/tailbuf"
)

// digestInOutput is a registry content digest as `enroot digest` prints it.
var digestInOutput = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

// ResolveDigest asks the registry, through `enroot digest` (enroot 4.x; run
// where Options.Runner runs imports), which manifest digest ref's tag
// points at now. The answer is the last sha256:… in enroot's output (a
// Slurm runner returns the job's whole output, log lines included).
func (im *Importer) ResolveDigest(ctx context.Context, ref Ref) (string, error) {
	if ref.IsLocal() {
		return "", fmt.Errorf("%s is a local squash file: it has no registry digest", ref.Path)
	}
	if ref.Digest != "" {
		return ref.Digest, nil
	}
	args := []string{"digest"}
	if im.opts.Arch != "" {
		args = append(args, "--arch", im.opts.Arch)
	}
	args = append(args, ref.EnrootURI())
	out := tailbuf.New(16 << 10)
	if err := im.opts.Runner.Run(ctx, Command{Path: im.opts.Enroot, Args: args, Stdout: out, Stderr: out}); err != nil {
		return "", fmt.Errorf("enroot digest %s failed: %w%s", ref.EnrootURI(), err, quoteTail(out))
	}
	found := digestInOutput.FindAllString(out.Last(outputTailLines), -1)
	if len(found) == 0 {
		return "", fmt.Errorf("enroot digest %s printed no sha256 digest%s", ref.EnrootURI(), quoteTail(out))
	}
	return found[len(found)-1], nil
}
