package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/login/submit"
	"github.com/slurmbench/slurmbench/slurm"
)

// squashDirEnv is the fallback for --squash-dir when no profile names one.
const squashDirEnv = "SLURMBENCH_SQUASH_DIR"

func imagesCommand() *cli.Command {
	dirFlags := []cli.Flag{
		&cli.StringFlag{Name: "squash-dir", Usage: "shared directory of .sqsh images (default: the profile's paths.squash_dir, then $" + squashDirEnv + ")"},
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "cluster profile (TOML): squash directory, container aliases, compute_arch", EnvVars: []string{"SLURMBENCH_PROFILE"}},
	}
	return &cli.Command{
		Name:  "images",
		Usage: "import container images into the shared squash directory, and list them",
		Subcommands: []*cli.Command{
			{
				Name:      "import",
				Usage:     "import images with enroot, once, under a lock, atomically",
				UsageText: "slurmbench images import [--profile FILE] [--squash-dir DIR] [IMAGE|ALIAS ...]",
				Description: `Makes sure each image has a valid squash file in the squash directory and
prints "ACTION<TAB>IMAGE<TAB>PATH" for it; ACTION is cached (sidecar matched),
validated (an existing file was checked and adopted), imported or local.

IMAGE is lmsysorg/sglang:TAG, nvcr.io/nvidia/x:TAG, nvcr.io#nvidia/x:TAG,
REPO:TAG@sha256:HEX or an absolute .sqsh path; ALIAS is a key of the profile's
[containers]. Without arguments, every registry image of the profile is
imported. File names are the InferenceX runners' ([/:@#] -> _ plus .sqsh), so
their caches are reused. Concurrent imports of one image (other shells, other
nodes) wait for each other; readers never see a half-written file.

Where and for which architecture is decided as run decides it: when the
profile's slurm.compute_arch differs from this machine's, each image is
imported on a compute node (a one-node job in slurm.partition), where it
will run; container.import_on = "login" imports here with enroot import
--arch instead, "compute" always on a node. --arch forces an import here
for that architecture.

Exit status: 0 done, 2 bad image or flag, 3 an import failed.`,
				Flags: append(dirFlags,
					&cli.DurationFlag{Name: "lock-timeout", Value: enroot.DefaultLockTimeout, Usage: "how long to wait for another import of the same image"},
					&cli.StringFlag{Name: "enroot", Value: enroot.DefaultEnroot, Usage: "enroot program", EnvVars: []string{"SLURMBENCH_ENROOT"}},
					&cli.StringFlag{Name: "arch", Usage: "image architecture for enroot import --arch (default: the profile's slurm.compute_arch when it differs from this machine's)"},
					&cli.StringFlag{Name: "scratch-dir", Usage: "where enroot unpacks layers (default: next to the target; use node-local disk when the squash directory is root-squashed NFS)"},
					&cli.BoolFlag{Name: "checksum", Usage: "record the SHA-256 of newly imported files in their sidecars"},
				),
				Action: imagesImport,
			},
			{
				Name:      "ls",
				Usage:     "list squash files with their image, size, age and state",
				UsageText: "slurmbench images ls [--profile FILE] [--squash-dir DIR] [--json]",
				Description: `States: ok (the sidecar matches the file), unrecorded (no sidecar, the file
validates; e.g. imported by the InferenceX runners), stale (the sidecar does
not match, the file validates), invalid (not a complete squashfs image).
Nothing is written.`,
				Flags:  append(dirFlags, &cli.BoolFlag{Name: "json", Usage: "print a JSON array"}),
				Action: imagesList,
			},
		},
	}
}

// imagesSetup loads --profile if given and picks the squash directory:
// --squash-dir, then the profile's, then the environment's; the explicit
// choice wins over the ambient one.
func imagesSetup(c *cli.Context) (*profile.Profile, string, error) {
	var p *profile.Profile
	if c.String("profile") != "" {
		var err error
		if p, err = profile.Load(c.String("profile")); err != nil {
			return nil, "", configErrorf("%v", err)
		}
	}
	dir, err := squashDir(c.String("squash-dir"), p)
	return p, dir, err
}

func squashDir(dir string, p *profile.Profile) (string, error) {
	if dir == "" && p != nil {
		dir = p.Paths.SquashDir
	}
	if dir == "" {
		dir = os.Getenv(squashDirEnv)
	}
	if dir == "" {
		return "", configErrorf("no squash directory: give --squash-dir, a --profile with paths.squash_dir, or $%s", squashDirEnv)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", configErrorf("squash directory %q: %v", dir, err)
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return "", configErrorf("squash directory %s: not an existing directory", abs)
	}
	return abs, nil
}

// importRunner runs enroot where prof says images are imported: nil (this
// machine) or a one-node Slurm job on a compute node, so the image is
// unpacked for the architecture it runs on. run and images import share it
// and profile's ImportOnCompute/ImportArch, so they decide alike.
func importRunner(prof *profile.Profile, client *slurm.Client, env []string, log io.Writer) enroot.Runner {
	if !prof.ImportOnCompute() {
		return nil
	}
	tl := time.Duration(prof.Slurm.ImportTimeLimitMinutes()) * time.Minute
	return submit.SlurmRunner{Client: client, Partition: prof.Slurm.Partition, Account: prof.Slurm.Account,
		TimeLimit: tl, WorkDir: filepath.Join(prof.Paths.SquashDir, ".imports"), Env: env, Progress: log, Owner: prof.Paths.Owner}
}

