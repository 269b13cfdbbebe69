package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// runCLI runs argv exactly as main does (argument preparation, signal
// context, exit-code mapping) and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, exitcode.Code) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"slurmbench"}, args...), &out, &errOut)
	return out.String(), errOut.String(), exitcode.Code(code)
}

func TestInterleave(t *testing.T) {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "json"},
		&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}},
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}},
		&cli.IntFlag{Name: "point"},
	}
	for _, tt := range []struct {
		in, want []string
	}{
		{[]string{"4242", "--json"}, []string{"--json", "4242"}},
		{[]string{"4242", "-f", "--process", "x"}, []string{"-f", "--process", "4242", "x"}}, // unknown --process: one token
		{[]string{"4242", "-p", "p.toml", "-f"}, []string{"-p", "p.toml", "-f", "4242"}},
		{[]string{"a", "--profile=p.toml", "b"}, []string{"--profile=p.toml", "a", "b"}},
		{[]string{"--point", "-1", "x"}, []string{"--point", "-1", "x"}},
		{[]string{"a", "--json", "--", "-b", "--json"}, []string{"--json", "--", "a", "-b", "--json"}},
		{[]string{"-", "--json"}, []string{"--json", "-"}},
		{[]string{"a", "--help"}, []string{"--help", "a"}},
		{[]string{"a", "-p"}, []string{"-p", "a"}}, // a value flag at the end: the parser says what is missing
		{nil, nil},
	} {
		if got := cliargs.Interleave(flags, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("cliargs.Interleave(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPrepareArgs(t *testing.T) {
	app := newApp()
	for _, tt := range []struct {
		in, want []string
		err      string
	}{
		{in: []string{"status", "4242", "--json"}, want: []string{"status", "--json", "4242"}},
		{in: []string{"images", "import", "img:1", "--squash-dir", "/s"}, want: []string{"images", "import", "--squash-dir", "/s", "img:1"}},
		{in: []string{"results", "compare", "a", "b", "--json"}, want: []string{"results", "compare", "--json", "a", "b"}},
		{in: []string{"--version"}, want: []string{"--version"}},
		{in: []string{"help"}, want: []string{"help"}},
		{in: []string{"help", "images", "import"}, want: []string{"images", "import", "--help"}},
		{in: []string{"help", "imgaes"}, err: `unknown command "imgaes"; did you mean "images"?`},
		{in: []string{"rnu"}, err: `unknown command "rnu"; did you mean "run"?`},
		{in: []string{"stauts", "1"}, err: `did you mean "status"?`},
		{in: []string{"images", "imprt"}, err: `unknown command "images imprt"; did you mean "images import"?`},
		{in: []string{"frobnicate"}, err: `unknown command "frobnicate" ('slurmbench --help' lists the commands)`},
	} {
		got, err := cliargs.PrepareArgs(app, append([]string{"slurmbench"}, tt.in...))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || exitcode.Of(err) != exitcode.Config {
				t.Errorf("%q: error %v, want exit 2 with %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got[1:], tt.want) {
			t.Errorf("%q: %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestCLIForgives runs what a new user types, through main's own path.
func TestCLIForgives(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code exitcode.Code
		out  string // in stdout
		err  string // in stderr
	}{
		{args: []string{"help"}, out: "COMMANDS:"},
		{args: []string{"help", "run"}, out: "slurmbench run - run one benchmark point"},
		{args: []string{"help", "images", "import"}, out: "slurmbench images import - import images"},
		{args: []string{"render", "--help"}, out: "Examples"},
		{args: []string{"rnu"}, code: exitcode.Config, err: `did you mean "run"?`},
		{args: []string{"mock-answer-key", "--accuracy", "0.9"}, code: exitcode.Config, err: "--out: required"},
		{args: []string{"render", "--point"}, code: exitcode.Config, err: "flag needs an argument"},
	} {
		out, errOut, code := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
			t.Errorf("slurmbench %s: exit %d (want %d)\nstdout: %s\nstderr: %s", strings.Join(tt.args, " "), code, tt.code, out, errOut)
		}
	}
}

// TestFlagsAfterArguments: the three commands the issue names, with their
// flags after the positional arguments, against a fake slurmrestd.
func TestFlagsAfterArguments(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"COMPLETED"}}))
	slurmEnv(t, fake.URL, "tok")
	pl := stepPlan(t)
	pl.Processes = append(pl.Processes, plan.Process{Name: "decode_w0", Role: plan.RoleDecode, Nodes: []int{0},
		Argv: []string{"true"}, Log: filepath.Join(pl.Layout.Logs, "decode_w0.out")})
	writePlan(t, pl)
	if err := os.MkdirAll(pl.Layout.Logs, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, pl.Processes[0].Log, "decode worker 0 says hello\n")
	c, err := newSlurmClientFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.Submit(t.Context(), slurm.JobSpec{Name: "st", Script: "#!/bin/sh\ntrue\n", WorkDir: pl.RunDir})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(int64(sub.JobID), 10)
	prof := filepath.Join(t.TempDir(), "p.toml")
	writeTestFile(t, prof, "[slurm]\nrest_url = \""+fake.URL+"\"\npartition = \"debug\"\ngpus_per_node = 4\n[paths]\nruns_dir = \"runs\"\n[container]\nruntime = \"none\"\n")

	out, errOut, code := runCLI(t, "status", id, "--json")
	var j struct {
		JobID int64 `json:"job_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil || j.JobID != int64(sub.JobID) {
		t.Errorf("status %s --json: exit %d\n%s\n%s", id, code, out, errOut)
	}

	out, errOut, code = runCLI(t, "logs", id, "-f", "--process", "decode_w0", "-p", prof)
	if code != 0 || out != "decode worker 0 says hello\n" {
		t.Errorf("logs %s -f --process decode_w0: exit %d\n%q\n%s", id, code, out, errOut)
	}

	data := filepath.Join("..", "..", "results", "compare", "testdata", "compare")
	out, errOut, code = runCLI(t, "results", "compare", filepath.Join(data, "baseline"), filepath.Join(data, "candidate"), "--json")
	if code != 0 || !json.Valid([]byte(out)) {
		t.Errorf("results compare A B --json: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestVersionFlag(t *testing.T) {
	if out, _, code := runCLI(t, "--version"); code != 0 || !strings.HasPrefix(out, "slurmbench version ") {
		t.Errorf("--version: exit %d %q", code, out)
	}
}
