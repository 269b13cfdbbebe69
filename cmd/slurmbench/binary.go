package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/login/arch"
)

// binaryDirFlag names where run finds the slurmbench binary for compute
// nodes of another architecture than this machine's.
func binaryDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "binary-dir", EnvVars: []string{"SLURMBENCH_BINARY_DIR"},
		Usage: "directory holding linux-amd64/slurmbench and linux-arm64/slurmbench (default: next to this binary, as make build lays them out)"}
}

// jobBinary is the slurmbench binary the job runs: this one, or its sibling
// built for slurm.compute_arch. A missing one is a config error naming the
// files looked for, found before anything is imported or submitted.
func jobBinary(c *cli.Context, prof *profile.Profile) (string, error) {
	self, err := selfPath()
	if err != nil {
		return "", exitcode.With(exitcode.Internal, err)
	}
	bin, err := arch.Binary(prof.ComputeArch(), self, c.String("binary-dir"))
	if err != nil {
		return "", configErrorf("profile %s: slurm.compute_arch %s: %v (make build writes bin/%s/slurmbench; copy it next to this binary or name its directory with --binary-dir)",
			prof.Path, prof.ComputeArch(), err, arch.Dir(prof.ComputeArch()))
	}
	if bin != self {
		fmt.Fprintf(c.App.ErrWriter, "compute nodes are %s: the job runs %s\n", prof.ComputeArch(), bin)
	}
	return bin, nil
}
