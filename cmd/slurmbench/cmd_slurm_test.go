package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// runSlurmCmd runs "slurmbench args..." in-process and returns stdout,
// stderr and the exit code main would use.
func runSlurmCmd(t *testing.T, args ...string) (string, string, exitcode.Code) {
	t.Helper()
	return runCLI(t, args...)
}

// slurmEnv points the commands at url with token, without a profile.
func slurmEnv(t *testing.T, url, token string) {
	t.Helper()
	t.Setenv("SLURMBENCH_PROFILE", "")
	t.Setenv("SLURM_REST_URL", url)
	t.Setenv("SLURM_USER", "slurmtest")
	t.Setenv("SLURM_JWT", token)
}

func TestPingCommand(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithTokens("good"))
	slurmEnv(t, fake.URL, "good")
	out, errOut, code := runSlurmCmd(t, "ping")
	want := fmt.Sprintf("slurmrestd %s: Slurm 24.11.5, API v0.0.42, cluster lab\nslurmctld slurmctl (primary): UP in 1.863ms\n", fake.URL)
	if code != 0 || out != want {
		t.Fatalf("ping: exit %d\n%s\nwant\n%s\nstderr: %s", code, out, want, errOut)
	}
	out, _, code = runSlurmCmd(t, "ping", "--json", "--api-version", "v0.0.40")
	var res struct {
		Server struct {
			APIVersion string `json:"api_version"`
		} `json:"server"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Server.APIVersion != "v0.0.40" {
		t.Errorf("ping --json: exit %d %s", code, out)
	}

	slurmEnv(t, fake.URL, "expired")
	_, errOut, code = runSlurmCmd(t, "ping")
	if code != exitcode.Slurm || !strings.Contains(errOut, "no slurmctld is UP") || !strings.Contains(errOut, "token is bad or expired") {
		t.Errorf("bad token: exit %d %s", code, errOut)
	}
}

func TestStatusCommand(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"FAILED"}, Exit: 3, Reason: "NonZeroExitCode"}))
	slurmEnv(t, fake.URL, "tok")
	out, errOut, code := runSlurmCmd(t, "status", "100")
	if code != exitcode.Slurm || !strings.Contains(errOut, "job 100: final state unknown") {
		t.Fatalf("unknown job: exit %d %q %q", code, out, errOut)
	}
	submitViaFake(t, fake)
	out, errOut, code = runSlurmCmd(t, "status", "100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"job        100 st\n", "state      FAILED 3:0 (NonZeroExitCode)\n", "partition  debug\n", "source     slurmctld\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runSlurmCmd(t, "status", "--json", "100")
	var j struct {
		JobID int      `json:"job_id"`
		State []string `json:"state"`
		Exit  struct {
			Code int `json:"code"`
		} `json:"exit"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil || j.JobID != 100 || j.State[0] != "FAILED" || j.Exit.Code != 3 {
		t.Errorf("status --json: exit %d %s", code, out)
	}
	for _, args := range [][]string{{"status"}, {"status", "abc"}, {"status", "1", "2"}} {
		if _, errOut, code := runSlurmCmd(t, args...); code != exitcode.Config {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitcode.Config, errOut)
		}
	}
}

func submitViaFake(t *testing.T, fake *slurmtest.Fake) {
	t.Helper()
	c, err := newSlurmClientFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(t.Context(), jobSpecForTest()); err != nil {
		t.Fatal(err)
	}
	if len(fake.Jobs()) != 1 {
		t.Fatal("fake has no job")
	}
}

func newSlurmClientFromEnv() (*slurm.Client, error) {
	return slurm.New(slurm.Config{URL: os.Getenv("SLURM_REST_URL"), Token: os.Getenv("SLURM_JWT"), Defaults: slurm.JobDefaults{Partition: "debug"}})
}

func jobSpecForTest() slurm.JobSpec {
	return slurm.JobSpec{Name: "st", Script: "#!/bin/sh\ntrue\n"}
}

