package enroot

import (
	"context"
	"fmt"
	"regexp"
	"time"

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

// digestAttempts bounds how often a digest the registry failed to give
// for a passing reason is asked for.
const digestAttempts = 3

// defaultDigestBackoff is the wait before the second attempt; it doubles.
const defaultDigestBackoff = 2 * time.Second

// transientRegistry is enroot's output for a failure that may pass: a
// server error, a timeout or throttling as common::curl reports them
// ("URL ... returned error code: 500 Internal Server Error"), or curl's own
// for a connection that failed (6 host, 7 connect, 28 timeout, 35 TLS, 52
// empty reply, 56 receive). A registry under concurrent pushes answered a
// manifest HEAD with 500 ("invalid checksum digest format") in the test
// cluster: the import then went by tag and lost its digest.
var transientRegistry = regexp.MustCompile(`returned error code: (5[0-9][0-9]|408|429)\b|curl: \((6|7|28|35|52|56)\)`)

// resolveDigestRetrying is ResolveDigest asked again, up to digestAttempts
// times, while enroot reports a registry failure that may pass. Any other
// failure (enroot 3.x has no digest command, a tag that does not exist)
// is returned at once.
func (im *Importer) resolveDigestRetrying(ctx context.Context, ref Ref) (string, error) {
	var digest string
	err := im.retrying(ctx, "resolving "+ref.String()+"'s digest", digestAttempts, im.digestBackoff, func() (bool, error) {
		d, err := im.ResolveDigest(ctx, ref)
		digest = d
		return err != nil && transientRegistry.MatchString(err.Error()), err
	})
	return digest, err
}

// retrying runs try until it succeeds, says its failure will not pass, or
// has run attempts times, waiting backoff (doubled each time) between
// tries. An interrupt ends it with the interrupt's cause.
func (im *Importer) retrying(ctx context.Context, what string, attempts int, backoff time.Duration, try func() (again bool, err error)) error {
	for attempt := 1; ; attempt++ {
		again, err := try()
		if err == nil || !again || attempt == attempts || ctx.Err() != nil {
			return err
		}
		im.opts.Logf("%s failed (attempt %d of %d), trying again in %s: %v", what, attempt, attempts, backoff, err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", what, context.Cause(ctx))
		case <-t.C:
		}
		backoff *= 2
	}
}
