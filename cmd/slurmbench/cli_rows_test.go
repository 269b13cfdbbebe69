package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// The rows of issue #25's table that the command line itself owns, one
// test each (row numbers in the names' comments).

// TestRunInEmptyJobID (row 1): --in "$SLURM_JOB_ID" with the variable unset
// is refused, never taken for "no --in" (which would submit a new job).
func TestRunInEmptyJobID(t *testing.T) {
	for _, in := range []string{"", "  "} {
		_, errOut, code := runCLI(t, "run", "--in", in, "-p", "x.toml", "-r", "y.yaml")
		if code != exitcode.Config || !strings.Contains(errOut, "--in: empty JOBID") {
			t.Errorf("run --in %q: exit %d, %s", in, code, errOut)
		}
	}
}

// TestHelpOfSubcommands (row 5): "CMD help SUB" and "help CMD SUB" print
// SUB's help and exit 0, at every level.
func TestHelpOfSubcommands(t *testing.T) {
	for _, args := range [][]string{
		{"runs", "help", "ls"}, {"images", "help", "import"}, {"results", "help", "compare"},
		{"help", "runs", "ls"}, {"runs", "ls", "--help"}, {"help", "render"},
	} {
		out, errOut, code := runCLI(t, args...)
		sub := args[len(args)-1]
		if sub == "--help" {
			sub = args[1]
		}
		if code != 0 || !strings.Contains(out, "NAME:") || !strings.Contains(out, " "+sub+" - ") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	if _, errOut, code := runCLI(t, "runs", "help", "lss"); code != exitcode.Config || !strings.Contains(errOut, `did you mean "ls"`) {
		t.Errorf("runs help lss: exit %d, %s", code, errOut)
	}
}

// TestVersionCommand (row 13): `version` is a command, --json has the fields.
func TestVersionCommand(t *testing.T) {
	out, errOut, code := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "slurmbench ") {
		t.Errorf("version: exit %d %q %s", code, out, errOut)
	}
	out, _, code = runCLI(t, "version", "--json")
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["version"] == "" || v["go"] == "" || v["platform"] == "" {
		t.Errorf("version --json: exit %d %q", code, out)
	}
}

// TestUnknownFlags (row 13): an unknown flag is named as typed on a command
// line, with the command's own help and the closest flag.
func TestUnknownFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--foo"}, "unknown flag --foo (see slurmbench --help)"},
		{[]string{"render", "--foo"}, "unknown flag --foo (see slurmbench render --help)"},
		{[]string{"render", "--profil", "x"}, "unknown flag --profil; did you mean --profile? (see slurmbench render --help)"},
		{[]string{"runs", "ls", "--jsn"}, "unknown flag --jsn; did you mean --json? (see slurmbench runs ls --help)"},
	} {
		_, errOut, code := runCLI(t, tt.args...)
		if code != exitcode.Config || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
}

// resultCommands are the commands that end with a result (not a server,
// an in-job helper or a script printer): each has --json.
func TestJSONOnEveryResultCommand(t *testing.T) {
	noResult := map[string]bool{
		"mock-engine": true, "mock-tool": true, "mock-dcgm-exporter": true, "mock-answer-key": true, "driver": true, "exec": true,
		"dynamo-install": true, "srtctl-bench": true, "stage-model": true, "import-node": true, "node-addr": true, "completion": true, "logs": true, "images import": true, "results name": true,
		"migrate": true, // prints the migrated YAML itself, or one status line per file
	}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(prefix + " " + c.Name)
			if len(c.Subcommands) > 0 {
				walk(name, c.Subcommands)
				continue
			}
			if !noResult[name] && !cliargs.HasFlag(c, "json") {
				t.Errorf("%s has no --json", name)
			}
		}
	}
	walk("", newApp().Commands)
}

