package dynamoinstall

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// CommandOptions are `dynamo-install`'s: Options as its flags give them,
// and which signal stopped the command once ctx is done (nil: SIGTERM's
// 143).
type CommandOptions struct {
	Options
	Interrupted func() exitcode.Code
}

// RunCommand is `dynamo-install`: it checks the flags (exactly one source,
// absolute directories, a valid source) before Python is asked anything,
// installs, and says what it did. A bad flag exits 2; a failed install
// exits 7 (the engine layer), or with the signal's code once ctx is done.
func RunCommand(ctx context.Context, o CommandOptions) error {
	d := o.Dynamo
	d.Install = true
	if d.Git != "" && d.Hash == "" {
		return exitcode.Errorf(exitcode.Config, "--git builds from source: it needs --hash")
	}
	n := 0
	for _, s := range []string{d.Version, d.Wheel, d.Hash, d.TopOfTree} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return exitcode.Errorf(exitcode.Config, "dynamo-install takes exactly one of --version, --wheel, --hash and --top-of-tree")
	}
	if d.Cache == "" {
		return exitcode.Errorf(exitcode.Config, "--cache: required (the wheel cache on the shared filesystem)")
	}
	if !filepath.IsAbs(d.Cache) {
		return exitcode.Errorf(exitcode.Config, "--cache %q: not an absolute path", d.Cache)
	}
	if !filepath.IsAbs(o.Tmp) {
		return exitcode.Errorf(exitcode.Config, "--tmp %q: not an absolute path", o.Tmp)
	}
	// The source is checked before Python is asked anything.
	if _, _, err := d.Source(); err != nil {
		return exitcode.Errorf(exitcode.Config, "%v", err)
	}
	o.Dynamo = d
	start := time.Now()
	res, err := Install(ctx, o.Options)
	if err != nil {
		// A failure after ctx ended is the signal's, any other the engine
		// layer's (as the in-job steps classify theirs).
		code := exitcode.Engine
		if ctx.Err() != nil {
			code = exitcode.Terminated
			if o.Interrupted != nil {
				code = o.Interrupted()
			}
		}
		return exitcode.With(code, fmt.Errorf("dynamo-install: %w", err))
	}
	took := time.Since(start).Round(100 * time.Millisecond)
	switch {
	case !res.Installed:
		fmt.Fprintf(o.Stdout, "dynamo-install: %s already installed in this container\n", res.Key)
	case res.Fetched:
		fmt.Fprintf(o.Stdout, "dynamo-install: %s fetched into %s and installed in %s\n", res.Key, res.Entry, took)
	default:
		fmt.Fprintf(o.Stdout, "dynamo-install: %s installed from %s in %s\n", res.Key, res.Entry, took)
	}
	return nil
}
