package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/enroot/enroottest"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// runImages runs "slurmbench images ..." in-process and returns stdout,
// stderr and the exit code main would use.
func runImages(t *testing.T, args ...string) (string, string, exitcode.Code) {
	t.Helper()
	return runCLI(t, append([]string{"images"}, args...)...)
}

func standinEnv(t *testing.T) (log string) {
	t.Helper()
	log = filepath.Join(t.TempDir(), "enroot.log")
	t.Setenv("ENROOT_STANDIN_LOG", log)
	t.Setenv("SLURMBENCH_SQUASH_DIR", "")
	t.Setenv("SLURMBENCH_PROFILE", "")
	return log
}

func TestImagesImportAndList(t *testing.T) {
	log := standinEnv(t)
	dir := t.TempDir()
	standin := enroottest.StandinPath(t)
	const image = "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc18"
	target := filepath.Join(dir, "nvcr.io_nvidia_tensorrt-llm_release_1.3.0rc18.sqsh")

	out, errOut, code := runImages(t, "import", "--squash-dir", dir, "--enroot", standin, image)
	if code != 0 || out != "imported\t"+image+"\t"+target+"\n" {
		t.Fatalf("import: %q (exit %d)\n%s", out, code, errOut)
	}
	if !strings.Contains(errOut, "Creating squashfs filesystem") {
		t.Errorf("enroot's output is not shown on stderr:\n%s", errOut)
	}
	// The registry form of the same image is the same file, already there.
	out, _, code = runImages(t, "import", "--squash-dir", dir, "--enroot", standin, "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc18")
	if code != 0 || !strings.HasPrefix(out, "cached\t") {
		t.Errorf("second import: %q (exit %d)", out, code)
	}
	calls, err := enroottest.ReadCalls(log)
	if err != nil || enroottest.Count(calls, "import") != 1 {
		t.Errorf("enroot calls %+v, %v", calls, err)
	}

	// A runner-made file without sidecar, and a broken one.
	if err := enroottest.WriteSquash(filepath.Join(dir, "lmsysorg_sglang_v0.5.16-cu130.sqsh"), 8192); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "broken.sqsh"), "hsqs")

	out, errOut, code = runImages(t, "ls", "--squash-dir", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "STATE") {
		t.Fatalf("ls: %q (exit %d) %s", out, code, errOut)
	}
	for _, want := range [][]string{
		{"invalid", "4 B", "-", "broken.sqsh"},
		{"unrecorded", "8.0 KiB", "-", "lmsysorg_sglang_v0.5.16-cu130.sqsh"},
		{"ok", "4.0 KiB", image, filepath.Base(target)},
	} {
		found := false
		for _, l := range lines[1:] {
			if m := lsRow.FindStringSubmatch(l); m != nil && slices.Equal([]string{m[1], m[2], m[4], m[5]}, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("ls has no row %v:\n%s", want, out)
		}
	}

	out, _, code = runImages(t, "ls", "--squash-dir", dir, "--json")
	var rows []launch.ImageListing
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 0 || len(rows) != 3 {
		t.Fatalf("ls --json: %v (exit %d)\n%s", err, code, out)
	}
	states := map[string]enroot.State{}
	for _, r := range rows {
		states[r.File] = r.State
		if r.File == filepath.Base(target) && (r.Ref != image || r.Size != 4096) {
			t.Errorf("row %+v", r)
		}
	}
	if states["broken.sqsh"] != enroot.StateInvalid || states[filepath.Base(target)] != enroot.StateOK {
		t.Errorf("states %v", states)
	}
}

