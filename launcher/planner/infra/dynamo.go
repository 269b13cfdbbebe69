package infra

import (
	"cmp"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
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

// DynamoInstallArgv is the setup step that installs d from its cache.
func DynamoInstallArgv(binary string, d plan.Dynamo) ([]string, error) {
	kind, ref, err := d.Source()
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(d.Cache) {
		return nil, fmt.Errorf("dynamo wheel cache %q is not absolute", d.Cache)
	}
	argv := []string{binary, "dynamo-install", "--cache", d.Cache, "--" + kind, ref}
	if d.Git != "" {
		argv = append(argv, "--git", d.Git)
	}
	return argv, nil
}

// dynamoWheelEnv is what srtctl exports for a dynamo.wheel install
// (DYNAMO_WHEEL_NAME, DYNAMO_VERSION), so the environment stays the same.
func dynamoWheelEnv(d plan.Dynamo) map[string]string {
	if d.Wheel == "" {
		return nil
	}
	return map[string]string{
		"DYNAMO_WHEEL_NAME": "ai_dynamo-" + d.Wheel + "-py3-none-any.whl",
		"DYNAMO_VERSION":    d.Wheel,
	}
}

// prepareDynamo settles where the install step caches Dynamo and checks
// the source, once, before any process names it.
func (b *builder) prepareDynamo() error {
	d := &b.Plan().Dynamo
	if !d.Install {
		return nil
	}
	if _, _, err := d.Source(); err != nil {
		field := "dynamo"
		switch {
		case d.TopOfTree != "":
			field = "dynamo.top_of_tree"
		case d.Hash != "":
			field = "dynamo.hash"
		case d.Wheel != "":
			field = "dynamo.wheel"
		case d.Version != "":
			field = "dynamo.version"
		}
		return b.Fail(field, "%v", err)
	}
	d.Cache = cmp.Or(b.Profile().Paths.WheelCache, filepath.Join(b.Profile().Paths.RunsDir, ".dynamo-wheels"))
	return nil
}

// checkSetupScript refuses a setup_script that would leave /configs and,
// when the profile names the directory mounted there (paths.configs), one
// that is in neither it nor its patches/: srtctl only warns and starts the
// workers without it, InferenceX's launcher refuses the recipe before
// submitting (inferencex-e2e/infx/srt_slurm/workload.py@f57e21f1
// check_setup_script).
func (b *builder) checkSetupScript() error {
	s := b.Recipe().SetupScript
	if s == "" {
		return nil
	}
	if path.IsAbs(s) || path.Clean(s) != s || strings.HasPrefix(s, "..") || strings.ContainsAny(s, "\x00\n") {
		return b.Fail("setup_script", "%q is not a file name under %s", s, plan.ConfigsMount)
	}
	if dir := b.Profile().Paths.Configs; dir != "" && b.setupScript() == "" {
		return b.Fail("setup_script", "%s is in neither %s nor %s (paths.configs, mounted at %s)", s, dir, filepath.Join(dir, "patches"), plan.ConfigsMount)
	}
	return nil
}

// setupScript is where the recipe's setup_script runs from: srtctl runs
// /configs/<name>, else /configs/patches/<name>
// (worker_stage._build_worker_preamble). With paths.configs the choice is
// made here, from the directory; "" when it is in neither. Without it the
// directory is the operator's own mount, unseen: /configs/<name>.
func (b *builder) setupScript() string {
	s := b.Recipe().SetupScript
	dir := b.Profile().Paths.Configs
	if dir == "" {
		return path.Join(plan.ConfigsMount, s)
	}
	for _, sub := range []string{"", "patches"} {
		if st, err := os.Stat(filepath.Join(dir, sub, s)); err == nil && st.Mode().IsRegular() {
			return path.Join(plan.ConfigsMount, sub, s)
		}
	}
	return ""
}

// setupSteps run in a worker's or Dynamo frontend's container before its
// program, in srtctl's order: the recipe's setup script, then the Dynamo
// install (when this process runs Dynamo and the recipe asks for it).
func (b *builder) setupSteps(dynamo bool) [][]string {
	var steps [][]string
	if b.Recipe().SetupScript != "" {
		// srtctl only warns when the script is missing; a run without its
		// setup is not the recipe's, so the step runs it by its path and
		// fails the process when it is not there.
		steps = append(steps, []string{"bash", cmp.Or(b.setupScript(), path.Join(plan.ConfigsMount, b.Recipe().SetupScript))})
	}
	if dynamo && b.Plan().Dynamo.Install {
		argv, err := DynamoInstallArgv(b.Plan().Binary, b.Plan().Dynamo)
		if err == nil { // prepareDynamo checked the source
			steps = append(steps, argv)
		}
	}
	return steps
}

// engineMounts are the mounts of a process in the engine image: the
// common ones plus the Dynamo wheel cache at its own path.
func (b *builder) engineMounts() []string {
	m := b.Mounts()
	if b.Plan().Dynamo.Install && b.Plan().Dynamo.Cache != "" {
		m = append(m, b.Plan().Dynamo.Cache+":"+b.Plan().Dynamo.Cache)
	}
	return m
}
