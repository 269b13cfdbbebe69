package workflow

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// leftovers is a fake slurmrestd holding the runner's jobs under both
// names, another runner's job, and one whose name only starts with the
// runner's.
func leftovers(t *testing.T, faults ...slurmtest.Fault) (*slurm.Client, map[string]slurm.JobID) {
	t.Helper()
	fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
	c, err := slurm.New(slurm.Config{URL: fake.URL, Token: "tok", User: "slurmtest", Transport: fake.Transport(), Defaults: slurm.JobDefaults{Partition: "debug"}})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]slurm.JobID{}
	for _, name := range []string{"gb300-nv_07", "inferencex-gb300-nv_07", "gb300-nv_08", "gb300-nv_070"} {
		res, err := c.Submit(t.Context(), slurm.JobSpec{Name: name, Script: "#!/bin/sh\n"})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = res.JobID
	}
	fake.AddFaults(faults...)
	return c, ids
}

// ignoreCancel: slurmrestd says yes to a cancel and the job stays (a
// node stuck in COMPLETING, from here).
func ignoreCancel(t *testing.T) slurmtest.Fault {
	t.Helper()
	ok, err := os.ReadFile(filepath.Join("..", "..", "..", "slurm", "slurmtest", "samples", "cancel-running.response.json"))
	if err != nil {
		t.Fatal(err)
	}
	return slurmtest.Fault{Method: "DELETE", Path: "/job/", Action: slurmtest.Respond, Status: 200, Body: string(ok)}
}

func running(t *testing.T, c *slurm.Client) []string {
	t.Helper()
	jobs, err := c.ListJobs(t.Context(), slurm.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range jobs {
		if !j.State.Terminal() {
			out = append(out, j.Name)
		}
	}
	slices.Sort(out)
	return out
}

func TestCleanup(t *testing.T) {
	tests := []struct {
		name      string
		runner    string
		client    func(c *slurm.Client) func(context.Context) (*slurm.Client, error)
		wantCode  exitcode.Code
		wantLeft  []string
		wantWarn  string
		keepsJobs bool
	}{
		{name: "cancels both names, nothing else", runner: "gb300-nv_07",
			client: func(c *slurm.Client) func(context.Context) (*slurm.Client, error) {
				return func(context.Context) (*slurm.Client, error) { return c, nil }
			},
			wantLeft: []string{"gb300-nv_070", "gb300-nv_08"}},
		{name: "no RUNNER_NAME is the only failure", runner: " ", wantCode: exitcode.Config, keepsJobs: true,
			client: func(c *slurm.Client) func(context.Context) (*slurm.Client, error) {
				return func(context.Context) (*slurm.Client, error) { return c, nil }
			}},
		{name: "no Slurm here is a warning", runner: "gb300-nv_07", keepsJobs: true, wantWarn: "no Slurm here",
			client: func(*slurm.Client) func(context.Context) (*slurm.Client, error) {
				return func(context.Context) (*slurm.Client, error) {
					return nil, exitcode.Errorf(exitcode.Config, "no slurmrestd URL")
				}
			}},
		{name: "no client at all is a warning", runner: "gb300-nv_07", keepsJobs: true, wantWarn: "nothing to clean up",
			client: func(*slurm.Client) func(context.Context) (*slurm.Client, error) { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := leftovers(t)
			var stderr bytes.Buffer
			err := Cleanup(t.Context(), CleanupOptions{IO: launch.IO{Stderr: &stderr}, Runner: tt.runner, Client: tt.client(c), Poll: time.Millisecond})
			if got := exitcode.Of(err); err != nil && got != tt.wantCode || err == nil && tt.wantCode != 0 {
				t.Fatalf("Cleanup: %v (code %d), want %d", err, got, tt.wantCode)
			}
			left := running(t, c)
			if tt.keepsJobs {
				if len(left) != 4 {
					t.Errorf("jobs left %v, want all four", left)
				}
			} else if !slices.Equal(left, tt.wantLeft) {
				t.Errorf("jobs left %v, want %v", left, tt.wantLeft)
			}
			if !strings.Contains(stderr.String(), tt.wantWarn) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.wantWarn)
			}
		})
	}
}

// TestCleanupNeverFailsTheStep: a slurmrestd that errors, and jobs that
// outlive the wait, are warnings with exit 0, where the operator's
// `cleanup` exits 11.
func TestCleanupNeverFailsTheStep(t *testing.T) {
	t.Run("slurmrestd errors", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, _ := leftovers(t, slurmtest.Fault{Method: "GET", Path: "/jobs", Action: slurmtest.Respond, Status: 500})
			var stderr bytes.Buffer
			err := Cleanup(t.Context(), CleanupOptions{IO: launch.IO{Stderr: &stderr}, Runner: "gb300-nv_07",
				Client: func(context.Context) (*slurm.Client, error) { return c, nil }, Poll: time.Millisecond})
			if err != nil || !strings.Contains(stderr.String(), "warning") {
				t.Errorf("Cleanup: %v; stderr %q", err, stderr.String())
			}
		})
	})
	t.Run("jobs outlive the timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, _ := leftovers(t, ignoreCancel(t))
			var stderr bytes.Buffer
			err := Cleanup(t.Context(), CleanupOptions{IO: launch.IO{Stderr: &stderr}, Runner: "gb300-nv_07",
				Client: func(context.Context) (*slurm.Client, error) { return c, nil }, Timeout: time.Minute})
			if err != nil || !strings.Contains(stderr.String(), "still in the queue") {
				t.Errorf("Cleanup: %v; stderr %q", err, stderr.String())
			}
		})
	})
	t.Run("an interrupt still ends it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, _ := leftovers(t, ignoreCancel(t))
			ctx, cancel := context.WithCancel(t.Context())
			go func() { time.Sleep(time.Minute); cancel() }()
			err := Cleanup(ctx, CleanupOptions{IO: launch.IO{Stderr: &bytes.Buffer{}}, Runner: "gb300-nv_07",
				Client: func(context.Context) (*slurm.Client, error) { return c, nil }})
			if exitcode.Of(err) != exitcode.Interrupted || !errors.Is(err, context.Canceled) {
				t.Errorf("Cleanup interrupted: %v (code %d)", err, exitcode.Of(err))
			}
		})
	})
}
