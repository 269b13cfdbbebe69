package launch

import (
	"context"
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

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/enroot/oci"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/progress"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// squashDirEnv is the fallback for --squash-dir when no profile names one.
const squashDirEnv = "SLURMBENCH_SQUASH_DIR"

// ImagesOptions are the images commands' common options.
type ImagesOptions struct {
	IO
	Profile   string // may be ""
	SquashDir string // --squash-dir; "" the profile's, then $SLURMBENCH_SQUASH_DIR
}

// ImportOptions are `images import`'s.
type ImportOptions struct {
	ImagesOptions
	Images      []string // references or profile aliases; none: every registry image of the profile
	LockTimeout time.Duration
	Enroot      string
	EnrootSet   bool // --enroot given: it wins over the profile's
	Arch        string
	ScratchDir  string
	Checksum    bool
}

// imagesSetup loads --profile if given and picks the squash directory:
// --squash-dir, then the profile's, then the environment's; the explicit
// choice wins over the ambient one.
func imagesSetup(ctx context.Context, o ImagesOptions) (*profile.Profile, string, error) {
	var p *profile.Profile
	if o.Profile != "" {
		var err error
		if p, err = LoadProfile(ctx, o.Profile); err != nil {
			return nil, "", err
		}
	}
	dir, err := squashDir(o.SquashDir, p)
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
		return "", exitcode.Errorf(exitcode.Config, "no squash directory: give --squash-dir, a --profile with paths.squash_dir, or $%s", squashDirEnv)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", exitcode.Errorf(exitcode.Config, "squash directory %q: %v", dir, err)
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return "", exitcode.Errorf(exitcode.Config, "squash directory %s: not an existing directory", abs)
	}
	return abs, nil
}

// ImagesImport is `images import`: each image (or every registry image of
// the profile) gets a valid squash file, imported where run would import it.
func ImagesImport(ctx context.Context, o ImportOptions) error {
	p, dir, err := imagesSetup(ctx, o.ImagesOptions)
	if err != nil {
		return err
	}
	if p != nil && p.ImportOnNodes() && o.SquashDir == "" {
		return exitcode.Errorf(exitcode.Config, "profile %s: images are imported on each node by the job (container.import_on = %q, a node-local squash cache): there is no shared cache to fill here (give --squash-dir to import into one)", p.Path, profile.ImportOnNodes)
	}
	refs, err := importRefs(o.Images, p)
	if err != nil {
		return err
	}
	enrootProg := o.Enroot
	arch := o.Arch
	var runner enroot.Runner
	if p != nil && arch == "" {
		// Where and for which architecture: the same decision as run's.
		arch = p.ImportArch()
		if p.ImportOnCompute() {
			client, err := p.SlurmClient()
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			runner = ImportRunner(p, client, nil, o.Stderr)
			fmt.Fprintf(o.Stderr, "importing on a %s compute node (a one-node job in partition %s)\n", p.ComputeArch(), p.Slurm.Partition)
		} else if arch != "" {
			fmt.Fprintf(o.Stderr, "compute nodes are %s, this machine is %s: importing here with enroot import --arch %s\n", arch, profile.GoArch(), arch)
		}
		if !o.EnrootSet && p.Container.Enroot != "" {
			enrootProg = p.Container.Enroot
		}
	}
	scratch := o.ScratchDir
	if scratch != "" {
		if scratch, err = filepath.Abs(scratch); err != nil {
			return exitcode.Errorf(exitcode.Config, "--scratch-dir: %v", err)
		}
	}
	logf := func(format string, args ...any) { fmt.Fprintf(o.Stderr, format+"\n", args...) }
	var im imageImporter
	if p != nil && p.Container.Runtime == profile.RuntimeOCI {
		im, err = ociImporter(p, dir, runner, o.LockTimeout, o.Version, logf, o.Stderr)
	} else {
		im, err = enroot.NewImporter(enroot.Options{
			SquashDir:   dir,
			ScratchDir:  scratch,
			LockTimeout: o.LockTimeout,
			Enroot:      enrootProg,
			Arch:        arch,
			Runner:      runner,
			Checksum:    o.Checksum,
			Version:     o.Version,
			// The sidecar (and so every staged manifest) names the digest imported.
			ResolveDigest: true,
			Logf:          logf,
			Output:        o.Stderr,
		})
	}
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "%v", err)
	}
	// Every image is tried; one failure does not hide the others.
	var errs []error
	for _, ref := range refs {
		stop := progress.New(o.Stderr).Elapsed("importing " + ref.String())
		res, err := im.Import(ctx, ref)
		stop()
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		fmt.Fprintf(o.Stderr, "%s %s: %s, %s in %s\n", res.Action, ref, res.Path, humanBytes(res.Size), res.Elapsed.Round(time.Millisecond))
		fmt.Fprintf(o.Stdout, "%s\t%s\t%s\n", res.Action, ref, res.Path)
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
			return nil, exitcode.Errorf(exitcode.Config, "no image given (and no --profile with [containers] to import)")
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
		return nil, exitcode.Errorf(exitcode.Config, "%s", strings.Join(bad, "; "))
	}
	return refs, nil
}

