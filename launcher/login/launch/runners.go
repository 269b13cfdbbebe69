package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// ProfileSource is where a command's cluster profile comes from: a TOML
// profile (which may extend a runners.yaml record), or InferenceX's
// configs/runners.yaml alone, the runner name picking the record
// (docs/profile.md, "From runners.yaml").
type ProfileSource struct {
	Profile string // --profile (SLURMBENCH_PROFILE)
	// Runners is --runners; "" looks for configs/runners.yaml under
	// Workspace (GITHUB_WORKSPACE) or its inferencex-e2e/, else beside
	// Master (in its configs/).
	Runners string
	Runner  string // --runner (RUNNER_NAME)
	// Cluster is a cluster id of the runners.yaml, when Runner is "".
	Cluster string
	// Label is a master entry's runner label (matrix): the record of the
	// one cluster it schedules on, when Runner is "".
	Label string
	// Workspace is GITHUB_WORKSPACE (--workspace): where the default
	// runners.yaml is, and the run directories' default home
	// (<workspace>/slurmbench-runs) when the record names none.
	Workspace string
	Master    string // --master: its directory is configs/
	// Image, Framework and ModelPrefix are the point's (IMAGE, FRAMEWORK,
	// MODEL_PREFIX): the record's container aliases and squash location.
	Image, Framework, ModelPrefix string
	// PrefillImage is a TileRT point's PREFILL_IMAGE (the record's
	// tilert-prefill alias).
	PrefillImage string
	// AgenticMultiNode: a multi-node AgentX point (the record's agentic
	// mounts join the job's).
	AgenticMultiNode bool
	// SingleNode: a single-node point.
	SingleNode bool
	// Lane is the launch as the lane tables read it (PlanOptions.Lane).
	Lane *srtlanes.Request
}

// RunnersFile is the runners.yaml the source names or finds: --runners
// as given, else <workspace>/configs/runners.yaml, else runners.yaml
// beside the master config, when one exists ("" when none does).
func (s ProfileSource) RunnersFile() string {
	if s.Runners != "" {
		return s.Runners
	}
	var candidates []string
	if s.Workspace != "" {
		// The workflow cd's into inferencex-e2e/ and exports it as the
		// workspace; a checkout's root holds the tree under that name.
		candidates = append(candidates, filepath.Join(s.Workspace, "configs", "runners.yaml"),
			filepath.Join(s.Workspace, "inferencex-e2e", "configs", "runners.yaml"))
	}
	if s.Master != "" {
		candidates = append(candidates, filepath.Join(filepath.Dir(s.Master), "runners.yaml"))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// LoadProfileFrom reads the profile s names, as a config error (exit 2)
// when it cannot: a TOML profile (extending a record when it says so),
// else the runners.yaml record of s.Runner.
func LoadProfileFrom(ctx context.Context, s ProfileSource) (*profile.Profile, error) {
	prof, err := loadProfileFrom(ctx, s)
	return prof, exitcode.With(exitcode.Config, err)
}

func loadProfileFrom(ctx context.Context, s ProfileSource) (*profile.Profile, error) {
	ro := profile.RunnersOptions{Runners: s.RunnersFile(), Runner: s.Runner, Cluster: s.Cluster, Label: s.Label, Image: s.Image, Framework: s.Framework, ModelPrefix: s.ModelPrefix,
		PrefillImage: s.PrefillImage, AgenticMultiNode: s.AgenticMultiNode, SingleNode: s.SingleNode, Lane: s.Lane}
	if s.Workspace != "" {
		ws, err := profile.Canonical(s.Workspace)
		if err != nil {
			return nil, fmt.Errorf("--workspace (GITHUB_WORKSPACE): %w", err)
		}
		ro.DefaultRunsDir = filepath.Join(ws, "slurmbench-runs")
	}
	if s.Profile != "" {
		prof, err := profile.LoadExtending(ctx, s.Profile, ro)
		if err == nil && s.Runners != "" && prof.Record == nil {
			// Both named, and the profile would silently ignore the record.
			return nil, fmt.Errorf("--runners %s: --profile %s extends no runners.yaml record (add extends = { runner = \"...\" } to it, or leave one of the two out)", s.Runners, prof.Path)
		}
		return prof, err
	}
	if ro.Runners == "" {
		return nil, errors.New("--profile: required (or SLURMBENCH_PROFILE), or InferenceX's configs/runners.yaml: --runners FILE, or GITHUB_WORKSPACE holding configs/runners.yaml, with --runner (RUNNER_NAME)")
	}
	// The reader's errors name the file, line and field themselves.
	return profile.LoadRunners(ctx, ro)
}

// WriteSources prints where each profile value came from, when the
// profile was made from (or extends) a runners.yaml record.
func WriteSources(w io.Writer, prof *profile.Profile) error {
	if prof == nil || prof.Record == nil {
		return nil
	}
	r := prof.Record
	who := "cluster " + r.Cluster.ID
	if r.Runner != "" {
		who = "runner " + r.Runner + ", " + who
	}
	if _, err := fmt.Fprintf(w, "\nProfile values (%s, partition %s), each from:\n", who, r.Partition); err != nil {
		return err
	}
	for _, l := range prof.SourceLines() {
		if _, err := fmt.Fprintln(w, "  "+l); err != nil {
			return err
		}
	}
	return nil
}