// TestConflictsAndCounts (row 15): flags that would silently override each
// other are refused; counts below their minimum are refused naming the flag.
func TestConflictsAndCounts(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "-p", "x", "-r", "y", "--json", "--brief"}, "--json and --brief: give one, not both"},
		{[]string{"up", "-p", "x", "-r", "y", "--nodes", "-1"}, "--nodes -1: must be at least 1"},
		{[]string{"up", "-p", "x", "-r", "y", "--nodes", "0"}, "--nodes 0: must be at least 1"},
		{[]string{"bench", "--url", "http://h:1", "--gpus", "0"}, "--gpus 0: must be at least 1"},
		{[]string{"bench", "--url", "http://h:1", "--num-prompts", "-5"}, "--num-prompts -5: must be at least 0"},
		{[]string{"eval", "--url", "http://h:1", "--limit", "-1"}, "--limit -1: must be at least 0"},
		{[]string{"render", "-p", "x", "-r", "y", "--isl", "0"}, "--isl 0: must be at least 1"},
	} {
		_, errOut, code := runCLI(t, tt.args...)
		if code != exitcode.Config || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestEmptyStates (row 15): an empty or not yet created runs directory and
// an empty squash directory are said in words, exit 0.
func TestEmptyStates(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "ls", "--runs-dir", filepath.Join(dir, "not-yet")}, "no runs yet: " + filepath.Join(dir, "not-yet") + " does not exist"},
		{[]string{"runs", "ls", "--runs-dir", dir}, "no runs in " + dir},
		{[]string{"images", "ls", "--squash-dir", dir}, "no images in " + dir},
	} {
		out, errOut, code := runCLI(t, tt.args...)
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d %q %s, want %q", tt.args, code, out, errOut, tt.want)
		}
	}
	out, _, code := runCLI(t, "runs", "ls", "--runs-dir", filepath.Join(dir, "not-yet"), "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("runs ls --json of a missing dir: exit %d %q", code, out)
	}
}

// TestCompletionScripts (row 13): the bash, zsh and fish scripts are
// generated from the command tree; bash's completes every command path
// to its subcommands and flags when run in bash.
func TestCompletionScripts(t *testing.T) {
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, errOut, code := runCLI(t, "completion", sh)
		if code != 0 || out == "" {
			t.Fatalf("completion %s: exit %d %s", sh, code, errOut)
		}
		scripts[sh] = out
	}
	if _, _, code := runCLI(t, "completion", "tcsh"); code != exitcode.Config {
		t.Errorf("completion tcsh: exit %d, want 2", code)
	}
	for _, want := range []string{"complete -c slurmbench -n '__fish_use_subcommand' -a render", "__fish_seen_subcommand_from runs; and not __fish_seen_subcommand_from ls show gc' -a ls",
		"-n '__fish_seen_subcommand_from render' -l profile -r -F"} {
		if !strings.Contains(scripts["fish"], want) {
			t.Errorf("fish script lacks %q", want)
		}
	}
	if !strings.HasPrefix(scripts["zsh"], "#compdef slurmbench\n") {
		t.Errorf("zsh script does not start with #compdef")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	path := filepath.Join(t.TempDir(), "c.bash")
	if err := os.WriteFile(path, []byte(scripts["bash"]), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ words, want string }{
		{"slurmbench ren", "render"},
		{"slurmbench runs l", "ls"},
		{"slurmbench runs ls --run", "--runs-dir"},
		{"slurmbench render -p x --bri", "--brief"},
		{"slurmbench images import --lock", "--lock-timeout"},
		{"slurmbench completion", "completion"},
	} {
		script := ". " + path + "; COMP_WORDS=(" + tt.words + "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _slurmbench_complete; echo \"${COMPREPLY[*]}\""
		out, err := exec.Command(bash, "--norc", "-c", script).CombinedOutput()
		if err != nil || !strings.Contains(" "+strings.TrimSpace(string(out))+" ", " "+tt.want+" ") {
			t.Errorf("bash completes %q to %q (%v), want %q among them", tt.words, out, err, tt.want)
		}
	}
	for _, sh := range []string{"bash", "zsh"} {
		if prog, err := exec.LookPath(sh); err == nil {
			p := filepath.Join(t.TempDir(), "c."+sh)
			_ = os.WriteFile(p, []byte(scripts[sh]), 0o600)
			if out, err := exec.Command(prog, "-n", p).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v %s", sh, err, out)
			}
		}
	}
}

