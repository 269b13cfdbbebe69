package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// TestSubmissionAndSetupLog: srt-submission.json names the submitted job
// (srtctl's fields, then the run directory and submit time) and replaces
// an earlier launch's; srt-setup.log keeps what the launch printed until
// the job was submitted, and is left by a launch that never submits; a
// launch that fails before submitting leaves no submission record.
func TestSubmissionAndSetupLog(t *testing.T) {
	runDir := "/runs/r-1"
	pl := &plan.Plan{Name: "inferencex-gb300-nv_07", RunID: "r-1", RunDir: runDir, Layout: rundir.New(runDir)}
	for _, tc := range []struct {
		name       string
		submit     bool
		err        error
		wantSub    bool
		wantLog    []string
		notInLog   []string
		wantCode   exitcode.Code
		hugeImport bool
	}{
		{name: "submitted", submit: true, wantSub: true,
			wantLog: []string{"importing nvcr.io/x:1", "staged /squash/x.sqsh"}, notInLog: []string{"job progress"}},
		{name: "the image import fails", err: exitcode.Errorf(exitcode.Image, "enroot import failed"), wantCode: exitcode.Image,
			wantLog: []string{"importing nvcr.io/x:1", "staged /squash/x.sqsh", "job progress"}},
		{name: "an endless import keeps its head", submit: true, wantSub: true, hugeImport: true,
			wantLog: []string{"importing nvcr.io/x:1", "more bytes of setup output not kept"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			stale := `{"status":"submitted","slurm_job_id":1,"output_dir":"/old"}`
			if err := os.WriteFile(filepath.Join(ws, SubmissionFile), []byte(stale), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(_ context.Context, o launch.RunOptions) error {
				o.Hooks.Planned(pl, nil)
				fmt.Fprintln(o.Stderr, "importing nvcr.io/x:1")
				if tc.hugeImport {
					line := strings.Repeat("x", 1023) + "\n"
					for range maxSetupLog/len(line) + 10 {
						fmt.Fprint(o.Stderr, line)
					}
				}
				fmt.Fprintln(o.Stderr, "staged /squash/x.sqsh")
				if tc.submit {
					o.Hooks.Submitted(4242)
				}
				fmt.Fprintln(o.Stderr, "job progress")
				o.Hooks.Done(pl, nil, tc.err)
				return tc.err
			}
			var stderr bytes.Buffer
			err := Run(t.Context(), RunOptions{IO: launch.IO{Stdout: &bytes.Buffer{}, Stderr: &stderr, Version: "v9"},
				Env: with(multinodeEnv(), "GITHUB_WORKSPACE", ws), Resolver: resolved("gb300-nv", ""), Launch: run,
				Now: clock(time.Second)})
			if exitcode.Of(err) != tc.wantCode && !(err == nil && tc.wantCode == 0) {
				t.Fatalf("Run: %v", err)
			}
			if !strings.Contains(stderr.String(), "job progress") {
				t.Error("stderr lost the launch's own output")
			}
			data, err := os.ReadFile(filepath.Join(ws, SubmissionFile))
			switch {
			case !tc.wantSub && err == nil:
				t.Errorf("%s left: %s", SubmissionFile, data)
			case tc.wantSub && err != nil:
				t.Fatalf("no %s: %v", SubmissionFile, err)
			case tc.wantSub:
				var got map[string]any
				if err := json.Unmarshal(data, &got); err != nil {
					t.Fatal(err)
				}
				want := map[string]any{"status": "submitted", "slurm_job_id": 4242.0, "output_dir": runDir, "run_dir": runDir,
					"run_id": "r-1", "job_name": "inferencex-gb300-nv_07", "logs": runDir + "/logs", "results": runDir + "/results",
					"cluster": "gb300-nv", "producer": "slurmbench v9"}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s %s = %v, want %v", SubmissionFile, k, got[k], v)
					}
				}
				if _, err := time.Parse(time.RFC3339, fmt.Sprint(got["submitted_at"])); err != nil {
					t.Errorf("submitted_at %v: %v", got["submitted_at"], err)
				}
			}
			log, err := os.ReadFile(filepath.Join(ws, SetupLogFile))
			if err != nil {
				t.Fatalf("no %s: %v", SetupLogFile, err)
			}
			for _, s := range tc.wantLog {
				if !strings.Contains(string(log), s) {
					t.Errorf("%s lacks %q", SetupLogFile, s)
				}
			}
			for _, s := range tc.notInLog {
				if strings.Contains(string(log), s) {
					t.Errorf("%s holds %q, printed after the submission", SetupLogFile, s)
				}
			}
			if len(log) > maxSetupLog+200 {
				t.Errorf("%s is %d bytes, over its bound", SetupLogFile, len(log))
			}
			ev := readEvent(t, ws)
			arts := fmt.Sprint(ev["artifacts"])
			if !strings.Contains(arts, SetupLogFile) || tc.wantSub != strings.Contains(arts, SubmissionFile) {
				t.Errorf("job_event artifacts %v", arts)
			}
		})
	}
}

