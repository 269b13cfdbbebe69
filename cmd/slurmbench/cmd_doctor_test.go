package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// doctorProfile writes a profile for rest_url whose local paths all exist,
// with one line of the [slurm] table replaced by slurmLine when set.
func doctorProfile(t *testing.T, restURL, slurmLine string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"runs", "squash", "models/mock"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "mock.sqsh"), []byte("hsqs"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`[slurm]
rest_url = %q
partition = "debug"
gpus_per_node = 4
token_env = "DOCTOR_TEST_JWT"
%s
[paths]
runs_dir = "runs"
squash_dir = "squash"
[models]
mock = "models/mock"
[containers]
mock-image = "./mock.sqsh"
[container]
runtime = "enroot"
`, restURL, slurmLine)
	path := filepath.Join(dir, "profile.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// deadURL is an http URL nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

func TestDoctorCommand(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithTokens("good"))
	t.Setenv("DOCTOR_TEST_JWT", "good")
	dead := deadURL(t)

	tests := []struct {
		name      string
		url, line string
		token     string
		code      exitcode.Code
		failed    string // the one ✗ line's check and its fix, "" for none
	}{
		{name: "every check passes", url: fake.URL, token: "good"},
		{name: "wrong partition", url: fake.URL, line: `account = ""` + "\n" + `partition = "gpu"`, token: "good", code: exitcode.Config,
			failed: "✗ partition"},
		{name: "bad token", url: fake.URL, token: "stale", code: exitcode.Config, failed: "✗ token"},
		{name: "dead slurmrestd", url: dead, token: "good", code: exitcode.Slurm, failed: "✗ slurmrestd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DOCTOR_TEST_JWT", tt.token)
			path := doctorProfile(t, tt.url, "")
			if tt.line != "" {
				b, _ := os.ReadFile(path)
				os.WriteFile(path, []byte(strings.Replace(string(b), `partition = "debug"`, tt.line, 1)), 0o644)
			}
			out, errOut, code := runCLI(t, "doctor", "--profile", path)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			var bad []string
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "✗") {
					bad = append(bad, line)
				}
			}
			if tt.failed == "" {
				if len(bad) != 0 || errOut != "" {
					t.Fatalf("want no ✗ line and no error:\n%s%s", out, errOut)
				}
				return
			}
			if len(bad) != 1 || !strings.HasPrefix(bad[0], tt.failed) || !strings.Contains(bad[0], "; fix: ") || !strings.Contains(bad[0], path) {
				t.Fatalf("want one %q line with a fix naming the profile:\n%s", tt.failed, out)
			}
			if strings.Contains(errOut, "slurmbench:") {
				t.Errorf("the failures are on stdout; stderr repeats them: %s", errOut)
			}
		})
	}

	t.Run("json", func(t *testing.T) {
		t.Setenv("DOCTOR_TEST_JWT", "good")
		path := doctorProfile(t, fake.URL, `api_version = "v0.0.44"`)
		out, _, code := runCLI(t, "doctor", "--json", "--profile", path)
		var rep struct {
			OK       bool `json:"ok"`
			ExitCode int  `json:"exit_code"`
			Checks   []struct {
				Name string `json:"name"`
				OK   bool   `json:"ok"`
				Fix  string `json:"fix"`
			} `json:"checks"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if code != exitcode.Config || rep.OK || rep.ExitCode != 2 || len(rep.Checks) < 8 {
			t.Fatalf("exit %d: %s", code, out)
		}
		for _, c := range rep.Checks {
			if c.Name == "api-version" && (c.OK || !strings.Contains(c.Fix, "slurm.api_version")) {
				t.Errorf("api-version check: %+v", c)
			}
		}
	})

	t.Run("bad input", func(t *testing.T) {
		if _, errOut, code := runCLI(t, "doctor"); code != exitcode.Config || !strings.Contains(errOut, "--profile") {
			t.Errorf("no profile: exit %d %s", code, errOut)
		}
	})
}

// TestRunPreflightBeforeImport: with a dead rest_url, run fails in its
// preflight (exit 4, the check and its fix named) before the image import
// starts; --no-preflight skips the checks, and the import then runs (and
// fails here: the enroot is a script that only records that it ran).
func TestRunPreflightBeforeImport(t *testing.T) {
	clearRenderEnv(t)
	t.Setenv("SLURM_JWT", "any")
	dead := deadURL(t)

	dir := t.TempDir()
	for _, d := range []string{"runs", "squash", "models/mock", "stage"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(dir, "enroot-ran")
	enroot := filepath.Join(dir, "enroot")
	if err := os.WriteFile(enroot, []byte("#!/bin/sh\ntouch '"+marker+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "profile.toml")
	text := fmt.Sprintf(`[slurm]
rest_url = %q
partition = "debug"
gpus_per_node = 4
[paths]
runs_dir = "runs"
squash_dir = "squash"
[models]
mock = "models/mock"
[containers]
mock-image = "slurmbench/mock-engine:demo"
[container]
runtime = "enroot"
enroot = %q
import_on = "login"
`, dead, enroot)
	if err := os.WriteFile(prof, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	recipe := filepath.Join(repoRoot(t), "examples", "mock-2p1d.yaml")

	_, errOut, code := runCLI(t, "run", "--profile", prof, "--recipe", recipe, "--stage-dir", filepath.Join(dir, "stage"))
	if code != exitcode.Slurm || !strings.Contains(errOut, "preflight slurmrestd: cannot reach "+dead) || !strings.Contains(errOut, "fix: check slurm.rest_url in "+prof) {
		t.Fatalf("dead rest_url: exit %d, want %d naming the check and its fix:\n%s", code, exitcode.Slurm, errOut)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the image import ran before the preflight failed")
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "runs")); len(entries) != 0 {
		t.Fatalf("a run directory was created: %v", entries)
	}

	_, errOut, code = runCLI(t, "run", "--no-preflight", "--profile", prof, "--recipe", recipe, "--stage-dir", filepath.Join(dir, "stage"))
	if code != exitcode.Image {
		t.Fatalf("--no-preflight: exit %d, want %d (the import's failure):\n%s", code, exitcode.Image, errOut)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("--no-preflight did not reach the import: %v\n%s", err, errOut)
	}
}
