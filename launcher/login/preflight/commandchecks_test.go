package preflight

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// fakeCommands writes an scontrol that prints Slurm 24.11's recorded
// answers (slurm/cli/testdata), or fails as told, and an sbatch.
func fakeCommands(t *testing.T, fail string) string {
	t.Helper()
	rec, err := filepath.Abs(filepath.Join("..", "..", "..", "slurm", "cli", "testdata", "slurm-24.11"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	body := "#!/bin/sh\ncase \"$*\" in\n" +
		"'ping --json') cat '" + rec + "/scontrol-ping.json' ;;\n" +
		"'show partitions --json') cat '" + rec + "/scontrol-show-partitions.json' ;;\n" +
		"'show nodes --json') cat '" + rec + "/scontrol-show-nodes.json' ;;\n" +
		"*) exit 1 ;;\nesac\n"
	if fail != "" {
		body = "#!/bin/sh\necho '" + fail + "' >&2\nexit 1\n"
	}
	for name, b := range map[string]string{"scontrol": body, "sbatch": "#!/bin/sh\nexit 1\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPreflightOverCommands: with slurm.transport = "cli" doctor names
// the transport and why, checks that Slurm's commands answer (no token),
// and reads the partition and its nodes through them; commands that fail
// are one failed line carrying their error, the checks after it skipped.
func TestPreflightOverCommands(t *testing.T) {
	for _, tc := range []struct {
		name, fail string
		want       map[string][2]string // check → state, a fragment of its detail
	}{
		{"the commands answer", "", map[string][2]string{
			"transport":      {"passed", `cli (slurm.transport = "cli": Slurm's commands (`},
			"slurm-commands": {"passed", "Slurm's commands in "},
			"api-version":    {"passed", "v0.0.42 (the data_parser version"},
			"token":          {"passed", "none needed"},
			"partition":      {"passed", "debug"},
			"nodes":          {"passed", ""},
		}},
		{"the commands fail", "scontrol: error: Unable to contact slurm controller (connect failure)", map[string][2]string{
			"transport":      {"passed", "cli"},
			"slurm-commands": {"failed", "Slurm's commands in"},
			"api-version":    {"skipped", ""},
			"partition":      {"skipped", ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := fakeCommands(t, tc.fail)
			_, p := newEnv(t, "http://127.0.0.1:9", nil)
			p.Slurm.Transport, p.Slurm.BinDir = profile.TransportCLI, bin
			r := Run(context.Background(), Options{Profile: p})
			var names []string
			for _, c := range r.Checks {
				names = append(names, c.Name)
			}
			if got := strings.Join(names[:7], ","); got != "transport,slurm-commands,api-version,token,partition,nodes,account" {
				t.Errorf("checks %s", got)
			}
			for name, want := range tc.want {
				c := check(t, r, name)
				if c.State != want[0] || !strings.Contains(c.Detail, want[1]) {
					t.Errorf("%s: %s %q, want %s with %q", name, c.State, c.Detail, want[0], want[1])
				}
			}
			if tc.fail != "" && !strings.Contains(check(t, r, "slurm-commands").Detail, "Unable to contact slurm controller") {
				t.Errorf("the failure does not carry the command's error: %+v", check(t, r, "slurm-commands"))
			}
		})
	}
}