// TestCreateMountHosts: the host sides of the volumes a job mounts are
// created before it is submitted, the AgentX caches only for a multi-node
// AgentX job and open to every user, a lane's mounts where its rule
// selects the request (open to every user as the lane says); a node-local
// volume is left alone.
func TestCreateMountHosts(t *testing.T) {
	agentic := srtlanes.Request{Agentic: true, MultiNode: true}
	glm := func(fw string) srtlanes.Request {
		return srtlanes.Request{ModelPrefix: "glm5.2", Precision: "fp4", Framework: fw, Agentic: true, MultiNode: true}
	}
	for _, tc := range []struct {
		name    string
		cluster string
		r       srtlanes.Request
		want    map[string]os.FileMode // volume → mode; absent: not created
	}{
		{"fixed-sequence job", "c", srtlanes.Request{MultiNode: true}, map[string]os.FileMode{"hf": 0o755}},
		{"multi-node AgentX job", "c", agentic, map[string]os.FileMode{"hf": 0o755, "aiperf": 0o777}},
		{"single-node AgentX job", "c", srtlanes.Request{Agentic: true}, map[string]os.FileMode{"hf": 0o755}},
		{"gb200-nv glm5.2 fp4 sglang AgentX: the lane's wheels cache", "gb200-nv", glm("dynamo-sglang"),
			map[string]os.FileMode{"hf": 0o755, "aiperf": 0o777, "dynamo-wheels": 0o777}},
		{"gb200-nv glm5.2 fp4 trt AgentX: no wheels cache", "gb200-nv", glm("dynamo-trt"),
			map[string]os.FileMode{"hf": 0o755, "aiperf": 0o777}},
		{"a cluster without a lane: no wheels cache", "c", glm("dynamo-sglang"),
			map[string]os.FileMode{"hf": 0o755, "aiperf": 0o777}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			vol := func(name string) string { return filepath.Join(root, name, "cache") }
			c := &runners.Cluster{ID: tc.cluster, Slurm: runners.Slurm{
				Volumes: map[string]runners.Volume{"hf": {Path: vol("hf")}, "aiperf": {Path: vol("aiperf")},
					"dynamo-wheels": {Path: vol("dynamo-wheels")},
					"local":         {Path: vol("local"), Visibility: runners.NodeLocal}},
				SrtSlurm: &runners.SrtSlurm{VolumeMounts: map[string]string{"hf": "/hf_hub_cache", "local": "/scratch"},
					AgenticVolumeMounts: map[string]string{"aiperf": "/aiperf_mmap_cache"}}}}
			old := syscallUmask(0o022)
			defer syscallUmask(old)
			if err := createMountHosts(c, tc.r); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"hf", "aiperf", "dynamo-wheels", "local"} {
				st, err := os.Stat(vol(name))
				want, ok := tc.want[name]
				switch {
				case !ok && err == nil:
					t.Errorf("%s created", name)
				case ok && err != nil:
					t.Errorf("%s: %v", name, err)
				case ok && st.Mode().Perm() != want:
					t.Errorf("%s: mode %v, want %v", name, st.Mode().Perm(), want)
				}
			}
		})
	}
}

func syscallUmask(m int) int { return syscall.Umask(m) }
