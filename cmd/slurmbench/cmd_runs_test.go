package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// TestRunsCommands: ls, show and gc over a runs directory holding one ended
// run (its plan is render's, its outcome and staging record the driver's
// and run's).
func TestRunsCommands(t *testing.T) {
	clearRenderEnv(t)
	data := renderData(t)
	runsDir := t.TempDir()
	id := "mock-2p1d-20261202T201500Z-abcdef"
	pl, errOut, code := runCLI(t, "render", "--json", "-p", filepath.Join(data, "profile.toml"), "-r", filepath.Join(data, "recipes", "mock-2p1d.yaml"), "--run-id", id)
	if code != 0 {
		t.Fatalf("render: exit %d %s", code, errOut)
	}
	dir := filepath.Join(runsDir, id)
	if err := rundir.Create(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rundir.PlanPath(dir), []byte(pl), 0o644); err != nil {
		t.Fatal(err)
	}
	l := rundir.New(dir)
	if err := rundir.WriteJournal(l.Journal, rundir.Journal{RunID: id, SubmitKey: "k", JobID: "4242"}); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteOutcome(l.Outcome, rundir.Outcome{Result: rundir.Failed, FirstError: "CUDA out of memory", JobID: "4242"}); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteStaged(rundir.StagedPath(dir), rundir.Staged{Dir: "/ws/out", Files: []string{"/ws/out/r.json"}}); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runCLI(t, "runs", "ls", "--runs-dir", runsDir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "RUN ID") {
		t.Fatalf("runs ls: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{id, "mock-2p1d", "4242", "ended", "failed", "/ws/out"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("runs ls line lacks %q: %s", want, lines[1])
		}
	}

	for _, name := range []string{id, "4242"} {
		out, errOut, code = runCLI(t, "runs", "show", name, "--runs-dir", runsDir)
		if code != 0 || !strings.Contains(out, "first error") || !strings.Contains(out, "CUDA out of memory") || !strings.Contains(out, "/ws/out/r.json") {
			t.Errorf("runs show %s: exit %d\n%s%s", name, code, out, errOut)
		}
	}
	out, _, code = runCLI(t, "runs", "show", "--json", "--runs-dir", runsDir, id)
	var r struct {
		ID      string `json:"run_id"`
		Outcome string `json:"outcome"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.ID != id || r.Outcome != "failed" {
		t.Errorf("runs show --json: exit %d %s", code, out)
	}
	if _, errOut, code = runCLI(t, "runs", "show", "--runs-dir", runsDir, "nosuch"); code != exitcode.Config || !strings.Contains(errOut, "no run \"nosuch\"") {
		t.Errorf("runs show nosuch: exit %d %s", code, errOut)
	}

	out, _, code = runCLI(t, "runs", "gc", "--runs-dir", runsDir, "--older-than", "0")
	if code != 0 || !strings.Contains(out, "would remove  "+id) || !strings.Contains(out, "dry run") {
		t.Fatalf("runs gc dry run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal("the dry run removed the run")
	}
	out, _, code = runCLI(t, "runs", "gc", "--runs-dir", runsDir, "--older-than", "7d", "--delete")
	if code != 0 || !strings.Contains(out, "keep") || !strings.Contains(out, "0 of 1 runs removed") {
		t.Fatalf("runs gc of a young run: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "runs", "gc", "--runs-dir", runsDir, "--older-than", "0", "--delete")
	if _, err := os.Stat(dir); code != 0 || err == nil || !strings.Contains(out, "1 of 1 runs removed") {
		t.Fatalf("runs gc --delete: exit %d, dir still there: %v\n%s", code, err == nil, out)
	}

	for _, args := range [][]string{
		{"runs", "gc", "--runs-dir", runsDir},                           // --older-than is required
		{"runs", "gc", "--runs-dir", runsDir, "--older-than", "a week"}, // not an age
		{"runs", "ls"}, // no runs dir
	} {
		if _, errOut, code := runCLI(t, args...); code != exitcode.Config {
			t.Errorf("%q: exit %d, want 2: %s", args, code, errOut)
		}
	}
}

// TestRunStageDirParentMustExist: a --stage-dir whose parent is missing is
// a typo, refused before anything happens.
func TestRunStageDirParentMustExist(t *testing.T) {
	clearRenderEnv(t)
	data := renderData(t)
	stage := filepath.Join(t.TempDir(), "no-such-parent", "out")
	_, errOut, code := runCLI(t, "run", "-p", filepath.Join(data, "profile.toml"), "-r", filepath.Join(data, "recipes", "mock-2p1d.yaml"), "--stage-dir", stage)
	if code != exitcode.Config || !strings.Contains(errOut, "--stage-dir") || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("exit %d, want 2 naming --stage-dir: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Dir(stage)); err == nil {
		t.Error("the missing parent was created")
	}
}

// TestRunsAskSlurm: with a profile, a run without an outcome shows its
// job's state from slurmrestd, and gc keeps it while the job runs.
func TestRunsAskSlurm(t *testing.T) {
	clearRenderEnv(t)
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
	t.Setenv("RUNS_TEST_JWT", "tok")
	client, err := slurm.New(slurm.Config{URL: fake.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := client.Submit(t.Context(), slurm.JobSpec{Name: "r", Script: "#!/bin/sh\ntrue\n"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prof := filepath.Join(dir, "profile.toml")
	text := "[slurm]\nrest_url = \"" + fake.URL + "\"\npartition = \"debug\"\ngpus_per_node = 4\ntoken_env = \"RUNS_TEST_JWT\"\n[paths]\nruns_dir = \"runs\"\nsquash_dir = \"squash\"\n"
	if err := os.WriteFile(prof, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	data := renderData(t)
	id := "mock-2p1d-running"
	pl, errOut, code := runCLI(t, "render", "--json", "-p", filepath.Join(data, "profile.toml"), "-r", filepath.Join(data, "recipes", "mock-2p1d.yaml"), "--run-id", id)
	if code != 0 {
		t.Fatalf("render: %s", errOut)
	}
	run := filepath.Join(dir, "runs", id)
	if err := rundir.Create(run); err != nil {
		t.Fatal(err)
	}
	l := rundir.New(run)
	for _, err := range []error{
		os.WriteFile(rundir.PlanPath(run), []byte(pl), 0o644),
		rundir.WriteJournal(l.Journal, rundir.Journal{RunID: id, SubmitKey: "k", JobID: sub.JobID.String()}),
		rundir.WriteStatus(l.Status, rundir.Status{Phase: rundir.PhaseBenchmark, JobID: sub.JobID.String()}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runCLI(t, "runs", "ls", "-p", prof)
	if code != 0 || !strings.Contains(out, "benchmark (job RUNNING)") {
		t.Fatalf("runs ls: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runCLI(t, "runs", "gc", "-p", prof, "--older-than", "0", "--delete")
	if _, err := os.Stat(run); code != 0 || err != nil || !strings.Contains(out, "keep  "+id) || !strings.Contains(out, "is RUNNING") {
		t.Fatalf("runs gc removed a running job's run or did not say why: exit %d\n%s", code, out)
	}
}
