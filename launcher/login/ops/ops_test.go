package ops

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// TestOpsCommands runs the operator entries against a fake slurmrestd:
// what each prints, as text and JSON, and the exit code of each refusal.
func TestOpsCommands(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
	t.Setenv("SLURM_JWT", "tok")
	c, err := slurm.New(slurm.Config{URL: fake.URL, Token: "tok", Defaults: slurm.JobDefaults{Partition: "debug"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Submit(t.Context(), slurm.JobSpec{Name: "ops", Script: "#!/bin/sh\ntrue\n"})
	if err != nil {
		t.Fatal(err)
	}
	job := res.JobID.String()
	for _, tt := range []struct {
		name string
		run  func(context.Context, OpsOptions) error
		o    OpsOptions
		code exitcode.Code
		want string // in stdout, or in the error when code is not 0
	}{
		{"ping", Ping, OpsOptions{}, 0, "slurmrestd " + fake.URL + ": Slurm "},
		{"ping json", Ping, OpsOptions{IO: launch.IO{JSON: true}}, 0, `"api_version"`},
		{"status", Status, OpsOptions{Command: "status", Args: []string{job}}, 0, "state      RUNNING"},
		{"status json", Status, OpsOptions{IO: launch.IO{JSON: true}, Command: "status", Args: []string{job}}, 0, `"job_id": ` + job},
		{"status no JOBID", Status, OpsOptions{Command: "status"}, exitcode.Config, "status: expected exactly one JOBID, got 0 arguments"},
		{"cancel two JOBIDs", Cancel, OpsOptions{Command: "cancel", Args: []string{"1", "2"}}, exitcode.Config, "cancel: expected exactly one JOBID, got 2 arguments"},
		{"cancel bad JOBID", Cancel, OpsOptions{Command: "cancel", Args: []string{"x"}}, exitcode.Config, "cancel: "},
		{"signal", Cancel, OpsOptions{Command: "cancel", Args: []string{job}, Signal: "usr1"}, 0, "signalled job " + job + " with USR1\n"},
		{"signal json", Cancel, OpsOptions{IO: launch.IO{JSON: true}, Command: "cancel", Args: []string{job}, Signal: "usr1"}, 0, `"signalled": "USR1"`},
		{"cancel", Cancel, OpsOptions{Command: "cancel", Args: []string{job}}, 0, "cancelled job " + job + "\n"},
		{"nodes", Nodes, OpsOptions{}, 0, "NODE  "},
		{"nodes of no partition", Nodes, OpsOptions{Partition: "nope"}, exitcode.Slurm, `no node is in partition "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			tt.o.Stdout, tt.o.Stderr = &out, io.Discard
			tt.o.Slurm = SlurmOptions{RestURL: fake.URL}
			err := tt.run(t.Context(), tt.o)
			if exitcode.Of(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", exitcode.Of(err), err, tt.code)
			}
			got := out.String()
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to hold %q", got, tt.want)
			}
		})
	}
}

// TestCleanupCommand: the entry polls at infx's pace by default, prints
// what it found as JSON when asked (nothing when it found nothing to
// name), and refuses a missing runner.
func TestCleanupCommand(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
	t.Setenv("SLURM_JWT", "tok")
	t.Setenv("USER", "ci") // cleanup cancels by name only for a user
	for _, tt := range []struct {
		name   string
		runner string
		json   bool
		code   exitcode.Code
		want   string // stdout
	}{
		{"no runner", "", true, exitcode.Config, ""},
		{"dry run, JSON", "b200-nv_3", true, 0, `"names": [`},
		{"dry run, text", "b200-nv_3", false, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			err := CleanupCommand(t.Context(), CleanupCommandOptions{IO: launch.IO{Stdout: &out, Stderr: &errOut, JSON: tt.json},
				Slurm: SlurmOptions{RestURL: fake.URL}, Cleanup: CleanupOptions{Runner: tt.runner, DryRun: true}})
			if exitcode.Of(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d\n%s", exitcode.Of(err), err, tt.code, errOut.String())
			}
			if (tt.want == "") != (out.Len() == 0) || !strings.Contains(out.String(), tt.want) {
				t.Errorf("stdout %q, want %q", out.String(), tt.want)
			}
		})
	}
}
