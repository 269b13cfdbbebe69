// Package submit turns a plan into a job: it lays out the run directory on
// the shared filesystem (binary, plan, batch script), and describes the job
// for slurmrestd. The batch script only execs the driver by absolute path.
package submit

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/sbatch"
)

// BatchScript is the whole batch script: exec the driver, nothing else.
// Paths are checked to hold no quote or newline, so single quotes suffice.
func BatchScript(pl *plan.Plan) (string, error) {
	for _, p := range []string{pl.Binary, pl.PlanFile} {
		if strings.ContainsAny(p, "'\n\r\x00") || !filepath.IsAbs(p) {
			return "", fmt.Errorf("path %q cannot go into a batch script", p)
		}
	}
	return "#!/bin/sh\n# slurmbench run " + pl.RunID + "\nexec '" + pl.Binary + "' driver --plan '" + pl.PlanFile + "'\n", nil
}

// Prepare fills the run directory (made by rundir.Create) with the binary,
// the plan and the batch script (for the record). The run directory is the
// caller's alone (it made it, or holds its lock with this plan in it), so
// a file left by an earlier runner of the same run, which never submitted,
// is replaced.
func Prepare(pl *plan.Plan, binary string) error {
	if _, err := os.Stat(pl.RunDir); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	for _, dir := range []string{filepath.Dir(pl.Binary), pl.Layout.Logs, pl.Layout.Results, pl.Layout.Steps} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating run directory: %w", err)
		}
	}
	if pl.Serve {
		// A held deployment's queue is made here, before the run directory
		// is given to paths.owner, so the job's user can take requests.
		if err := os.MkdirAll(filepath.Join(rundir.RequestsDir(pl.RunDir), rundir.TakenName), 0o755); err != nil {
			return fmt.Errorf("creating run directory: %w", err)
		}
	}
	if pl.Benchmark.ResultDir != "" {
		if err := os.MkdirAll(pl.Benchmark.ResultDir, 0o755); err != nil {
			return fmt.Errorf("creating run directory: %w", err)
		}
	}
	if err := copyExecutable(binary, pl.Binary); err != nil {
		return fmt.Errorf("copying %s into the run directory: %w", binary, err)
	}
	b, err := pl.JSON()
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(pl.PlanFile, b, atomicfile.Options{Perm: 0o644, Overwrite: true}); err != nil {
		return fmt.Errorf("writing plan: %w", err)
	}
	script, err := BatchScript(pl)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(rundir.JobScriptPath(pl.RunDir), []byte(script), atomicfile.Options{Perm: 0o755, Overwrite: true}); err != nil {
		return fmt.Errorf("writing batch script: %w", err)
	}
	if pl.Owner != "" {
		uid, gid, err := profile.ParseOwner(pl.Owner)
		if err != nil {
			return err
		}
		if err := chownTree(pl.RunDir, uid, gid); err != nil {
			return fmt.Errorf("giving %s to %s: %w", pl.RunDir, pl.Owner, err)
		}
	}
	return nil
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.Write(dst, atomicfile.Options{Perm: 0o755, Overwrite: true}, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// chownTree changes the owner of everything under dir. It walks through an
// os.Root, so a directory swapped for a symbolic link during the walk
// cannot lead it to chown a file outside dir.
func chownTree(dir string, uid, gid int) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return root.Lchown(p, uid, gid)
	})
}

// JobSpec describes the plan's job for slurmrestd. env is the job's
// environment (PATH and the passthrough variables' values); secrets travel
// in it, never in the script or argv.
func JobSpec(pl *plan.Plan, env []string) (slurm.JobSpec, error) {
	script, err := BatchScript(pl)
	if err != nil {
		return slurm.JobSpec{}, err
	}
	s := pl.Slurm
	spec := slurm.JobSpec{
		Name:         s.JobName,
		Script:       script,
		Nodes:        strconv.Itoa(s.Nodes),
		TasksPerNode: 1,
		Partition:    s.Partition,
		Account:      s.Account,
		TimeLimit:    time.Duration(s.TimeLimitMinutes) * time.Minute,
		GPUsPerNode:  s.GPUsPerNode,
		Exclusive:    s.Exclusive,
		Environment:  env,
		WorkDir:      pl.RunDir,
		StdOut:       pl.Layout.BatchOut,
		StdErr:       pl.Layout.BatchOut,
		Comment:      s.Comment,
	}
	if s.NoGPUsPerNode {
		spec.GPUsPerNode = 0
	}
	extra, err := directives(s.Directives)
	if err != nil {
		return slurm.JobSpec{}, err
	}
	spec.Extra = extra
	if c := s.Directives["comment"]; c != "" {
		// Sites read the comment (e.g. a GPU-reaper exemption); keep theirs
		// first, slurmbench's run tag after it.
		spec.Comment = c + " " + s.Comment
	}
	return spec, nil
}

// directives maps sbatch options to job-description fields
// (sbatch.Directives). An option with no mapping is refused before
// anything is submitted.
func directives(d map[string]string) (map[string]any, error) {
	return sbatch.Directives(d)
}
