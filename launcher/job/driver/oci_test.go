package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// ociImage writes an image bundle as umoci unpacks one (the parts a step's
// config keeps or changes) and returns its directory.
func ociImage(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lmsysorg_sglang_v0.5.12.oci")
	if err := os.MkdirAll(filepath.Join(dir, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"ociVersion": "1.0.0", "process": {"args": ["/bin/sh"], "env": ["PATH=/usr/bin"], "cwd": "/"},
		"root": {"path": "rootfs"}, "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"}],
		"linux": {"namespaces": [{"type": "pid"}, {"type": "mount"}, {"type": "user"}]}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOCIStep: under the oci runtime a container step is srun
// --container=<its own bundle> followed by the shim, the bundle's
// config.json (written before the step) carries the step's mounts over
// the image's root, and secrets reach the container by srun's environment.
func TestOCIStep(t *testing.T) {
	pl := testPlan(profile.RuntimeOCI)
	pl.Image.Squash = ociImage(t)
	alloc := Allocation{JobID: "4242", Hosts: []string{"gpu001", "gpu002"}, IPs: []string{"10.0.0.1", "10.0.0.2"}}
	getenv := func(k string) string {
		if k == "HF_TOKEN" {
			return "hf_secret_value"
		}
		return ""
	}
	procs := testProcs()
	st, err := BuildStep(pl, procs[0], alloc, getenv)
	if err != nil {
		t.Fatal(err)
	}
	bundle := "/shared/runs/r1/steps/prefill_w1.oci"
	i := slices.Index(st.Argv, "--container="+bundle)
	j := slices.Index(st.Argv, "--mem=0")
	k := slices.Index(st.Argv, pl.Binary)
	if i < 0 || j < i || k < j || st.Argv[k+1] != "exec" {
		t.Errorf("argv %q: want --container=%s, then the extra srun flags, then the shim", st.Argv, bundle)
	}
	if slices.ContainsFunc(st.Argv, func(a string) bool { return strings.Contains(a, "hf_secret_value") }) {
		t.Error("a secret value in argv")
	}
	if !slices.Contains(st.Env, "HF_TOKEN=hf_secret_value") {
		t.Errorf("env %q: the secret must reach the step through srun's environment", st.Env)
	}
	content, ok := st.Files[filepath.Join(bundle, "config.json")]
	if !ok {
		t.Fatalf("files %v: no config.json for the step's bundle", st.Files)
	}
	var cfg struct {
		Root   struct{ Path string }
		Mounts []struct{ Destination, Source string }
	}
	if err := json.Unmarshal([]byte(content), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Root.Path != filepath.Join(pl.Image.Squash, "rootfs") {
		t.Errorf("root %q, want the image's rootfs", cfg.Root.Path)
	}
	var dsts []string
	for _, m := range cfg.Mounts {
		dsts = append(dsts, m.Destination)
	}
	if !slices.Equal(dsts, []string{"/proc", "/tmp", "/shared/runs/r1", "/logs", "/model"}) {
		t.Errorf("mounts %q, want the image's, /tmp, then the step's", dsts)
	}

	// Outside the container: no bundle, no --container.
	st, err = BuildStep(pl, procs[2], alloc, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(st.Argv, func(a string) bool { return strings.HasPrefix(a, "--container") }) || len(st.Files) != 0 {
		t.Errorf("host step: argv %q files %v", st.Argv, st.Files)
	}

	// A squash file cannot be an OCI bundle; an image never imported fails
	// the step with what to do.
	bad := procs[1]
	bad.Image = "/squash/other.sqsh"
	if _, err := BuildStep(pl, bad, alloc, getenv); err == nil || !strings.Contains(err.Error(), "image reference") {
		t.Errorf("squash image under oci: %v", err)
	}
	bad.Image = "nvcr.io/nvidia/other:1"
	if _, err := BuildStep(pl, bad, alloc, getenv); err == nil || !strings.Contains(err.Error(), "images import") {
		t.Errorf("an image not imported: %v", err)
	}
}

// TestOCIStartFailure: a failed step whose shim never printed its first
// line never got into its container; its lines other than srun's and
// slurmstepd's are the runtime's.
func TestOCIStartFailure(t *testing.T) {
	container := plan.Process{Name: "w", Container: true}
	cases := []struct {
		name    string
		runtime profile.Runtime
		proc    plan.Process
		lines   []string
		want    []string
	}{
		{"crun refused the bundle", profile.RuntimeOCI, container,
			[]string{"the target `/proc` is invalid: Not a directory", "srun: error: node1: task 0: Exited with exit code 1"},
			[]string{"the target `/proc` is invalid: Not a directory"}},
		{"the shim started: the engine's failure", profile.RuntimeOCI, container,
			[]string{"slurmbench exec: w on node1: [\"python3\"]", "Traceback (most recent call last):"}, nil},
		{"only srun's and slurmstepd's lines", profile.RuntimeOCI, container,
			[]string{"srun: error: node1: task 0: Exited with exit code 1", "slurmstepd: error: *** STEP 1.0 CANCELLED ***", ""}, nil},
		{"pyxis has its own patterns", profile.RuntimePyxis, container, []string{"something failed"}, nil},
		{"a host step", profile.RuntimeOCI, plan.Process{Name: "b"}, []string{"something failed"}, nil},
	}
	for _, tc := range cases {
		got, ok := ociStartFailure(&plan.Plan{Runtime: tc.runtime}, tc.proc, tc.lines)
		if !slices.Equal(got, tc.want) || ok != (tc.want != nil) {
			t.Errorf("%s: %q %v, want %q", tc.name, got, ok, tc.want)
		}
	}
}