// TestASCIIUnderLangC (row 13): with a non-UTF-8 locale the marks are
// words (doctor's ✓/✗ become ok/FAIL), and nothing non-ASCII is printed;
// --json output is data and is left as it is.
func TestASCIIUnderLangC(t *testing.T) {
	t.Setenv("DOCTOR_TEST_JWT", "good")
	path := doctorProfile(t, deadURL(t), "")
	t.Setenv("LC_ALL", "C")
	out, errOut, code := runCLI(t, "doctor", "-p", path)
	if code != exitcode.Slurm || !strings.Contains(out, "FAIL slurmrestd") {
		t.Errorf("doctor under LC_ALL=C: exit %d\n%s\n%s", code, out, errOut)
	}
	for i, r := range out + errOut {
		if r >= 0x80 {
			t.Errorf("non-ASCII %q at %d under LC_ALL=C:\n%s%s", r, i, out, errOut)
			break
		}
	}
	t.Setenv("LC_ALL", "en_US.UTF-8")
	if out, _, _ := runCLI(t, "doctor", "-p", path); !strings.Contains(out, "✗ slurmrestd") {
		t.Errorf("doctor under a UTF-8 locale:\n%s", out)
	}
}

// TestDurationsOneParser (row 7): every duration flag takes Slurm's forms
// and Go's, refuses out-of-range values naming the bound, and a bad one
// names the accepted forms.
func TestDurationsOneParser(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "-p", "x", "-r", "y", "--time-limit", "999d"}, `--time-limit: "999d" is 999d, more than the most allowed, 30d`},
		{[]string{"up", "-p", "x", "-r", "y", "--time-limit", "soon"}, `--time-limit: "soon" is not a duration: want Slurm's MINUTES, MM:SS, HH:MM:SS`},
		{[]string{"run", "-p", "x", "-r", "y", "--cancel-wait", "2d"}, `--cancel-wait: "2d" is 2d, more than the most allowed, 1d`},
		{[]string{"runs", "gc", "--runs-dir", "x", "--older-than", "a week"}, `"a week" is not a duration: want`},
		{[]string{"render", "-p", "x", "-r", "y", "--point", "x"}, `--point: "x" is not a number`},
	} {
		_, errOut, code := runCLI(t, tt.args...)
		if code != exitcode.Config || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
	// Slurm's forms and Go's are accepted alike: they get past the flag
	// parser to the profile (which does not exist here).
	for _, v := range []string{"04:00:00", "4h", "1-00:00:00", "1d", "240"} {
		_, errOut, _ := runCLI(t, "up", "-p", filepath.Join(t.TempDir(), "none.toml"), "-r", "y", "--time-limit", v)
		if strings.Contains(errOut, "--time-limit") {
			t.Errorf("--time-limit %s refused: %s", v, errOut)
		}
	}
	for _, v := range []string{"7d", "36h", "1-12:00:00", "90m"} {
		_, errOut, code := runCLI(t, "runs", "gc", "--runs-dir", t.TempDir(), "--older-than", v)
		if code != 0 {
			t.Errorf("runs gc --older-than %s: exit %d %s", v, code, errOut)
		}
	}
}

// TestOneCodePerCause (row 6): each command that can meet a cause exits
// with the cause's one code from exitcode.Causes.
func TestOneCodePerCause(t *testing.T) {
	recipe := filepath.Join(repoRoot(t), "examples", "mock-2p1d.yaml")
	t.Setenv("DOCTOR_TEST_JWT", "good")
	dead := doctorProfile(t, deadURL(t), "")
	noToken := doctorProfile(t, deadURL(t), `token_env = "DOCTOR_TEST_NO_JWT"
token_command = ["no-such-scontrol-for-slurmbench-tests", "token"]`)
	missing := filepath.Join(t.TempDir(), "missing.toml")
	// The commands that reach slurmrestd, with the profile as "P".
	slurmCmds := [][]string{
		{"doctor", "-p", "P"}, {"ping", "-p", "P"}, {"status", "-p", "P", "42"}, {"cancel", "-p", "P", "42"},
		{"nodes", "-p", "P"}, {"down", "-p", "P", "42"}, {"attach", "-p", "P", "42"}, {"logs", "-p", "P", "42"},
		{"run", "-p", "P", "-r", recipe}, {"up", "-p", "P", "-r", recipe}, {"run", "--in", "42", "-p", "P", "-r", recipe},
	}
	with := func(args []string, prof string) []string {
		out := append([]string(nil), args...)
		for i, a := range out {
			if a == "P" {
				out[i] = prof
			}
		}
		return out
	}
	check := func(cause string, args []string) {
		t.Helper()
		_, errOut, code := runCLI(t, args...)
		if want := exitcode.CodeOf(cause); code != want {
			t.Errorf("%s: %v exits %d, want %d\n%s", cause, args, code, want, errOut)
		}
	}
	for _, args := range slurmCmds {
		check(exitcode.CauseSlurmDown, with(args, dead))
		check(exitcode.CauseNoToken, with(args, noToken))
		check(exitcode.CauseBadInput, with(args, missing))
	}
	// An endpoint: https to a plain-HTTP server cannot be measured; a
	// closed port is down.
	plain := deadURL(t)
	srv := newPlainHTTP(t)
	check(exitcode.CauseUnmeasurable, []string{"bench", "--url", strings.Replace(srv, "http://", "https://", 1), "--model", "m", "--isl", "8", "--osl", "8", "--conc", "1", "--out", t.TempDir()})
	check(exitcode.CauseEndpointDown, []string{"bench", "--url", plain, "--model", "m", "--isl", "8", "--osl", "8", "--conc", "1", "--out", t.TempDir()})
	check(exitcode.CauseEndpointDown, []string{"eval", "--url", plain, "--model", "m", "--limit", "1", "--out", t.TempDir()})
	check(exitcode.CauseBadInput, []string{"bench", "--url", plain, "--model", "m", "--isl", "8", "--osl", "8", "--conc", "1", "--out", "/etc/passwd"})
}

