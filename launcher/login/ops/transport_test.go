package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestSlurmClientTransport: without a profile the operator commands use
// slurmrestd when a URL is given, else Slurm's commands when sbatch is on
// PATH, else they stop with a config error naming both.
func TestSlurmClientTransport(t *testing.T) {
	withSbatch := t.TempDir()
	if err := os.WriteFile(filepath.Join(withSbatch, "sbatch"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, url, want, wantErr string
	}{
		{"a URL", withSbatch, "http://127.0.0.1:6820", "rest", ""},
		{"no URL, sbatch on PATH", withSbatch, "", "cli", ""},
		{"neither", t.TempDir(), "", "", "no slurmrestd URL and no sbatch on PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			t.Setenv("SLURM_REST_URL", "")
			t.Setenv("SLURM_JWT", "x")
			c, err := SlurmClient(context.Background(), SlurmOptions{RestURL: tc.url})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || exitcode.Of(err) != exitcode.Config {
					t.Fatalf("error %v, want a config error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Server().Transport; got != tc.want {
				t.Errorf("transport %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPingOverCommands: ping without a URL asks scontrol (on PATH) and
// says it was Slurm's commands that answered, not a slurmrestd.
func TestPingOverCommands(t *testing.T) {
	rec, err := filepath.Abs(filepath.Join("..", "..", "..", "slurm", "cli", "testdata", "slurm-24.11", "scontrol-ping.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"sbatch": "exit 1", "scontrol": "cat '" + rec + "'"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+":/usr/bin:/bin")
	t.Setenv("SLURM_REST_URL", "")
	var out strings.Builder
	o := OpsOptions{Command: "ping"}
	o.Stdout, o.Stderr = &out, &out
	if err := Ping(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := "Slurm's commands: Slurm 24.11.5, API v0.0.42, cluster slurmbench\nslurmctld slurmctl (primary): UP in 1.029ms\n"
	if out.String() != want {
		t.Errorf("ping printed\n%q\nwant\n%q", out.String(), want)
	}
}
