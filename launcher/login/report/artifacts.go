package report

import (
	"fmt"
	"path/filepath"
)

// ArtifactRow lists files a run left beyond its benchmark points: what one
// of srtctl's other benchmark types wrote (accuracy JSON, aiperf
// artifacts, router results), or the profiles a profiled run captured.
// The files are under Dir, which the run's staged LOGS/ holds too.
type ArtifactRow struct {
	Kind  string         `json:"kind"`           // "benchmark" or "profiles"
	Type  string         `json:"type,omitempty"` // benchmark type, or profiling type
	Dir   string         `json:"dir"`
	Files []ArtifactFile `json:"files"`
	// CopiedTo is where the files were copied among the run's results
	// (so the manifest lists them); "" when they stay in the logs only.
	CopiedTo string `json:"copied_to,omitempty"`
	Note     string `json:"note,omitempty"`
}

// ArtifactFile is one file, relative to its row's Dir.
type ArtifactFile struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// maxArtifactLines bounds how many files a summary names per row.
const maxArtifactLines = 20

func (s Summary) artifactLines() []string {
	var out []string
	for _, a := range s.Artifacts {
		var total int64
		for _, f := range a.Files {
			total += f.Bytes
		}
		what := a.Kind
		if a.Type != "" {
			what = a.Type + " " + a.Kind
		}
		line := fmt.Sprintf("%s: %d files, %d bytes in %s", what, len(a.Files), total, a.Dir)
		if a.CopiedTo != "" {
			line += " (copied to " + a.CopiedTo + ")"
		}
		out = append(out, line)
		if a.Note != "" {
			out = append(out, "  "+a.Note)
		}
		for i, f := range a.Files {
			if i == maxArtifactLines {
				out = append(out, fmt.Sprintf("  … and %d more", len(a.Files)-i))
				break
			}
			out = append(out, fmt.Sprintf("  %s (%d bytes)", filepath.ToSlash(f.Path), f.Bytes))
		}
	}
	return out
}
