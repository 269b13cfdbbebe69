package enroot

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/golden"

	"github.com/slurmbench/slurmbench/enroot/enroottest"
)

func mustMounts(t *testing.T, specs ...string) []Mount {
	t.Helper()
	var ms []Mount
	for _, s := range specs {
		m, err := ParseMount(s)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

func renderInvocation(b *bytes.Buffer, name string, inv Invocation) {
	fmt.Fprintf(b, "== %s\nargv:\n", name)
	for _, a := range inv.Argv {
		fmt.Fprintf(b, "  %s\n", a)
	}
	fmt.Fprintf(b, "env:\n")
	for _, e := range inv.Env {
		fmt.Fprintf(b, "  %s\n", e)
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", name), got)
}

// A worker step as the driver starts it: model and run directories mounted,
// secrets and settings passed by name, a command with characters a shell
// would interpret.
func workerEnv() map[string]string {
	return map[string]string{
		"HF_TOKEN":                 "hf_secret_value",
		"NCCL_DEBUG":               "WARN",
		"SGLANG_DISAGGREGATION_IB": "mlx5_0,mlx5_1",
	}
}

func TestStartCommandGolden(t *testing.T) {
	cases := []struct {
		name string
		spec StartSpec
	}{
		{"squash with command", StartSpec{
			Image:   "/shared/squash/lmsysorg_sglang_v0.5.16-cu130.sqsh",
			Env:     workerEnv(),
			Mounts:  mustMounts(t, "/models/dsr1:/model:ro", "/runs/42:/runs/42"),
			Workdir: "/runs/42",
			Command: []string{"python3", "-m", "sglang.launch_server", "--model-path", "/model", "--served-model-name", "deepseek r1; $(id)"},
		}},
		{"named container, root, writable", StartSpec{
			Image: "dynamo-sglang", Root: true, RW: true,
			Command: []string{"/bin/true"},
		}},
		{"config and rc scripts, image default command", StartSpec{
			Image: "/shared/squash/nginx_1.27.4.sqsh", Conf: "/runs/42/enroot.conf", RC: "/runs/42/rc.sh",
		}},
	}
	var b bytes.Buffer
	for _, tc := range cases {
		inv, err := StartCommand("", tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		renderInvocation(&b, tc.name, inv)
	}
	checkGolden(t, "enroot-start.golden", b.Bytes())
}

func TestPyxisFlagsGolden(t *testing.T) {
	ref, err := ParseRef("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		spec PyxisSpec
	}{
		{"squash, mounts, env by name, workdir", PyxisSpec{
			Image:   "/shared/squash/lmsysorg_sglang_v0.5.16-cu130.sqsh",
			Mounts:  mustMounts(t, "/models/dsr1:/model:ro", "/runs/42:/runs/42"),
			Env:     workerEnv(),
			Workdir: "/runs/42",
		}},
		{"registry image pulled by pyxis, entrypoint, home, root, writable", PyxisSpec{
			Image: ref.PyxisImage(), Entrypoint: true, MountHome: true, RemapRoot: true, Writable: true,
		}},
	}
	var b bytes.Buffer
	for _, tc := range cases {
		inv, err := PyxisFlags(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		renderInvocation(&b, tc.name, inv)
	}
	checkGolden(t, "pyxis-flags.golden", b.Bytes())
}

func TestBuildersRejectWhatTheRuntimesWouldMisread(t *testing.T) {
	good := StartSpec{Image: "/s/x.sqsh", Command: []string{"true"}}
	startCases := []struct {
		name string
		edit func(*StartSpec)
		want string
	}{
		{"no image", func(s *StartSpec) { s.Image = "" }, "no image"},
		{"relative image path", func(s *StartSpec) { s.Image = "squash/x.sqsh" }, "neither an absolute squash path"},
		{"env name with '='", func(s *StartSpec) { s.Env = map[string]string{"A=B": "x"} }, `"A=B"`},
		{"env name starting with a digit", func(s *StartSpec) { s.Env = map[string]string{"1X": "x"} }, `"1X"`},
		{"relative mount source", func(s *StartSpec) { s.Mounts = []Mount{{Source: "data", Target: "/data"}} }, "not an absolute path"},
		{"mount with a comma", func(s *StartSpec) { s.Mounts = []Mount{{Source: "/a,b", Target: "/data"}} }, "':', ',' or whitespace"},
		{"mount with a space", func(s *StartSpec) { s.Mounts = []Mount{{Source: "/a b", Target: "/data"}} }, "':', ',' or whitespace"},
		{"relative workdir", func(s *StartSpec) { s.Workdir = "work" }, "not absolute"},
		{"workdir without command", func(s *StartSpec) { s.Workdir = "/w"; s.Command = nil }, "needs a command"},
	}
	for _, tc := range startCases {
		spec := good
		tc.edit(&spec)
		if _, err := StartCommand("enroot", spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("StartCommand %s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	pyxisCases := []struct {
		name string
		spec PyxisSpec
		want string
	}{
		{"no image", PyxisSpec{}, "no container image"},
		{"image with a comma", PyxisSpec{Image: "/a,b.sqsh"}, "contains ','"},
		{"bad env name", PyxisSpec{Image: "/a.sqsh", Env: map[string]string{"A-B": ""}}, `"A-B"`},
		{"relative workdir", PyxisSpec{Image: "/a.sqsh", Workdir: "w"}, "not absolute"},
		{"mount with a comma", PyxisSpec{Image: "/a.sqsh", Mounts: []Mount{{Source: "/a", Target: "/b,c"}}}, "':', ','"},
	}
	for _, tc := range pyxisCases {
		if _, err := PyxisFlags(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PyxisFlags %s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	for _, s := range []string{"/a", "/a:/b:rx", "/a:/b:ro:x", "a:/b"} {
		if _, err := ParseMount(s); err == nil {
			t.Errorf("ParseMount(%q) accepted", s)
		}
	}
}

var shells = []string{"sh", "bash", "dash", "zsh", "/bin/sh", "/bin/bash", "/usr/bin/env bash"}

// The builders never wrap anything in a shell: what they add is only enroot
// or pyxis options, the command is passed through element by element, and no
// environment value appears in argv.
func TestBuildersNeverUseAShell(t *testing.T) {
	hostile := [][]string{
		{"python3", "-c", "import os; print(os.environ['HF_TOKEN'])"},
		{"echo", "$(rm -rf /)", "`id`", "a;b", "a && b", "'quoted'", `"dq"`, "*", "~"},
		{"bash", "-c", "this is the user's own shell, passed through"},
	}
	env := workerEnv()
	for _, cmd := range hostile {
		inv, err := StartCommand("enroot", StartSpec{Image: "/s/x.sqsh", Env: env, Mounts: mustMounts(t, "/a:/b"), Workdir: "/w", Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(inv.Argv[len(inv.Argv)-len(cmd):], cmd) {
			t.Errorf("command not passed through verbatim: %q", inv.Argv)
		}
		checkNoShell(t, "enroot start", inv.Argv[:len(inv.Argv)-len(cmd)], env)
		checkNoValues(t, inv.Argv, env)

		flags, err := PyxisFlags(PyxisSpec{Image: "/s/x.sqsh", Env: env, Mounts: mustMounts(t, "/a:/b"), Workdir: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		checkNoShell(t, "pyxis", flags.Argv, env)
		checkNoValues(t, flags.Argv, env)
	}
}

func checkNoShell(t *testing.T, what string, added []string, env map[string]string) {
	t.Helper()
	for i, a := range added {
		if slices.Contains(shells, a) || a == "-c" {
			t.Errorf("%s adds a shell: %q", what, added)
		}
		if strings.ContainsAny(a, " ;&|$`'\"\n") {
			t.Errorf("%s argv element %d %q looks like a shell string", what, i, a)
		}
	}
}

func checkNoValues(t *testing.T, argv []string, env map[string]string) {
	t.Helper()
	for _, a := range argv {
		for k, v := range env {
			if strings.Contains(a, v) {
				t.Errorf("the value of %s appears in argv element %q", k, a)
			}
		}
	}
}

// End to end through the stand-in enroot: the argv arrives in the process
// unchanged (no shell in between would leave "$(id)" or quotes alone), and
// the values passed by name arrive through the environment.
func TestStartCommandThroughStandin(t *testing.T) {
	dir := t.TempDir()
	squash := filepath.Join(dir, "img.sqsh")
	if err := enroottest.WriteSquash(squash, 4096); err != nil {
		t.Fatal(err)
	}
	args := []string{"$(id)", "`id`", "a b", "'q'", `"dq"`, "*", "~", "x;y", ""}
	spec := StartSpec{
		Image:   squash,
		Env:     map[string]string{"HF_TOKEN": "hf secret $(id) 'v'", "EMPTY": ""},
		Mounts:  mustMounts(t, dir+":/work:ro"),
		Workdir: dir,
		Command: append([]string{"printf", `%s\n`, "$HF_TOKEN=[${HF_TOKEN-}]"}, args...),
	}
	inv, err := StartCommand(enroottest.StandinPath(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "calls.log")
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env = append(os.Environ(), "ENROOT_STANDIN_LOG="+log, "ENROOT_DATA_PATH="+filepath.Join(dir, "data"))
	cmd.Env = append(cmd.Env, inv.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", inv.Argv, err, out)
	}
	firstArgv := inv.Argv
	want := strings.Join(append([]string{"$HF_TOKEN=[${HF_TOKEN-}]"}, args...), "\n") + "\n"
	if string(out) != want {
		t.Errorf("the command received\n%q\nwant\n%q", out, want)
	}

	// The value really is in the container environment.
	spec.Command = []string{"printenv", "HF_TOKEN"}
	inv, _ = StartCommand(enroottest.StandinPath(t), spec)
	cmd = exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env = append(append(os.Environ(), "ENROOT_STANDIN_LOG="+log), inv.Env...)
	if out, err := cmd.Output(); err != nil || string(out) != "hf secret $(id) 'v'\n" {
		t.Errorf("printenv HF_TOKEN = %q, %v", out, err)
	}

	calls, err := enroottest.ReadCalls(log)
	if err != nil {
		t.Fatal(err)
	}
	if enroottest.Count(calls, "start") != 2 {
		t.Fatalf("stand-in calls: %+v", calls)
	}
	if !slices.Equal(calls[0].Argv, firstArgv[1:]) {
		t.Errorf("logged argv %q, sent %q", calls[0].Argv, firstArgv)
	}
	for _, c := range calls {
		for _, a := range c.Argv {
			if strings.Contains(a, "hf secret") {
				t.Errorf("secret value in the logged argv: %q", c.Argv)
			}
		}
	}
}
