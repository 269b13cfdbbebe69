package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// maxArtifactFiles bounds how many files a listing reads: a profile
// directory of a large job holds one file per rank, not millions.
const maxArtifactFiles = 100000

// listFiles lists the regular files under dir, relative to it, sorted,
// whose base name matches one of patterns ("*" for all); a missing dir is
// no files. Symbolic links are not followed or listed.
func listFiles(dir string, patterns []string) ([]report.ArtifactFile, error) {
	var out []report.ArtifactFile
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		match := false
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, d.Name()); ok {
				match = true
				break
			}
		}
		if !match {
			return nil
		}
		if len(out) == maxArtifactFiles {
			return fmt.Errorf("more than %d files under %s", maxArtifactFiles, dir)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, report.ArtifactFile{Path: filepath.FromSlash(rel), Bytes: info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// collectSrtctlBenchmark finds what one of srtctl's other benchmark types
// wrote (its result directory under the logs, where srtctl's script for
// the type writes) and copies it into the run's results/<type>, so the
// manifest lists it. A type that left no result is a benchmark failure,
// named; sglang-bench's only output is its log.
func collectSrtctlBenchmark(pl *plan.Plan, overwrite bool) (*report.ArtifactRow, error) {
	s := pl.Benchmark.Srtctl
	row := &report.ArtifactRow{Kind: "benchmark", Type: pl.Benchmark.Type, Dir: s.ResultDir}
	if s.ResultDir == "" {
		for _, p := range pl.Processes {
			if p.Role == plan.RoleBenchmark {
				row.Dir = filepath.Dir(p.Log)
				files, err := listFiles(row.Dir, []string{filepath.Base(p.Log)})
				row.Files = files
				row.Note = "srtctl's " + pl.Benchmark.Type + " reports in its log only"
				return row, err
			}
		}
		return row, nil
	}
	files, err := listFiles(s.ResultDir, s.Results)
	row.Files = files
	if err != nil {
		return row, fmt.Errorf("benchmark.type %s: listing %s: %w", pl.Benchmark.Type, s.ResultDir, err)
	}
	if len(files) == 0 {
		return row, fmt.Errorf("benchmark.type %s: left no result matching %v in %s", pl.Benchmark.Type, s.Results, s.ResultDir)
	}
	dst := filepath.Join(pl.Layout.Results, pl.Benchmark.Type)
	if _, err := results.CopyTree(s.ResultDir, dst, overwrite); err != nil { // Collect lists the links it left out
		return row, fmt.Errorf("benchmark.type %s: copying its results: %w", pl.Benchmark.Type, err)
	}
	row.CopiedTo = dst
	return row, nil
}

// listProfiles lists what a profiled run captured under the profile
// directory (staged with the logs; profiles can be large, so they are not
// copied again). None is a note, not a failure: srtctl does not fail a job
// whose profiler wrote nothing either.
func listProfiles(pl *plan.Plan) (*report.ArtifactRow, error) {
	pr := pl.Profiling
	row := &report.ArtifactRow{Kind: "profiles", Type: pr.Type, Dir: pr.Dir}
	files, err := listFiles(pr.Dir, []string{"*"})
	row.Files = files
	if err != nil {
		return row, fmt.Errorf("profiling: listing %s: %w", pr.Dir, err)
	}
	if len(files) == 0 {
		row.Note = "no profile was written"
	}
	return row, nil
}
