package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/clustertest"
	"github.com/slurmbench/slurmbench/slurm"
)

// TestCleanupOnCluster is `slurmbench cleanup` (infx.launch cleanup's
// drop-in) on the real cluster: a previous attempt's job named after the
// runner and srtctl's inferencex-<runner> job, one running and one queued
// behind it, are cancelled and gone from the queue when it returns; a job
// whose name only starts with the runner's keeps running; --dry-run before
// touches nothing; a second cleanup finds nothing. Over slurmrestd
// (--rest-url) and over Slurm's commands (sbatch on PATH, no URL).
func TestCleanupOnCluster(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			testCleanupOnCluster(t, setup(t).over(t, transport))
		})
	}
}

func testCleanupOnCluster(t *testing.T, c *cluster) {
	runner := uniqueName("wfenv-runner")
	dir := filepath.Join(c.Root, "cleanup", runner)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o777)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids := map[string]slurm.JobID{}
	for _, name := range []string{runner, "inferencex-" + runner, runner + "-other"} {
		sub, err := c.api.Submit(ctx, slurm.JobSpec{Name: name, Script: "#!/bin/sh\nsleep 600\n", Nodes: "1",
			Partition: c.Cluster.Partition, TimeLimit: 10 * time.Minute, Environment: clustertest.JobEnv(),
			WorkDir: dir, StdOut: filepath.Join(dir, name+".out")})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = sub.JobID
		defer func() { _ = c.api.CancelJob(context.Background(), sub.JobID) }()
	}
	live := func(id slurm.JobID) bool {
		j, err := c.api.GetJob(ctx, id)
		return err == nil && !j.State.Terminal()
	}
	// The runner's own job runs (a previous attempt mid-benchmark) before
	// cleanup starts.
	for {
		j, err := c.api.GetJob(ctx, ids[runner])
		if err != nil {
			t.Fatal(err)
		}
		if j.State.Base == "RUNNING" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("job %d never started: %s", ids[runner], j.State)
		}
		time.Sleep(time.Second)
	}
	out, errOut, code := c.slurmbench(t, c.cleanupArgs("--user", c.Cluster.User, "--runner", runner, "--dry-run", "--json")...)
	if code != 0 || !strings.Contains(errOut, "would cancel job "+ids[runner].String()) || !strings.Contains(out, `"cancelled": false`) {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	for name, id := range ids {
		if !live(id) {
			t.Fatalf("the dry run ended %s (%d)", name, id)
		}
	}
	start := time.Now()
	out, errOut, code = c.slurmbench(t, c.cleanupArgs("--user", c.Cluster.User, "--runner", runner, "--json")...)
	t.Logf("cleanup took %s:\n%s", time.Since(start).Round(time.Millisecond), errOut)
	if code != 0 {
		t.Fatalf("cleanup: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{runner, "inferencex-" + runner} {
		if live(ids[name]) {
			t.Errorf("%s (%d) still in the queue after cleanup returned", name, ids[name])
		}
		if !regexp.MustCompile(`cancelling job ` + ids[name].String() + ` ` + regexp.QuoteMeta(name) + ` `).MatchString(errOut) {
			t.Errorf("cleanup does not say it cancels %s", name)
		}
	}
	if !live(ids[runner+"-other"]) {
		t.Errorf("cleanup ended %s-other, another runner's job", runner)
	}
	_, errOut, code = c.slurmbench(t, c.cleanupArgs("--user", c.Cluster.User, "--runner", runner)...)
	if code != 0 || !strings.Contains(errOut, "no jobs") {
		t.Errorf("second cleanup: exit %d\n%s", code, errOut)
	}
	_, errOut, code = c.slurmbench(t, c.cleanupArgs("--runner", "")...)
	if code != 2 {
		t.Errorf("cleanup without a runner: exit %d, want 2\n%s", code, errOut)
	}
}
