package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/slurmbench/slurmbench/enroot"
)

const digest = "sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"

// umociConfig is the shape of what `umoci unpack --rootless` writes
// (umoci 0.4.7 on the test cluster): user namespace, host network, a
// hostname, RLIMIT_NOFILE 1024, a /sys bind and the importer's id mapping.
const umociConfig = `{
	"ociVersion": "1.0.0",
	"process": {"terminal": true, "user": {"uid": 0, "gid": 0}, "args": ["/bin/sh"],
		"env": ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root"], "cwd": "/",
		"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]},
	"root": {"path": "rootfs"},
	"hostname": "umoci-default",
	"mounts": [
		{"destination": "/proc", "type": "proc", "source": "proc"},
		{"destination": "/sys", "type": "bind", "source": "/sys", "options": ["rbind", "ro"]},
		{"destination": "/models", "type": "bind", "source": "/image/models", "options": ["rbind"]}
	],
	"linux": {
		"uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
		"gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
		"namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "user"}, {"type": "network"}]
	}
}`

// fakeTools stands in for skopeo and umoci where the importer runs them:
// skopeo inspect prints a digest, skopeo copy writes a blob into the
// layout, umoci unpack writes a bundle; fail makes a tool fail with output.
type fakeTools struct {
	mu    sync.Mutex
	calls [][]string
	fail  map[string]string // "skopeo copy" / "umoci unpack" / "skopeo inspect" -> output
}

func (f *fakeTools) Run(_ context.Context, cmd enroot.Command) error {
	f.mu.Lock()
	f.calls = append(f.calls, append([]string{cmd.Path}, cmd.Args...))
	f.mu.Unlock()
	what := cmd.Path + " " + cmd.Args[0]
	if out, ok := f.fail[what]; ok {
		fmt.Fprintln(cmd.Stderr, out)
		return errors.New("exit status 1")
	}
	last := cmd.Args[len(cmd.Args)-1]
	switch what {
	case "skopeo inspect":
		_, err := fmt.Fprintln(cmd.Stdout, digest)
		return err
	case "skopeo copy":
		dir := strings.TrimSuffix(strings.TrimPrefix(last, "oci:"), ":image")
		if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "blobs", "layer"), make([]byte, 4096), 0o644)
	case "umoci unpack":
		if err := os.MkdirAll(filepath.Join(last, "rootfs", "bin"), 0o700); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(last, "config.json"), []byte(umociConfig), 0o644)
	}
	return fmt.Errorf("unexpected command %q", what)
}

func (f *fakeTools) count(what string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c[0]+" "+c[1] == what {
			n++
		}
	}
	return n
}