func loadProfileForTest(t *testing.T, path string) *profile.Profile {
	t.Helper()
	p, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCancelCommand(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
	slurmEnv(t, fake.URL, "tok")
	submitViaFake(t, fake)
	out, errOut, code := runSlurmCmd(t, "cancel", "--signal", "usr1", "100")
	if code != 0 || out != "signalled job 100 with USR1\n" {
		t.Fatalf("signal: exit %d %q %s", code, out, errOut)
	}
	out, errOut, code = runSlurmCmd(t, "cancel", "100")
	if code != 0 || out != "cancelled job 100\n" {
		t.Fatalf("cancel: exit %d %q %s", code, out, errOut)
	}
	out, _, _ = runSlurmCmd(t, "status", "100")
	if !strings.Contains(out, "CANCELLED 0:15") {
		t.Errorf("after cancel:\n%s", out)
	}
	_, errOut, code = runSlurmCmd(t, "cancel", "555")
	if code != exitcode.Slurm || !strings.Contains(errOut, "cancelling job 555: slurmrestd 200: Invalid job id specified") {
		t.Errorf("unknown job: exit %d %s", code, errOut)
	}
}

func TestNodesCommand(t *testing.T) {
	fake := slurmtest.NewFake(t)
	slurmEnv(t, fake.URL, "tok")
	out, errOut, code := runSlurmCmd(t, "nodes")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 || !strings.HasPrefix(lines[0], "NODE") {
		t.Fatalf("nodes: exit %d\n%s%s", code, out, errOut)
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "n1 IDLE 0/8 0/16000 0/4 debug" {
		t.Errorf("first node line = %q", lines[1])
	}
	out, _, code = runSlurmCmd(t, "nodes", "--json", "--partition", "debug")
	var nodes []struct {
		Name string `json:"name"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil || len(nodes) != 4 {
		t.Errorf("nodes --json: exit %d %s", code, out)
	}
	if _, errOut, code := runSlurmCmd(t, "nodes", "--partition", "nope"); code != exitcode.Slurm || !strings.Contains(errOut, `no node is in partition "nope"`) {
		t.Errorf("unknown partition: exit %d %s", code, errOut)
	}
}

func TestSlurmCommandsConfigErrors(t *testing.T) {
	slurmEnv(t, "", "")
	if _, errOut, code := runSlurmCmd(t, "ping"); code != exitcode.Config || !strings.Contains(errOut, "no slurmrestd URL") {
		t.Errorf("no URL: exit %d %s", code, errOut)
	}
	slurmEnv(t, "http://127.0.0.1:1", "")
	if _, errOut, code := runSlurmCmd(t, "ping"); code != exitcode.Config || !strings.Contains(errOut, "no slurmrestd token") {
		t.Errorf("no token: exit %d %s", code, errOut)
	}
	slurmEnv(t, "http://127.0.0.1:1", "tok")
	if _, errOut, code := runSlurmCmd(t, "nodes"); code != exitcode.Slurm || !strings.Contains(errOut, "connection refused") {
		t.Errorf("unreachable: exit %d %s", code, errOut)
	}
}

const testProfile = `
[slurm]
rest_url = %q
user = "slurmtest"
partition = "debug"
account = "bench"
time_limit = "1:30:00"
gpus_per_node = 4
token_env = "MY_TEST_JWT"
api_version = "v0.0.41"

[paths]
runs_dir = "/shared/runs"
squash_dir = "/shared/squash"
`

func TestNewSlurmClientFromProfile(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithTokens("profile-token"))
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	path := filepath.Join(t.TempDir(), "p.toml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(testProfile, proxy.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sourced test-cluster env must not redirect a profile.
	slurmEnv(t, "http://127.0.0.1:1", "wrong-token")
	t.Setenv("MY_TEST_JWT", "profile-token")
	out, errOut, code := runSlurmCmd(t, "ping", "--profile", path)
	if code != 0 || !strings.Contains(out, "API v0.0.41") {
		t.Fatalf("ping --profile: exit %d %s %s", code, out, errOut)
	}
	if proxy.Count("GET", "/slurm/v0.0.41/ping") != 1 || proxy.Count("GET", "/v0.0.42/") != 0 {
		t.Errorf("api_version not pinned: %+v", proxy.Requests())
	}

	p := loadProfileForTest(t, path)
	cfg, err := p.SlurmConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.URL != proxy.URL || cfg.User != "slurmtest" || cfg.Token != "profile-token" || cfg.APIVersion != "v0.0.41" ||
		cfg.Defaults.Partition != "debug" || cfg.Defaults.Account != "bench" || cfg.Defaults.TimeLimit.Minutes() != 90 {
		t.Errorf("config = %+v", cfg)
	}
	c, err := p.SlurmClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(t.Context(), jobSpecForTest()); err != nil {
		t.Fatal(err)
	}
	d := fake.Jobs()[0].Desc
	if d["partition"] != "debug" || d["account"] != "bench" || d["time_limit"].(map[string]any)["number"] != 90.0 {
		t.Errorf("profile defaults not applied: %v", d)
	}

	t.Setenv("MY_TEST_JWT", "")
	if _, errOut, code := runSlurmCmd(t, "ping", "--profile", path); code != exitcode.Config || !strings.Contains(errOut, "$MY_TEST_JWT is empty") {
		t.Errorf("no token: exit %d %s", code, errOut)
	}
}