// STATE SIZE AGE IMAGE FILE, where SIZE is "4 B" or "8.0 KiB".
var lsRow = regexp.MustCompile(`^(\S+)\s+([0-9.]+ \S+)\s+(\S+)\s+(\S+)\s+(\S+)$`)

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImagesImportErrors(t *testing.T) {
	standinEnv(t)
	dir := t.TempDir()
	standin := enroottest.StandinPath(t)
	cases := []struct {
		name    string
		args    []string
		env     string
		code    exitcode.Code
		wantErr string
	}{
		{"malformed pyxis form", []string{"import", "--squash-dir", dir, "nvcr.io#nvidia#x"}, "", exitcode.Config, `invalid image reference "nvcr.io#nvidia#x": more than one '#'`},
		{"uppercase", []string{"import", "--squash-dir", dir, "Lmsysorg/sglang:v1"}, "", exitcode.Config, "must be lowercase"},
		{"no image", []string{"import", "--squash-dir", dir}, "", exitcode.Config, "no image given"},
		{"no squash dir", []string{"import", "nginx:1.27.4"}, "", exitcode.Config, "no squash directory"},
		{"squash dir missing", []string{"ls", "--squash-dir", filepath.Join(dir, "nope")}, "", exitcode.Config, "not an existing directory"},
		{"failing enroot", []string{"import", "--squash-dir", dir, "--enroot", standin, "nginx:1.27.4"}, "ENROOT_STANDIN_FAIL_IMPORT", exitcode.Image, `importing image "nginx:1.27.4": no space left in`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(tc.env, "1")
			}
			out, errOut, code := runImages(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.wantErr) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d and %q", code, out, errOut, tc.code, tc.wantErr)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "nginx_1.27.4.sqsh.lock" {
		t.Errorf("left in the squash directory: %v", entries)
	}
}

func TestImagesImportFromProfile(t *testing.T) {
	log := standinEnv(t)
	site := t.TempDir()
	squash := filepath.Join(site, "squash")
	os.Mkdir(squash, 0o755)
	local := filepath.Join(site, "prebuilt.sqsh")
	if err := enroottest.WriteSquash(local, 4096); err != nil {
		t.Fatal(err)
	}
	// Compute nodes of the other architecture, imported here (import_on =
	// "login") with enroot import --arch; without it the import would be a
	// job on a compute node, as run does (profile.ImportOnCompute).
	other := map[string]string{"x86_64": "aarch64", "aarch64": "x86_64"}[profile.GoArch()]
	prof := filepath.Join(site, "cluster.toml")
	writeTestFile(t, prof, `cluster = "t"
[slurm]
rest_url = "http://127.0.0.1:6820"
partition = "debug"
gpus_per_node = 4
compute_arch = "`+other+`"
[paths]
runs_dir = "runs"
squash_dir = "squash"
[containers]
dynamo-sglang = "lmsysorg/sglang:v0.5.16-cu130"
nginx = "nginx:1.27.4"
prebuilt = "./prebuilt.sqsh"
[container]
import_on = "login"
`)
	out, errOut, code := runImages(t, "import", "-p", prof, "--enroot", enroottest.StandinPath(t))
	want := "imported\tlmsysorg/sglang:v0.5.16-cu130\t" + filepath.Join(squash, "lmsysorg_sglang_v0.5.16-cu130.sqsh") + "\n" +
		"imported\tnginx:1.27.4\t" + filepath.Join(squash, "nginx_1.27.4.sqsh") + "\n"
	if code != 0 || out != want {
		t.Fatalf("import all: %q (exit %d), want %q\n%s", out, code, want, errOut)
	}
	calls, _ := enroottest.ReadCalls(log)
	for _, c := range calls {
		if !slices.Contains(c.Argv, "--arch") || !slices.Contains(c.Argv, other) {
			t.Errorf("import for %s compute nodes without --arch: %q", other, c.Argv)
		}
	}
	// An alias of a local squash is validated in place.
	out, _, code = runImages(t, "import", "-p", prof, "prebuilt")
	if code != 0 || out != "local\t"+local+"\t"+local+"\n" {
		t.Errorf("import prebuilt: %q (exit %d)", out, code)
	}
}
