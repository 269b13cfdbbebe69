package runners

import (
	"path"
	"strings"
)

// Policy is SquashCache.policy (infx/clusters/slurm.py@03eaa88a): the
// policy of an image; a multi-node main image names its framework and
// model prefix, whose location (the prefix's replacing the framework's)
// sets some fields, the cache's the rest.
func (s *Squash) Policy(framework, modelPrefix string) SquashPolicy {
	var loc *SquashLocation
	if fl, ok := s.FrameworkDirs[framework]; ok && framework != "" {
		l := fl.SquashLocation
		if p, ok := fl.ModelPrefixes[modelPrefix]; ok {
			l = p
		}
		loc = &l
	}
	return s.located(loc)
}

// HelperPolicy is the policy of a multi-node helper image (HelperNginx,
// HelperDCGMExporter).
func (s *Squash) HelperPolicy(helper string) SquashPolicy {
	var loc *SquashLocation
	if l, ok := s.HelperDirs[helper]; ok {
		loc = &l
	}
	return s.located(loc)
}

func (s *Squash) located(l *SquashLocation) SquashPolicy {
	p := SquashPolicy{Dir: s.Dir, Import: s.Import, Visibility: s.Visibility, LockTimeoutS: s.LockTimeoutS, KeyStyle: s.KeyStyle, LockFile: s.LockFile}
	if l != nil {
		if l.Dir != "" {
			p.Dir = l.Dir
		}
		if l.Import != "" {
			p.Import = l.Import
		}
		if l.KeyStyle != "" {
			p.KeyStyle = l.KeyStyle
		}
	}
	return p
}

// NeedsJob reports whether the image can only be staged from inside the
// job's allocation.
func (p SquashPolicy) NeedsJob() bool {
	return p.Visibility == NodeLocal || p.Import == ImportAllNodes
}

var keyChars = strings.NewReplacer("/", "_", ":", "_", "@", "_", "#", "_")
var plusChars = strings.NewReplacer("/", "+", ":", "+", "@", "+", "#", "+")

// SquashKey is the underscore key of an image: / : @ # become _.
func SquashKey(image string) string { return keyChars.Replace(image) }

// File is the squash file of image under the policy's directory, named by
// its key style (squash_path, infx/launch/backends/slurm/squash.py@bede049f).
func (p SquashPolicy) File(image string) string {
	switch p.KeyStyle {
	case KeyPlus, KeyPlusStripNVCR:
		if p.KeyStyle == KeyPlusStripNVCR {
			image = strings.TrimPrefix(image, "nvcr.io/")
		}
		return path.Join(p.Dir, plusChars.Replace(image)+".sqsh")
	default:
		return path.Join(p.Dir, SquashKey(image)+".sqsh")
	}
}

// Lock is the lock file an import of image takes: beside the squash, or
// <dir>/.locks/<underscore key>.lock (lock_path, squash.py@bede049f).
func (p SquashPolicy) Lock(image string) string {
	f := p.File(image)
	if p.LockFile == LockLocksDir {
		return path.Join(path.Dir(f), ".locks", SquashKey(image)+".lock")
	}
	return f + ".lock"
}
