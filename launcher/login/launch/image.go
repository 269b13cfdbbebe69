package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/internal/progress"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/slurm"
)

// ImportImage makes the plan's squash file exist, importing under a lock.
func ImportImage(ctx context.Context, prof *profile.Profile, client *slurm.Client, pl *plan.Plan, log io.Writer, version string) error {
	if pl.Image.Ref == "" || pl.Runtime == profile.RuntimeNone {
		return nil
	}
	if prof.ImportOnNodes() {
		// The squash cache is on each node's own disk: the job imports the
		// image on every node (the plan's image steps) before it starts
		// anything there.
		fmt.Fprintf(log, "image %s: imported by the job on each of its nodes into %s\n", pl.Image.Ref, pl.Image.Squash)
		return nil
	}
	ref, err := enroot.ParseRef(pl.Image.Ref)
	if err != nil {
		return err
	}
	opts := enroot.Options{SquashDir: prof.Paths.SquashDir, Enroot: prof.Container.Enroot, Version: version, Output: log,
		Arch: prof.ImportArch(), Runner: ImportRunner(prof, client, JobEnv(pl)[:1], log), ResolveDigest: true}
	if prof.ImportOnCompute() && client == nil {
		opts.Runner = noImportJob{}
	}
	importLockOptions(&opts, pl.Image)
	var imp imageImporter
	if pl.Runtime == profile.RuntimeOCI {
		// The bundle the plan names (plan.Image.Squash) is the importer's
		// BundlePath in the same directory.
		logf := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
		imp, err = ociImporter(prof, prof.Paths.SquashDir, opts.Runner, 0, version, logf, log)
	} else {
		imp, err = enroot.NewImporter(opts)
	}
	if err != nil {
		return err
	}
	stop := progress.New(log).Elapsed("importing " + ref.String())
	r, err := imp.Import(ctx, ref)
	stop()
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s image %s: %s (%s)\n", time.Now().UTC().Format("15:04:05"), r.Action, r.Path, r.Elapsed.Round(time.Millisecond))
	return nil
}

// ImportRunner runs enroot where prof says images are imported: nil (this
// machine) or a one-node Slurm job on a compute node, so the image is
// unpacked for the architecture it runs on. run and images import share it
// and profile's ImportOnCompute/ImportArch, so they decide alike.
func ImportRunner(prof *profile.Profile, client *slurm.Client, env []string, log io.Writer) enroot.Runner {
	if !prof.ImportOnCompute() {
		return nil
	}
	tl := time.Duration(prof.Slurm.ImportTimeLimitMinutes()) * time.Minute
	return submit.SlurmRunner{Client: client, Partition: prof.Slurm.Partition, Account: prof.Slurm.Account,
		TimeLimit: tl, WorkDir: filepath.Join(prof.Paths.SquashDir, ".imports"), Env: env, Progress: log, Owner: prof.Paths.Owner}
}

// JobEnv is the job's environment: a PATH, the profile's passthrough
// variables (values travel here, never in argv), and the workflow's own.
func JobEnv(pl *plan.Plan) []string {
	path := os.Getenv("SLURMBENCH_JOB_PATH")
	if path == "" {
		path = slurm.DefaultJobEnvironment[0][len("PATH="):]
	}
	env := []string{"PATH=" + path}
	seen := map[string]bool{"PATH": true}
	// post_eval's variables too (the eval takes them from the job's environment).
	for _, n := range append(append(append([]string{}, pl.EnvPassthrough...), workflowVars...), pl.Eval.Passenv...) {
		if v, ok := os.LookupEnv(n); ok && !seen[n] {
			env = append(env, n+"="+v)
			seen[n] = true
		}
	}
	// Prefixes after names, in the environment's sorted order so the job
	// spec is the same for the same environment.
	prefixes := append(append([]string{}, workflowPrefixes...), pl.EnvPassthroughPrefixes...)
	vars := os.Environ()
	sort.Strings(vars)
	for _, kv := range vars {
		n, v, ok := strings.Cut(kv, "=")
		if !ok || seen[n] || !hasAnyPrefix(n, prefixes) {
			continue
		}
		env = append(env, n+"="+v)
		seen[n] = true
	}
	return env
}

// noImportJob stands for the import job a run without slurmrestd (inside
// an allocation, no token) cannot submit: a squash already in the cache is
// used, anything else is an error saying what to do.
type noImportJob struct{}

func (noImportJob) Run(context.Context, enroot.Command) error {
	return errors.New("the image is not in the squash cache and importing it for the compute nodes' architecture needs a job, submitted through slurmrestd, which this run cannot reach: import it first (slurmbench images import)")
}