// ImageListing is one row of images ls --json.
type ImageListing struct {
	File       string       `json:"file"`
	Path       string       `json:"path"`
	Ref        string       `json:"ref,omitempty"`
	State      enroot.State `json:"state"`
	Size       int64        `json:"size"`
	ModTime    time.Time    `json:"mtime"`
	AgeSeconds int64        `json:"age_seconds"`
	Problem    string       `json:"problem,omitempty"`
}

// ImagesList is `images ls`.
func ImagesList(ctx context.Context, o ImagesOptions) error {
	_, dir, err := imagesSetup(ctx, o)
	if err != nil {
		return err
	}
	list, err := enroot.List(dir)
	if err != nil {
		return exitcode.With(exitcode.Image, err)
	}
	// The oci runtime's bundles share the directory.
	bundles, err := oci.List(dir)
	if err != nil {
		return exitcode.With(exitcode.Image, err)
	}
	list = append(list, bundles...)
	sort.Slice(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	now := time.Now()
	rows := make([]ImageListing, len(list))
	for i, st := range list {
		rows[i] = ImageListing{
			File: filepath.Base(st.Path), Path: st.Path, State: st.State, Size: st.Size,
			ModTime: st.ModTime, AgeSeconds: int64(now.Sub(st.ModTime).Seconds()), Problem: st.Problem,
		}
		if st.Manifest != nil {
			rows[i].Ref = st.Manifest.Ref
		}
	}
	abandoned, _ := enroot.AbandonedImports(dir)
	ociWork, _ := oci.AbandonedImports(dir)
	if abandoned = append(abandoned, ociWork...); len(abandoned) > 0 {
		sort.Strings(abandoned)
		fmt.Fprintf(o.Stderr, "%d import directories in %s belong to running or killed imports (removed by the next import of the same image once 12 h old):\n  %s\n",
			len(abandoned), dir, strings.Join(abandoned, "\n  "))
	}
	if o.JSON {
		enc := json.NewEncoder(o.Stdout) // rows is never nil: an empty list is []
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintf(o.Stdout, "no images in %s (slurmbench images import IMAGE adds one)\n", dir)
		return err
	}
	tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
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

// imageImporter is enroot's or the oci runtime's importer: both leave the
// image where run's plan expects it and say what they did.
type imageImporter interface {
	Import(ctx context.Context, ref enroot.Ref) (enroot.Result, error)
}

// ociImporter imports for container.runtime "oci": skopeo and umoci (the
// profile's, or from PATH) where runner runs them, into dir.
func ociImporter(p *profile.Profile, dir string, runner enroot.Runner, lockTimeout time.Duration, version string, logf func(string, ...any), out io.Writer) (*oci.Importer, error) {
	return oci.NewImporter(oci.Options{
		Dir: dir, Skopeo: p.Container.Skopeo, Umoci: p.Container.Umoci, Insecure: p.Container.InsecureRegistries,
		Arch: oci.ArchName(p.ImportArch()), Runner: runner, LockTimeout: lockTimeout, Version: version, Logf: logf, Output: out,
	})
}