func newImporter(t *testing.T, tools *fakeTools, opts Options) *Importer {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	opts.Runner = tools
	im, err := NewImporter(opts)
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func mustRef(t *testing.T, s string) enroot.Ref {
	t.Helper()
	r, err := enroot.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestImportByTheTagsDigestThenCached(t *testing.T) {
	tools := &fakeTools{}
	im := newImporter(t, tools, Options{Insecure: []string{"10.0.0.1:5000"}, Version: "v1"})
	ref := mustRef(t, "10.0.0.1:5000/team/engine:v2")
	res, err := im.Import(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != enroot.ActionImported || res.Path != filepath.Join(im.opts.Dir, "10.0.0.1_5000_team_engine_v2.oci") || res.Size != 4096 {
		t.Errorf("result %+v", res)
	}
	wantCopy := []string{"skopeo", "copy", "--src-tls-verify=false", "--retry-times", "2",
		"docker://10.0.0.1:5000/team/engine@" + digest}
	if got := tools.calls[1]; !slices.Equal(got[:len(wantCopy)], wantCopy) || !strings.HasSuffix(got[len(got)-1], "/layout:image") {
		t.Errorf("copy argv %q, want %q oci:…/layout:image", got, wantCopy)
	}
	if got := tools.calls[0]; !slices.Equal(got, []string{"skopeo", "inspect", "--tls-verify=false", "--format", "{{.Digest}}", "docker://10.0.0.1:5000/team/engine:v2"}) {
		t.Errorf("inspect argv %q", got)
	}
	if got := tools.calls[2]; got[1] != "unpack" || got[2] != "--rootless" {
		t.Errorf("unpack argv %q", got)
	}
	st := Inspect(res.Path)
	if st.State != enroot.StateOK || st.Manifest.Digest != digest || st.Manifest.Origin != enroot.OriginImported || st.Manifest.Version != "v1" {
		t.Errorf("after import: %+v %+v", st, st.Manifest)
	}
	if info, err := os.Stat(res.Path); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("bundle mode: %v %v, want 0755 (every user of the cache starts it)", info.Mode(), err)
	}
	if work, _ := AbandonedImports(im.opts.Dir); len(work) != 0 {
		t.Errorf("left import directories: %v", work)
	}
	res, err = im.Import(context.Background(), ref)
	if err != nil || res.Action != enroot.ActionCached || len(tools.calls) != 3 {
		t.Errorf("second import: %+v %v after %d tool runs, want cached without running anything", res, err, len(tools.calls))
	}
}

func TestImportPinnedDigestSkipsInspect(t *testing.T) {
	tools := &fakeTools{}
	im := newImporter(t, tools, Options{Arch: "arm64"})
	res, err := im.Import(context.Background(), mustRef(t, "nvcr.io/nvidia/x:1@"+digest))
	if err != nil {
		t.Fatal(err)
	}
	if tools.count("skopeo inspect") != 0 {
		t.Error("a pinned digest was looked up again")
	}
	copyArgv := tools.calls[0]
	if slices.Contains(copyArgv, "--src-tls-verify=false") || !slices.Contains(copyArgv, "--override-arch") || !slices.Contains(copyArgv, "docker://nvcr.io/nvidia/x@"+digest) {
		t.Errorf("copy argv %q: want TLS checked, --override-arch arm64, the digest", copyArgv)
	}
	if m := Inspect(res.Path).Manifest; m == nil || m.Digest != digest || m.Arch != "arm64" {
		t.Errorf("sidecar %+v", m)
	}
}

func TestImportReplacesABrokenBundle(t *testing.T) {
	for name, breakIt := range map[string]func(b string) error{
		"config.json truncated": func(b string) error { return os.Truncate(filepath.Join(b, "config.json"), 5) },
		"config.json removed":   func(b string) error { return os.Remove(filepath.Join(b, "config.json")) },
		"rootfs removed":        func(b string) error { return os.RemoveAll(filepath.Join(b, "rootfs")) },
	} {
		t.Run(name, func(t *testing.T) {
			tools := &fakeTools{}
			im := newImporter(t, tools, Options{})
			ref := mustRef(t, "r.io/a/b@"+digest)
			res, err := im.Import(context.Background(), ref)
			if err != nil {
				t.Fatal(err)
			}
			if err := breakIt(res.Path); err != nil {
				t.Fatal(err)
			}
			if st := Inspect(res.Path); st.State != enroot.StateInvalid {
				t.Fatalf("broken bundle: %s, want invalid", st.State)
			}
			res, err = im.Import(context.Background(), ref)
			if err != nil || res.Action != enroot.ActionImported || tools.count("umoci unpack") != 2 {
				t.Fatalf("re-import: %+v %v", res, err)
			}
			if st := Inspect(res.Path); st.State != enroot.StateOK {
				t.Errorf("re-imported: %+v", st)
			}
		})
	}
}

func TestImportFailureLeavesNothing(t *testing.T) {
	cases := []struct {
		name, tool, output string
		copies             int
	}{
		{"connection dropped mid-layer: copied again", "skopeo copy", "reading blob sha256:x: unexpected EOF", 2},
		{"registry lacks the manifest: not again", "skopeo copy", "manifest unknown: manifest unknown", 1},
		{"unpack fails", "umoci unpack", "open config.json: permission denied", 1},
		{"image directory full: named, not again", "skopeo copy", "writing blob: write /d/layout/oci-put-blob1: no space left on device", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tools := &fakeTools{fail: map[string]string{tc.tool: tc.output}}
			im := newImporter(t, tools, Options{})
			ref := mustRef(t, "r.io/a/b@"+digest)
			_, err := im.Import(context.Background(), ref)
			if err == nil || !strings.Contains(err.Error(), ref.String()) || !strings.Contains(err.Error(), tc.output) {
				t.Errorf("error %v: want it to name %s and quote the tool", err, ref)
			}
			if full := strings.Contains(tc.output, "no space"); full != (err != nil && strings.Contains(err.Error(), "no space left in "+im.opts.Dir)) {
				t.Errorf("error %v: naming the full directory %s: want %v", err, im.opts.Dir, full)
			}
			if n := tools.count("skopeo copy"); n != tc.copies {
				t.Errorf("%d copies, want %d", n, tc.copies)
			}
			left, _ := os.ReadDir(im.opts.Dir)
			for _, e := range left {
				if !strings.HasSuffix(e.Name(), ".lock") {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

func TestImportRefusesASquashFile(t *testing.T) {
	im := newImporter(t, &fakeTools{}, Options{})
	if _, err := im.Import(context.Background(), mustRef(t, "/s/x.sqsh")); err == nil || !strings.Contains(err.Error(), "OCI bundles") {
		t.Errorf("err %v, want a refusal naming OCI bundles", err)
	}
}

func TestInspectStates(t *testing.T) {
	dir := t.TempDir()
	tools := &fakeTools{}
	im := newImporter(t, tools, Options{Dir: dir})
	res, err := im.Import(context.Background(), mustRef(t, "r.io/a/b@"+digest))
	if err != nil {
		t.Fatal(err)
	}
	if st := Inspect(res.Path); st.State != enroot.StateOK {
		t.Errorf("imported: %s", st.State)
	}
	if st := Inspect(filepath.Join(dir, "nothing.oci")); st.State != enroot.StateMissing {
		t.Errorf("missing: %s", st.State)
	}
	if err := os.Remove(res.Path + enroot.ManifestSuffix); err != nil {
		t.Fatal(err)
	}
	if st := Inspect(res.Path); st.State != enroot.StateUnrecorded {
		t.Errorf("no sidecar: %s", st.State)
	}
	// Adopted: usable, and recorded from then on.
	if r, err := im.Import(context.Background(), mustRef(t, "r.io/a/b@"+digest)); err != nil || r.Action != enroot.ActionValidated {
		t.Errorf("import of an unrecorded bundle: %+v %v, want it adopted", r, err)
	}
	if st := Inspect(res.Path); st.State != enroot.StateOK || st.Manifest.Origin != enroot.OriginAdopted {
		t.Errorf("adopted: %+v", st)
	}
	f := filepath.Join(dir, "file.oci")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if st := Inspect(f); st.State != enroot.StateInvalid {
		t.Errorf("a file: %s", st.State)
	}
}

func TestStepConfig(t *testing.T) {
	image := filepath.Join(t.TempDir(), "x.oci")
	if err := os.MkdirAll(filepath.Join(image, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(image, "config.json"), []byte(umociConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	mounts := []enroot.Mount{{Source: "/runs/42", Target: "/runs/42"}, {Source: "/shared/models/m", Target: "/models", ReadOnly: true}}
	b, err := StepConfig(image, StepSpec{Mounts: mounts, Workdir: "/runs/42", UID: 1234, GID: 99})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Root struct {
			Path     string
			Readonly bool
		}
		Hostname *string
		Process  struct {
			Terminal bool
			Cwd      string
			Env      []string
			Rlimits  []any
		}
		Mounts []struct {
			Destination, Type, Source string
			Options                   []string
		}
		Linux struct {
			UIDMappings []struct{ ContainerID, HostID, Size int } `json:"uidMappings"`
			GIDMappings []struct{ ContainerID, HostID, Size int } `json:"gidMappings"`
			Namespaces  []struct{ Type string }
		}
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if c.Root.Path != filepath.Join(image, "rootfs") || !c.Root.Readonly {
		t.Errorf("root %+v, want %s/rootfs read-only", c.Root, image)
	}
	if c.Hostname != nil || c.Process.Terminal || c.Process.Rlimits != nil || c.Process.Cwd != "/runs/42" {
		t.Errorf("hostname %v, process %+v: want no hostname, no terminal, no rlimits, cwd /runs/42", c.Hostname, c.Process)
	}
	if !slices.Contains(c.Process.Env, "PATH=/usr/local/bin:/usr/bin:/bin") {
		t.Errorf("the image's environment is lost: %q", c.Process.Env)
	}
	var ns []string
	for _, n := range c.Linux.Namespaces {
		ns = append(ns, n.Type)
	}
	if !slices.Equal(ns, []string{"pid", "ipc", "mount", "user"}) {
		t.Errorf("namespaces %q, want pid ipc mount user (host network and host name)", ns)
	}
	if len(c.Linux.UIDMappings) != 1 || c.Linux.UIDMappings[0].HostID != 1234 || c.Linux.GIDMappings[0].HostID != 99 || c.Linux.UIDMappings[0].Size != 1 {
		t.Errorf("id mappings %+v %+v, want the job user's 1234:99 as root", c.Linux.UIDMappings, c.Linux.GIDMappings)
	}
	var got []string
	for _, m := range c.Mounts {
		got = append(got, m.Destination+" "+m.Type+" "+m.Source+" "+strings.Join(m.Options, ","))
	}
	want := []string{
		"/proc proc proc ",
		"/sys bind /sys rbind,ro",
		"/tmp tmpfs tmpfs nosuid,nodev,mode=1777",
		"/runs/42 bind /runs/42 rbind",
		"/models bind /shared/models/m rbind,ro",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mounts\n  %q\nwant\n  %q", got, want)
	}

	for name, spec := range map[string]StepSpec{
		"relative workdir":      {Workdir: "runs"},
		"relative mount source": {Mounts: []enroot.Mount{{Source: "runs", Target: "/runs"}}},
	} {
		if _, err := StepConfig(image, spec); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := StepConfig(filepath.Join(t.TempDir(), "none.oci"), StepSpec{}); err == nil {
		t.Error("a missing bundle: no error")
	}
}

func TestSrunFlags(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"/runs/42/steps/prefill_w0.oci", []string{"--container=/runs/42/steps/prefill_w0.oci"}},
		{"runs/x.oci", nil},
		{"/runs/a b.oci", nil},
	} {
		got, err := SrunFlags(tc.in)
		if !slices.Equal(got, tc.want) || (err == nil) != (tc.want != nil) {
			t.Errorf("SrunFlags(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestBundleName(t *testing.T) {
	for in, want := range map[string]string{
		"10.77.0.1:5000/slurmbench/mock-engine:demo": "10.77.0.1_5000_slurmbench_mock-engine_demo.oci",
		"nvcr.io#nvidia/sglang:0.5@" + digest:        "nvcr.io_nvidia_sglang_0.5_" + strings.ReplaceAll(digest, ":", "_") + ".oci",
	} {
		if got := BundleName(mustRef(t, in)); got != want {
			t.Errorf("BundleName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArchName(t *testing.T) {
	for in, want := range map[string]string{"aarch64": "arm64", "x86_64": "amd64", "": "", "arm64": "arm64", "ppc64le": "ppc64le"} {
		if got := ArchName(in); got != want {
			t.Errorf("ArchName(%q) = %q, want %q", in, got, want)
		}
	}
}
