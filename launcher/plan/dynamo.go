package plan

import (
	"errors"
	"fmt"
	"regexp"
)

// Installing Dynamo into a stock engine container, once per cache entry
// instead of once per container (srtctl pip-installs from PyPI, or unpacks
// its source build, in every worker and frontend container of every job).
//
// The plan gives a process that needs Dynamo one setup step,
//
//	<run>/bin/slurmbench dynamo-install --cache DIR --version V | --wheel V | --hash H
//
// run inside its container; package job/dynamoinstall is that step
// (cache key, fetch and install commands). This file only checks the
// source and puts the step, the cache mount and srtctl's environment into
// the plan.

var (
	dynamoVersionRe = regexp.MustCompile(`^[0-9][0-9A-Za-z.+!_-]*$`)
	dynamoHashRe    = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	// dynamoGitRe is a repository URL git clone takes as one operand: a
	// scheme, no white space, never an option.
	dynamoGitRe = regexp.MustCompile(`^(https|ssh|git)://[^\s]+$`)
	topOfTreeRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)
)

// Source is what d installs: "version" (a release), "wheel" (an exact
// build, pre-releases included), "hash" (a source commit) or "top-of-tree"
// (the source's HEAD, built once per run: its ref is the run id), and its
// ref; a hash wins over a wheel, a wheel over a version. The ref is checked
// to be safe as a path element and a pip requirement.
func (d Dynamo) Source() (kind, ref string, err error) {
	switch {
	case d.TopOfTree != "":
		if !topOfTreeRe.MatchString(d.TopOfTree) {
			return "", "", fmt.Errorf("dynamo top-of-tree build %q is not a run id", d.TopOfTree)
		}
		return "top-of-tree", d.TopOfTree, nil
	case d.Hash != "":
		if !dynamoHashRe.MatchString(d.Hash) {
			return "", "", fmt.Errorf("dynamo.hash %q is not a hex commit id", d.Hash)
		}
		if d.Git != "" && !dynamoGitRe.MatchString(d.Git) {
			return "", "", fmt.Errorf("dynamo git repository %q is not an https://, ssh:// or git:// URL", d.Git)
		}
		return "hash", d.Hash, nil
	case d.Wheel != "":
		if !dynamoVersionRe.MatchString(d.Wheel) {
			return "", "", fmt.Errorf("dynamo.wheel %q is not a version", d.Wheel)
		}
		return "wheel", d.Wheel, nil
	case d.Version != "":
		if !dynamoVersionRe.MatchString(d.Version) {
			return "", "", fmt.Errorf("dynamo.version %q is not a version", d.Version)
		}
		return "version", d.Version, nil
	}
	return "", "", errors.New("dynamo: nothing to install (no version, wheel or hash)")
}
