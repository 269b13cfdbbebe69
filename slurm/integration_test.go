package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/syncbuf"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// Integration tests against a real slurmrestd. They use SLURM_REST_URL,
// SLURM_JWT, SLURM_USER, SLURM_PARTITION and SLURMBENCH_SHARED_DIR (see
// testcluster/up.sh) and skip when those are unset, unless
// SLURMBENCH_REQUIRE_CLUSTER=1.

type cluster struct {
	env    slurmtest.ClusterEnv
	shared string // a fresh directory for this test, writable by the job user
	tag    string // makes job names unique per run
}

func realCluster(t *testing.T) cluster {
	t.Helper()
	env := slurmtest.Cluster(t)
	shared := slurmtest.SharedDir(t)
	dir, err := os.MkdirTemp(shared, "slurm-test-*")
	if err != nil {
		t.Fatal(err)
	}
	// Jobs run as the cluster's job user, not as whoever runs the tests.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return cluster{env: env, shared: dir, tag: fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)}
}

func (cl cluster) config() Config {
	return Config{URL: cl.env.RestURL, Token: cl.env.Token, User: cl.env.User, Defaults: JobDefaults{Partition: cl.env.Partition, TimeLimit: 5 * time.Minute}}
}

func (cl cluster) client(t *testing.T) *Client {
	return newClient(t, cl.config())
}

func (cl cluster) spec(name, script string) JobSpec {
	return JobSpec{
		Name: name + "-" + cl.tag, Script: script, Nodes: "1",
		Environment: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		WorkDir:     cl.shared, StdOut: filepath.Join(cl.shared, name+"-%j.out"), StdErr: filepath.Join(cl.shared, name+"-%j.err"),
	}
}

// cancelAtEnd makes sure no test leaves a job running on the cluster.
func cancelAtEnd(t *testing.T, c *Client, id JobID) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if j, err := c.GetJob(ctx, id); err == nil && !j.Terminal() {
			_ = c.CancelJob(ctx, id)
		}
	})
}

func clusterCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestClusterPing(t *testing.T) {
	cl := realCluster(t)
	c := cl.client(t)
	res, err := c.Ping(clusterCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !anyUp(res.Controllers) || !slices.Contains(SupportedVersions, res.Server.APIVersion) || res.Server.SlurmRelease == "" {
		t.Fatalf("ping = %+v", res)
	}
	t.Logf("slurmrestd %s: Slurm %s, API %s, controllers %+v", cl.env.RestURL, res.Server.SlurmRelease, res.Server.APIVersion, res.Controllers)
	nodes, err := c.ListNodes(clusterCtx(t))
	if err != nil || len(nodes) < 3 {
		t.Fatalf("nodes = %d, %v", len(nodes), err)
	}
	parts, err := c.ListPartitions(clusterCtx(t))
	if err != nil || !slices.ContainsFunc(parts, func(p Partition) bool { return p.Name == cl.env.Partition }) {
		t.Fatalf("partitions = %+v, %v", parts, err)
	}
}

func TestClusterThreeNodeGPUJob(t *testing.T) {
	cl := realCluster(t)
	c := cl.client(t)
	spec := cl.spec("gpu3", `#!/bin/bash
set -eu
mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
for n in "${NODES[@]}"; do
  srun --overlap -N1 -n1 -w "$n" bash -c 'echo "step=$SLURM_STEP_ID host=$(hostname) gpus=${CUDA_VISIBLE_DEVICES:-none}"' &
done
wait
`)
	spec.Nodes = "3"
	spec.GPUsPerNode = 4
	spec.TasksPerNode = 1
	start := time.Now()
	res, err := c.Submit(clusterCtx(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	cancelAtEnd(t, c, res.JobID)
	var states []string
	j, err := c.Wait(clusterCtx(t), res.JobID, WaitOptions{OnChange: func(j Job) { states = append(states, j.State.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job %d: submit -> %s in %s; states %v", j.ID, j.Outcome(), time.Since(start).Round(time.Millisecond), states)
	if !j.Success() || j.NodeCount != 3 || j.TRESPerNode != "gres/gpu:4" {
		t.Fatalf("job = %s, nodes %d (%s), tres %q", j.Outcome(), j.NodeCount, j.Nodes, j.TRESPerNode)
	}
	out, err := os.ReadFile(filepath.Join(cl.shared, fmt.Sprintf("gpu3-%d.out", j.ID)))
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.Contains(line, "gpus=0,1,2,3") {
			t.Errorf("step without its 4 GPUs: %q", line)
		}
		for _, f := range strings.Fields(line) {
			if h, ok := strings.CutPrefix(f, "host="); ok {
				hosts[h] = true
			}
		}
	}
	if len(hosts) != 3 {
		t.Errorf("steps ran on %d distinct nodes, want 3:\n%s", len(hosts), out)
	}
}

func TestClusterExitCodeThree(t *testing.T) {
	cl := realCluster(t)
	c := cl.client(t)
	res, err := c.Submit(clusterCtx(t), cl.spec("exit3", "#!/bin/bash\necho failing on purpose\nexit 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	cancelAtEnd(t, c, res.JobID)
	j, err := c.Wait(clusterCtx(t), res.JobID, WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.State.Base != StateFailed || j.Exit.Code != 3 || j.Exit.Signal != 0 || j.Success() {
		t.Fatalf("job = %s", j.Outcome())
	}
}

func TestClusterCancelRunningJob(t *testing.T) {
	cl := realCluster(t)
	c := cl.client(t)
	res, err := c.Submit(clusterCtx(t), cl.spec("cancel", "#!/bin/bash\nsleep 300\n"))
	if err != nil {
		t.Fatal(err)
	}
	cancelAtEnd(t, c, res.JobID)
	// Wait for RUNNING: a context that ends when the job starts.
	ctx, started := context.WithCancel(clusterCtx(t))
	_, err = c.Wait(ctx, res.JobID, WaitOptions{OnChange: func(j Job) {
		if j.State.Base == StateRunning {
			started()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("job never ran: %v", err)
	}
	if err := c.CancelJob(clusterCtx(t), res.JobID); err != nil {
		t.Fatal(err)
	}
	j, err := c.Wait(clusterCtx(t), res.JobID, WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.State.Base != StateCancelled || j.Success() {
		t.Fatalf("job = %s", j.Outcome())
	}
	// Cancelling again is not an error.
	if err := c.CancelJob(clusterCtx(t), res.JobID); err != nil {
		t.Errorf("second cancel: %v", err)
	}
}

func TestClusterRejections(t *testing.T) {
	cl := realCluster(t)
	c := cl.client(t)
	bad := cl.spec("badpart", "#!/bin/bash\ntrue\n")
	bad.Partition = "no-such-partition"
	_, err := c.Submit(clusterCtx(t), bad)
	want := fmt.Sprintf("submitting job %q: slurmrestd 500: Invalid partition name specified (Batch job submission failed)", bad.Name)
	if err == nil || err.Error() != want || !IsRejected(err) {
		t.Errorf("bad partition: err = %v\nwant %s", err, want)
	}

	many := cl.spec("toomany", "#!/bin/bash\ntrue\n")
	many.Nodes = "99"
	_, err = c.Submit(clusterCtx(t), many)
	want = fmt.Sprintf("submitting job %q: slurmrestd 500: Requested node configuration is not available (Batch job submission failed)", many.Name)
	if err == nil || err.Error() != want || !IsRejected(err) {
		t.Errorf("too many nodes: err = %v\nwant %s", err, want)
	}
}

// tokenCommand returns argv printing a token with the given lifespan:
// SLURMBENCH_TOKEN_CMD (words, lifespan appended), else testcluster/token.sh.
func tokenCommand(t *testing.T, lifespan int) []string {
	t.Helper()
	if cmd := strings.Fields(os.Getenv("SLURMBENCH_TOKEN_CMD")); len(cmd) > 0 {
		return append(cmd, fmt.Sprint(lifespan))
	}
	script := filepath.Join(repoRoot(t), "testcluster", "token.sh")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("no way to mint tokens: set SLURMBENCH_TOKEN_CMD or provide %s", script)
	}
	return []string{script, fmt.Sprint(lifespan)}
}

func TestClusterExpiredToken(t *testing.T) {
	cl := realCluster(t)
	argv := tokenCommand(t, 1)
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatalf("minting a short-lived token with %v: %v", argv, err)
	}
	short, err := parseTokenOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)

	cfg := cl.config()
	cfg.Token = short
	c := newClient(t, cfg)
	_, err = c.ListNodes(clusterCtx(t))
	if !IsAuth(err) || !strings.HasPrefix(err.Error(), "listing nodes: slurmrestd 511: Protocol authentication error") {
		t.Fatalf("expired token: err = %v", err)
	}
	if strings.Contains(err.Error(), short) {
		t.Fatal("the token appears in the error")
	}
	_, err = c.Submit(clusterCtx(t), cl.spec("expired", "#!/bin/bash\ntrue\n"))
	if !IsAuth(err) || !strings.Contains(err.Error(), "slurmrestd 511: Protocol authentication error (Batch job submission failed)") {
		t.Fatalf("expired token submit: err = %v", err)
	}

	// With a token command the client mints a fresh token and carries on.
	cfg.TokenCommand = tokenCommand(t, 600)
	var logs syncbuf.Buffer
	cfg.Logger = debugLogger(&logs)
	c = newClient(t, cfg)
	if _, err := c.ListNodes(clusterCtx(t)); err != nil {
		t.Fatalf("with a token command: %v", err)
	}
	if !strings.Contains(logs.String(), "minted a fresh slurmrestd token") || strings.Contains(logs.String(), short) {
		t.Errorf("logs:\n%s", logs.String())
	}
}

// TestClusterFaultySubmitMakesOneJob sends submits through a proxy that
// loses, stalls and fails them, and counts the jobs by name on the cluster.
func TestClusterFaultySubmitMakesOneJob(t *testing.T) {
	cl := realCluster(t)
	tests := []struct {
		name   string
		faults []slurmtest.Fault
	}{
		{"lost-answer", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward}}},
		{"stalled-answer", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.StallResponse, Delay: 3 * time.Second}}},
		{"dropped-then-500", []slurmtest.Fault{
			{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.Drop},
			{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.Respond, Status: 500},
		}},
		{"lost-answer-flaky-lookup", []slurmtest.Fault{
			{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward},
			{Method: "GET", Path: "/jobs", Times: 2, Action: slurmtest.Reset},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy := slurmtest.NewFaultProxy(t, cl.env.RestURL)
			cfg := cl.config()
			cfg.URL = proxy.URL
			cfg.RequestTimeout = 2 * time.Second
			cfg.SubmitLookupWindow = 3 * time.Second
			c := newClient(t, cfg)
			if _, err := c.Negotiate(clusterCtx(t)); err != nil {
				t.Fatal(err)
			}
			proxy.Add(tt.faults...)
			spec := cl.spec("fault-"+tt.name, "#!/bin/bash\nsleep 1\n")
			res, err := c.Submit(clusterCtx(t), spec)
			if err != nil {
				t.Fatal(err)
			}
			cancelAtEnd(t, c, res.JobID)
			direct := cl.client(t)
			// Outlast stalled requests: a late one would make a second job.
			var stall time.Duration
			for _, f := range tt.faults {
				stall = max(stall, f.Delay)
			}
			time.Sleep(stall + time.Second)
			jobs, err := direct.ListJobs(clusterCtx(t), JobFilter{Name: spec.Name})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 1 || jobs[0].ID != res.JobID {
				t.Fatalf("jobs named %s: %d (%v), want exactly job %d", spec.Name, len(jobs), jobs, res.JobID)
			}
			t.Logf("%s: job %d after %d POSTs (recovered %v)", tt.name, res.JobID, proxy.Count("POST", "/job/submit"), res.Recovered)
		})
	}
}

// TestClusterFaultyPollingReportsOnlyRealStates polls a real job through a
// proxy failing GETs in every way and checks each reported state against
// the responses that actually reached the client.
func TestClusterFaultyPollingReportsOnlyRealStates(t *testing.T) {
	cl := realCluster(t)
	proxy := slurmtest.NewFaultProxy(t, cl.env.RestURL)
	cfg := cl.config()
	cfg.URL = proxy.URL
	cfg.RequestTimeout = time.Second
	cfg.Retry.Max = -1 // every failure reaches the waiter
	c := newClient(t, cfg)
	res, err := c.Submit(clusterCtx(t), cl.spec("poll", "#!/bin/bash\nsleep 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	cancelAtEnd(t, c, res.JobID)
	proxy.Add(
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Respond, Status: 500},
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Drop},
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.StallResponse, Delay: 2 * time.Second},
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Respond, Status: 200, Body: `{"jobs":[{"job_id":1,"job_state":["FAILED"]`},
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Reset},
	)
	var reported []State
	failures := 0
	j, err := c.Wait(clusterCtx(t), res.JobID, WaitOptions{
		PollMin: 100 * time.Millisecond, PollMax: 500 * time.Millisecond,
		OnChange: func(j Job) { reported = append(reported, j.State) },
		OnError:  func(error) { failures++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, r := range proxy.Requests() {
		if !r.Delivered || r.Method != "GET" || !strings.Contains(r.Path, "/job/") {
			continue
		}
		var body struct {
			Jobs []struct {
				JobState []string `json:"job_state"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(r.Body, &body); err == nil && len(body.Jobs) > 0 {
			read[ParseState(body.Jobs[0].JobState...).String()] = true
		}
	}
	for _, s := range reported {
		if !read[s.String()] {
			t.Errorf("reported %s, which no delivered response carried", s)
		}
	}
	var bases []string
	for _, s := range reported {
		bases = append(bases, string(s.Base))
	}
	if seq := strings.Join(bases, ","); seq != "PENDING,RUNNING,COMPLETED" && seq != "PENDING,COMPLETED" && seq != "RUNNING,COMPLETED" {
		t.Errorf("reported %s, not an order the job can go through", seq)
	}
	if !j.Success() || failures < 5 {
		t.Fatalf("final %s after %d polling failures; reported %v", j.Outcome(), failures, reported)
	}
	t.Logf("reported %v through %d polling failures", reported, failures)
}
