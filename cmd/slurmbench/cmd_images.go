package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

func imagesCommand() *cli.Command {
	dirFlags := []cli.Flag{
		&cli.StringFlag{Name: "squash-dir", Usage: "shared directory of .sqsh images (default: the profile's paths.squash_dir, then $" + "SLURMBENCH_SQUASH_DIR" + ")"},
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
					&cli.GenericFlag{Name: "lock-timeout", Usage: "how long to wait for another import of the same image", Value: duration.New(enroot.DefaultLockTimeout, duration.Wait)},
					&cli.StringFlag{Name: "enroot", Value: enroot.DefaultEnroot, Usage: "enroot program", EnvVars: []string{"SLURMBENCH_ENROOT"}},
					&cli.StringFlag{Name: "arch", Usage: "image architecture for enroot import --arch (default: the profile's slurm.compute_arch when it differs from this machine's)"},
					&cli.StringFlag{Name: "scratch-dir", Usage: "where enroot unpacks layers (default: next to the target; use node-local disk when the squash directory is root-squashed NFS)"},
					&cli.BoolFlag{Name: "checksum", Usage: "record the SHA-256 of newly imported files in their sidecars"},
				),
				Action: func(c *cli.Context) error {
					return launch.ImagesImport(c.Context, launch.ImportOptions{ImagesOptions: imagesOptions(c), Images: c.Args().Slice(),
						LockTimeout: durationOf(c, "lock-timeout"), Enroot: c.String("enroot"), EnrootSet: c.IsSet("enroot"),
						Arch: c.String("arch"), ScratchDir: c.String("scratch-dir"), Checksum: c.Bool("checksum")})
				},
			},
			{
				Name:      "ls",
				Usage:     "list squash files with their image, size, age and state",
				UsageText: "slurmbench images ls [--profile FILE] [--squash-dir DIR] [--json]",
				Description: `States: ok (the sidecar matches the file), unrecorded (no sidecar, the file
validates; e.g. imported by the InferenceX runners), stale (the sidecar does
not match, the file validates), invalid (not a complete squashfs image).
Nothing is written.`,
				Flags: append(dirFlags, &cli.BoolFlag{Name: "json", Usage: "print a JSON array"}),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return configErrorf("images ls takes no arguments, got %q", c.Args().First())
					}
					return launch.ImagesList(c.Context, imagesOptions(c))
				},
			},
		},
	}
}

func imagesOptions(c *cli.Context) launch.ImagesOptions {
	return launch.ImagesOptions{IO: ioOf(c), Profile: c.String("profile"), SquashDir: c.String("squash-dir")}
}
