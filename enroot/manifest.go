package enroot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// ManifestSuffix is appended to a squash file's path to name its sidecar.
const ManifestSuffix = ".json"

// Manifest is the sidecar <name>.sqsh.json kept next to a squash file. It
// records what the squash holds and the size and modification time the file
// had when it was validated, so a later check only compares two stat fields
// instead of reading the image.
type Manifest struct {
	Ref       string `json:"ref"`  // as written by the user
	Name      string `json:"name"` // normalised (Ref.Name)
	EnrootURI string `json:"enroot_uri"`
	Digest    string `json:"digest,omitempty"` // the registry digest imported: pinned in the reference, or resolved from its tag (Options.ResolveDigest)
	Size      int64  `json:"size"`
	// MTime is the squash file's modification time; JSON keeps nanoseconds.
	MTime     time.Time `json:"mtime"`
	SHA256    string    `json:"sha256,omitempty"` // of the squash file, when asked for
	Origin    string    `json:"origin"`           // "imported" or "adopted" (found valid, not imported here)
	Arch      string    `json:"arch,omitempty"`   // --arch given to enroot; empty: the importing host's
	Host      string    `json:"host,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Version   string    `json:"slurmbench_version"`
}

// Manifest origins.
const (
	OriginImported = "imported"
	OriginAdopted  = "adopted"
)

// matches reports whether the manifest still describes a file with info.
func (m *Manifest) matches(info fs.FileInfo) bool {
	return m.Size == info.Size() && m.MTime.Equal(info.ModTime())
}

// ReadManifest reads the sidecar of the squash file at squashPath.
func ReadManifest(squashPath string) (*Manifest, error) {
	data, err := os.ReadFile(squashPath + ManifestSuffix)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading %s: %w", squashPath+ManifestSuffix, err)
	}
	return &m, nil
}

// WriteManifest replaces the sidecar of the image at path atomically.
func WriteManifest(path string, m *Manifest) error { return writeManifest(path, m) }

// writeManifest replaces the sidecar atomically.
func writeManifest(squashPath string, m *Manifest) (err error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(squashPath+ManifestSuffix, append(data, '\n'), atomicfile.Options{Overwrite: true})
}

// State is what Inspect found for one squash file.
type State string

// States, from best to worst.
const (
	// StateOK: the sidecar matches the file's size and mtime (cheap check).
	StateOK State = "ok"
	// StateUnrecorded: no sidecar, and the file passes ValidateSquash (e.g.
	// imported by the InferenceX runners).
	StateUnrecorded State = "unrecorded"
	// StateStale: the sidecar does not match the file or cannot be read, and
	// the file passes ValidateSquash.
	StateStale State = "stale"
	// StateInvalid: the file is not a complete squashfs image.
	StateInvalid State = "invalid"
	// StateMissing: no such file.
	StateMissing State = "missing"
)

// Usable reports whether a squash in this state can be started.
func (s State) Usable() bool {
	return s == StateOK || s == StateUnrecorded || s == StateStale
}

// Status describes one squash file.
type Status struct {
	Path     string    `json:"path"`
	State    State     `json:"state"`
	Size     int64     `json:"size"`
	ModTime  time.Time `json:"mtime"`
	Manifest *Manifest `json:"manifest,omitempty"`
	// Problem says why the state is not ok, in words.
	Problem string `json:"problem,omitempty"`
}

// Inspect checks the squash file at path: cheaply when its sidecar matches,
// with ValidateSquash only when the sidecar is missing, unreadable or stale.
// It never writes.
func Inspect(path string) Status {
	st := Status{Path: path}
	info, err := os.Stat(path)
	if err != nil {
		st.State, st.Problem = StateMissing, err.Error()
		if !errors.Is(err, fs.ErrNotExist) {
			st.State = StateInvalid
		}
		return st
	}
	st.Size, st.ModTime = info.Size(), info.ModTime()
	if !info.Mode().IsRegular() {
		st.State, st.Problem = StateInvalid, "not a regular file"
		return st
	}
	m, merr := ReadManifest(path)
	if merr == nil {
		st.Manifest = m
		if m.matches(info) {
			st.State = StateOK
			return st
		}
	}
	if _, err := ValidateSquash(path); err != nil {
		st.State, st.Problem = StateInvalid, err.Error()
		return st
	}
	switch {
	case errors.Is(merr, fs.ErrNotExist):
		st.State, st.Problem = StateUnrecorded, "no sidecar manifest; the squash validates"
	case merr != nil:
		st.State, st.Problem = StateStale, merr.Error()
	default:
		st.State = StateStale
		st.Problem = fmt.Sprintf("sidecar records %d bytes at %s, the file has %d bytes at %s; the squash validates",
			m.Size, m.MTime.Format(time.RFC3339Nano), info.Size(), info.ModTime().Format(time.RFC3339Nano))
	}
	return st
}

// List inspects every *.sqsh file directly in dir, sorted by name.
func List(dir string) ([]Status, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing squash directory: %w", err)
	}
	var out []Status
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sqsh") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		out = append(out, Inspect(filepath.Join(dir, e.Name())))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
