package launch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestImportLocksFromRecord: a job that imports its image on every node
// (import: all-nodes) waits for another import as long as the record's
// squash lock-timeout-s says, on the lock its lock-file names: the plan
// records both and each import-node step passes them. Without
// lock-timeout-s the record's default (1800 s) applies; beside-squash adds
// no --lock-file (import-node's own default is that file).
func TestImportLocksFromRecord(t *testing.T) {
	const image = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.9.0"
	src, err := os.ReadFile(filepath.Join("..", "..", "planner", "testdata", "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := filepath.Join(t.TempDir(), "r.yaml")
	if err := os.WriteFile(recipe, []byte(strings.Replace(string(src), "path: mock\n", "path: /srv/models/mock\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, squash string
		wantTimeout  string
		wantSeconds  int
		wantLock     string // under the squash's directory; "" : none
	}{
		{name: "locks-dir and a timeout", squash: "{dir: /raid/sq, import: all-nodes, lock-timeout-s: 600, lock-file: locks-dir}",
			wantTimeout: "10m0s", wantSeconds: 600, wantLock: ".locks/nvcr.io_nvidia_ai-dynamo_sglang-runtime_0.9.0.lock"},
		{name: "beside-squash", squash: "{dir: /raid/sq, import: all-nodes, lock-timeout-s: 3600, lock-file: beside-squash}",
			wantTimeout: "1h0m0s", wantSeconds: 3600},
		{name: "the record's default timeout", squash: "{dir: /raid/sq, visibility: node-local, import: compute}",
			wantTimeout: "30m0s", wantSeconds: 1800},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runners := filepath.Join(t.TempDir(), "runners.yaml")
			if err := os.WriteFile(runners, []byte(`labels:
  cluster:c1: [c1_00]
clusters:
  c1:
    gpus-per-node: 4
    arch: x86_64
    scheduler: slurm
    slurm:
      partition: batch
      exclusive: false
      squash: `+tc.squash+`
      srt-slurm:
        network-interface: ""
        shared-run-root: /shared/runs
`), 0o644); err != nil {
				t.Fatal(err)
			}
			pl, _, err := Plan(context.Background(), PlanOptions{Runners: runners, Runner: "c1_00", Recipe: recipe, Image: image, Point: -1})
			if err != nil {
				t.Fatal(err)
			}
			wantLock := ""
			if tc.wantLock != "" {
				wantLock = filepath.Join(filepath.Dir(pl.Image.Squash), tc.wantLock)
			}
			if !pl.Image.PerNode || pl.Image.LockTimeoutSeconds != tc.wantSeconds || pl.Image.LockFile != wantLock {
				t.Errorf("image %+v; want per node, lock %d s on %q", pl.Image, tc.wantSeconds, wantLock)
			}
			steps := 0
			for _, p := range pl.Processes {
				if p.Role != plan.RoleImage {
					continue
				}
				steps++
				want := []string{pl.Binary, "import-node", "--enroot", "enroot", "--lock-timeout", tc.wantTimeout}
				if wantLock != "" {
					want = append(want, "--lock-file", wantLock)
				}
				want = append(want, pl.Image.Squash, pl.Image.Ref)
				if !slices.Equal(p.Argv, want) {
					t.Errorf("%s argv\n got %q\nwant %q", p.Name, p.Argv, want)
				}
			}
			if steps != pl.Slurm.Nodes {
				t.Errorf("%d image steps for %d nodes", steps, pl.Slurm.Nodes)
			}
		})
	}
}

// TestImportNodeArgv: the lock flags replace or join import-node's, the
// two arguments stay last, and any other argv is left alone.
func TestImportNodeArgv(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		lock string
		want []string
	}{
		{"timeout replaced", []string{"sb", "import-node", "--lock-timeout", "30m0s", "/s.sqsh", "img"}, "",
			[]string{"sb", "import-node", "--lock-timeout", "10m0s", "/s.sqsh", "img"}},
		{"flags added", []string{"sb", "import-node", "/s.sqsh", "img"}, "/l/x.lock",
			[]string{"sb", "import-node", "--lock-timeout", "10m0s", "--lock-file", "/l/x.lock", "/s.sqsh", "img"}},
		{"another command", []string{"sb", "stage-model", "/a", "/b"}, "/l/x.lock", []string{"sb", "stage-model", "/a", "/b"}},
	} {
		if got := importNodeArgv(tc.in, 10*time.Minute, tc.lock); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestImportLockOptions: an import on the login or a compute node
// (ImportImage) waits by the plan's image lock: its timeout, its lock
// file; a plan without one keeps the importer's defaults.
func TestImportLockOptions(t *testing.T) {
	dir := t.TempDir()
	ref, err := enroot.ParseRef("nvcr.io/nvidia/x:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		img         plan.Image
		wantTimeout time.Duration
		wantLock    string
	}{
		{plan.Image{}, 0, filepath.Join(dir, ref.SquashName()) + ".lock"},
		{plan.Image{LockTimeoutSeconds: 600, LockFile: filepath.Join(dir, ".locks", "k.lock")}, 10 * time.Minute, filepath.Join(dir, ".locks", "k.lock")},
	} {
		opts := enroot.Options{SquashDir: dir}
		importLockOptions(&opts, tc.img)
		im, err := enroot.NewImporter(opts)
		if err != nil {
			t.Fatal(err)
		}
		if opts.LockTimeout != tc.wantTimeout || im.LockPath(ref) != tc.wantLock {
			t.Errorf("%+v: timeout %s, lock %s; want %s, %s", tc.img, opts.LockTimeout, im.LockPath(ref), tc.wantTimeout, tc.wantLock)
		}
	}
}