// newPlainHTTP is a plain-HTTP server answering 404 to everything.
func newPlainHTTP(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestStageDirChecks (row 11): a --stage-dir that is a file is named as
// such; a run refused by preflight creates no stage directory.
func TestStageDirChecks(t *testing.T) {
	recipe := filepath.Join(repoRoot(t), "examples", "mock-2p1d.yaml")
	t.Setenv("DOCTOR_TEST_JWT", "good")
	prof := doctorProfile(t, deadURL(t), "")
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, "run", "-p", prof, "-r", recipe, "--stage-dir", file)
	if code != exitcode.Config || !strings.Contains(errOut, file+" is a file, not a directory") {
		t.Errorf("--stage-dir FILE: exit %d %s", code, errOut)
	}
	stage := filepath.Join(t.TempDir(), "stage")
	_, errOut, code = runCLI(t, "run", "-p", prof, "-r", recipe, "--stage-dir", stage)
	if code != exitcode.Slurm {
		t.Errorf("dead slurmrestd: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(stage); err == nil {
		t.Errorf("a run refused by preflight created its stage directory %s", stage)
	}
}

// TestEveryProfileHasARenderingExample (row 8): every shipped profile has
// an example recipe (examples/*.yaml) that renders on it, and every
// example recipe renders on some shipped profile.
func TestEveryProfileHasARenderingExample(t *testing.T) {
	root := repoRoot(t)
	profiles, _ := filepath.Glob(filepath.Join(root, "profiles", "*.toml"))
	examples, _ := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	if len(profiles) == 0 || len(examples) == 0 {
		t.Fatalf("profiles %v, examples %v", profiles, examples)
	}
	usedExample := map[string]bool{}
	for _, p := range profiles {
		rendered := false
		for _, r := range examples {
			if strings.HasSuffix(r, "-master.yaml") {
				usedExample[r] = true // an InferenceX master config, not a recipe
				continue
			}
			_, _, code := runCLI(t, "render", "-p", p, "-r", r, "--brief")
			if code == 0 {
				rendered, usedExample[r] = true, true
			}
		}
		if !rendered {
			t.Errorf("no example recipe renders on %s", filepath.Base(p))
		}
	}
	for _, r := range examples {
		if !usedExample[r] {
			t.Errorf("%s renders on no shipped profile", filepath.Base(r))
		}
	}
}

// TestRenderSaysTheJobBinary (row 10): render names the compute nodes'
// architecture and the binary a run ships (GB300: aarch64 nodes behind an
// x86_64 login node), and whether it is there.
func TestRenderSaysTheJobBinary(t *testing.T) {
	root := repoRoot(t)
	out, errOut, code := runCLI(t, "render", "-p", filepath.Join(root, "profiles", "gb300-nv.toml"),
		"-r", filepath.Join(root, "examples", "gb300-nv-dsv4-1p1d.yaml"), "--brief")
	if code != 0 || !strings.Contains(out, "Job binary: linux-arm64/slurmbench (compute nodes aarch64") {
		t.Errorf("render gb300: exit %d\n%s\n%s", code, out, errOut)
	}
}
