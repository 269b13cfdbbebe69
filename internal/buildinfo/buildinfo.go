// Package buildinfo says which slurmbench this is: the version and commit
// the Makefile stamps in through -ldflags, or else what Go recorded in the
// binary (go install pkg@version, or go build in a checkout).
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Read is the running binary's build information.
func Read() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

// String is "VERSION (COMMIT)", or VERSION alone when it already names the
// commit (a build of an untagged checkout) or no commit is known.
func String(version, commit string, info func() (*debug.BuildInfo, bool)) string {
	version, commit = Resolve(version, commit, info)
	if commit == "unknown" || strings.Contains(version, strings.TrimSuffix(commit, "-dirty")) {
		return version
	}
	return fmt.Sprintf("%s (%s)", version, commit)
}

// Resolve is the Makefile's stamp, else the module version and VCS
// revision Go recorded in the binary ("dev" and "unknown" are the
// unstamped values).
func Resolve(version, commit string, info func() (*debug.BuildInfo, bool)) (string, string) {
	if version == "dev" {
		if bi, ok := info(); ok {
			if v := bi.Main.Version; v != "" && v != "(devel)" {
				version = v
			}
			modified := false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					if commit == "unknown" {
						commit = s.Value[:min(12, len(s.Value))]
					}
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if modified && commit != "unknown" {
				commit += "-dirty"
			}
		}
	}
	return version, commit
}
