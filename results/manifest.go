package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// ManifestName is the manifest's file name in a staged results directory.
const ManifestName = "manifest.json"

// ManifestSchemaVersion changes when Manifest's shape does.
// 2 added overrides, image_squash_sha256 and runtime (each step's argv,
// environment names, packages and GPUs, read inside its container).
const ManifestSchemaVersion = 2

// Provenance is where a run's numbers came from; the caller fills it.
type Provenance struct {
	ImageRef          string   `json:"image_ref"`
	ImageDigest       string   `json:"image_digest"`
	RecipeSHA256      string   `json:"recipe_sha256"`
	ProfilePath       string   `json:"profile_path"`
	SlurmbenchVersion string   `json:"slurmbench_version"`
	SlurmVersion      string   `json:"slurm_version"`
	SlurmAPIVersion   string   `json:"slurm_api_version"`
	JobID             string   `json:"job_id"` // a string: heterogeneous and array jobs have ids like "123+0"
	Nodes             []string `json:"nodes"`
	// ImageSquashSHA256 is the squash file's sha256 when its import
	// recorded one (enroot's sidecar): the image bytes the job ran, also
	// for a reference pinned by tag only.
	ImageSquashSHA256 string `json:"image_squash_sha256,omitempty"`
	// Overrides are the --set/--unset edits applied to the recipe, in order.
	Overrides []string `json:"overrides,omitempty"`
	// Runtime is what every step ran, from its fingerprint (provenance.go).
	Runtime *Runtime `json:"runtime,omitempty"`
	// Extra carries anything else worth keeping (RESULT_FILENAME, runner name).
	Extra map[string]string `json:"extra,omitempty"`
}

// Artifact is one file of a results directory.
type Artifact struct {
	Path   string `json:"path"` // relative to the manifest, '/'-separated
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
	// LinkTarget is set for a symbolic link, which is listed, not followed.
	LinkTarget string `json:"link_target,omitempty"`
}

// Manifest lists every artifact of a run with its checksum, and the run's
// provenance.
type Manifest struct {
	SchemaVersion int        `json:"schema_version"`
	Provenance    Provenance `json:"provenance"`
	Artifacts     []Artifact `json:"artifacts"`
	// RefusedLinks are the symbolic links staging left out (of the
	// results and of LOGS/): their targets leave the tree they are in.
	RefusedLinks []RefusedLink `json:"refused_links,omitempty"`
}

// BuildManifest walks root and lists every file in it (sorted by path) with
// size and sha256, except an existing manifest.json at the top and
// leftover temporary files of an interrupted atomic write.
func BuildManifest(root string, prov Provenance) (*Manifest, error) {
	m := &Manifest{SchemaVersion: ManifestSchemaVersion, Provenance: prov, Artifacts: []Artifact{}}
	if m.Provenance.Nodes == nil {
		m.Provenance.Nodes = []string{}
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ManifestName || strings.HasPrefix(d.Name(), atomicfile.TempPrefix) {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			m.Artifacts = append(m.Artifacts, Artifact{Path: rel, LinkTarget: target})
		case d.Type().IsRegular():
			size, sum, err := fileSHA256(path)
			if err != nil {
				return err
			}
			m.Artifacts = append(m.Artifacts, Artifact{Path: rel, Size: size, SHA256: sum})
		default:
			return fmt.Errorf("%s: not a regular file, directory or symlink", path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("building manifest of %s: %w", root, err)
	}
	return m, nil
}

// WriteManifest writes m as root/manifest.json, atomically, and returns the path.
func WriteManifest(root string, m *Manifest, opt atomicfile.Options) (string, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding manifest: %w", err)
	}
	path := filepath.Join(root, ManifestName)
	if err := atomicfile.WriteFile(path, append(b, '\n'), opt); err != nil {
		return "", err
	}
	return path, nil
}

// VerifyManifest checks that every artifact root/manifest.json lists still
// has its size and sha256, and that no file was added since.
func VerifyManifest(root string) error {
	b, err := os.ReadFile(filepath.Join(root, ManifestName))
	if err != nil {
		return fmt.Errorf("verifying manifest: %w", err)
	}
	var want Manifest
	if err := json.Unmarshal(b, &want); err != nil {
		return fmt.Errorf("verifying manifest %s: %w", filepath.Join(root, ManifestName), err)
	}
	got, err := BuildManifest(root, want.Provenance)
	if err != nil {
		return err
	}
	have := map[string]Artifact{}
	for _, a := range got.Artifacts {
		have[a.Path] = a
	}
	var problems []string
	for _, a := range want.Artifacts {
		g, ok := have[a.Path]
		switch {
		case !ok:
			problems = append(problems, a.Path+": missing")
		case g != a:
			problems = append(problems, a.Path+": changed")
		}
		delete(have, a.Path)
	}
	for _, a := range got.Artifacts {
		if _, extra := have[a.Path]; extra {
			problems = append(problems, a.Path+": not in the manifest")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("verifying manifest of %s: %s", root, strings.Join(problems, ", "))
	}
	return nil
}

func fileSHA256(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}