func imagesImport(c *cli.Context) error {
	p, dir, err := imagesSetup(c)
	if err != nil {
		return err
	}
	refs, err := importRefs(c.Args().Slice(), p)
	if err != nil {
		return err
	}
	enrootProg := c.String("enroot")
	arch := c.String("arch")
	var runner enroot.Runner
	if p != nil && arch == "" {
		// Where and for which architecture: the same decision as run's.
		arch = p.ImportArch()
		if p.ImportOnCompute() {
			client, err := newSlurmClient(c.Context, p)
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			runner = importRunner(p, client, nil, c.App.ErrWriter)
			fmt.Fprintf(c.App.ErrWriter, "importing on a %s compute node (a one-node job in partition %s)\n", p.ComputeArch(), p.Slurm.Partition)
		} else if arch != "" {
			fmt.Fprintf(c.App.ErrWriter, "compute nodes are %s, this machine is %s: importing here with enroot import --arch %s\n", arch, profile.GoArch(), arch)
		}
		if !c.IsSet("enroot") && p.Container.Enroot != "" {
			enrootProg = p.Container.Enroot
		}
	}
	scratch := c.String("scratch-dir")
	if scratch != "" {
		if scratch, err = filepath.Abs(scratch); err != nil {
			return configErrorf("--scratch-dir: %v", err)
		}
	}
	im, err := enroot.NewImporter(enroot.Options{
		SquashDir:   dir,
		ScratchDir:  scratch,
		LockTimeout: c.Duration("lock-timeout"),
		Enroot:      enrootProg,
		Arch:        arch,
		Runner:      runner,
		Checksum:    c.Bool("checksum"),
		Version:     version,
		// The sidecar (and so every staged manifest) names the digest imported.
		ResolveDigest: true,
		Logf:          func(format string, args ...any) { fmt.Fprintf(c.App.ErrWriter, format+"\n", args...) },
		Output:        c.App.ErrWriter,
	})
	if err != nil {
		return configErrorf("%v", err)
	}
	// Every image is tried; one failure does not hide the others.
	var errs []error
	for _, ref := range refs {
		res, err := im.Import(c.Context, ref)
		if err != nil {
			errs = append(errs, err)
			if c.Context.Err() != nil {
				break
			}
			continue
		}
		fmt.Fprintf(c.App.ErrWriter, "%s %s: %s, %s in %s\n", res.Action, ref, res.Path, humanBytes(res.Size), res.Elapsed.Round(time.Millisecond))
		fmt.Fprintf(c.App.Writer, "%s\t%s\t%s\n", res.Action, ref, res.Path)
	}
	if len(errs) > 0 {
		return exitcode.With(exitcode.Image, errors.Join(errs...))
	}
	return nil
}

// importRefs turns arguments (images or profile aliases) into references,
// checking all of them before anything is imported.
func importRefs(args []string, p *profile.Profile) ([]enroot.Ref, error) {
	if len(args) == 0 {
		if p == nil || len(p.Containers) == 0 {
			return nil, configErrorf("no image given (and no --profile with [containers] to import)")
		}
		for _, alias := range profile.SortedKeys(p.Containers) {
			if r, err := enroot.ParseRef(p.Containers[alias]); err == nil && r.IsLocal() {
				continue
			}
			args = append(args, alias)
		}
	}
	var refs []enroot.Ref
	var bad []string
	for _, arg := range args {
		text := arg
		if p != nil {
			if v, ok := p.Containers[arg]; ok {
				text = v
			}
		}
		r, err := enroot.ParseRef(text)
		if err != nil {
			if text != arg {
				err = fmt.Errorf("containers.%s: %w", arg, err)
			}
			bad = append(bad, err.Error())
			continue
		}
		refs = append(refs, r)
	}
	if len(bad) > 0 {
		return nil, configErrorf("%s", strings.Join(bad, "; "))
	}
	return refs, nil
}

// imageListing is one row of images ls --json.
type imageListing struct {
	File       string       `json:"file"`
	Path       string       `json:"path"`
	Ref        string       `json:"ref,omitempty"`
	State      enroot.State `json:"state"`
	Size       int64        `json:"size"`
	ModTime    time.Time    `json:"mtime"`
	AgeSeconds int64        `json:"age_seconds"`
	Problem    string       `json:"problem,omitempty"`
}

func imagesList(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("images ls takes no arguments, got %q", c.Args().First())
	}
	_, dir, err := imagesSetup(c)
	if err != nil {
		return err
	}
	list, err := enroot.List(dir)
	if err != nil {
		return exitcode.With(exitcode.Image, err)
	}
	now := time.Now()
	rows := make([]imageListing, len(list))
	for i, st := range list {
		rows[i] = imageListing{
			File: filepath.Base(st.Path), Path: st.Path, State: st.State, Size: st.Size,
			ModTime: st.ModTime, AgeSeconds: int64(now.Sub(st.ModTime).Seconds()), Problem: st.Problem,
		}
		if st.Manifest != nil {
			rows[i].Ref = st.Manifest.Ref
		}
	}
	if abandoned, _ := enroot.AbandonedImports(dir); len(abandoned) > 0 {
		sort.Strings(abandoned)
		fmt.Fprintf(c.App.ErrWriter, "%d import directories in %s belong to running or killed imports (removed by the next import of the same image once 12 h old):\n  %s\n",
			len(abandoned), dir, strings.Join(abandoned, "\n  "))
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer) // rows is never nil: an empty list is []
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tSIZE\tAGE\tIMAGE\tFILE")
	for _, r := range rows {
		ref := r.Ref
		if ref == "" {
			ref = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.State, humanBytes(r.Size), humanAge(now.Sub(r.ModTime)), ref, r.File)
	}
	return tw.Flush()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func humanAge(d time.Duration) string {
	switch {
	case d < 0:
		return "future"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
