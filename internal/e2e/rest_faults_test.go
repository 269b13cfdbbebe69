package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// minter writes a token_command that logs each call to a file and mints a
// real token for the test cluster (testcluster/token.sh, run as root).
func (c *cluster) minter(t *testing.T, lifespan int) (argv []string, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "mint-calls")
	script := filepath.Join(dir, "mint.sh")
	body := "#!/bin/sh\necho mint >> '" + calls + "'\nexec bash '" + filepath.Join(c.repo, "testcluster", "token.sh") + "' " + itoa(lifespan) + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"sh", script}, calls
}

// mintToken is a real token that expires after lifespan seconds.
func (c *cluster) mintToken(t *testing.T, lifespan int) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(c.repo, "testcluster", "token.sh"), itoa(lifespan)).Output()
	if err != nil {
		t.Skipf("cannot mint test-cluster tokens here (token.sh needs root on the cluster host): %v", err)
	}
	return strings.TrimSpace(string(out))
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

func tomlList(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = `"` + strings.ReplaceAll(a, `"`, `\"`) + `"`
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// TestRESTFaults: slurmrestd misbehaving during a run (500s, connection
// resets, a 10 s stall, a token that expires mid-wait and one it refuses)
// does not break the run, and the job is submitted exactly once.
func TestRESTFaults(t *testing.T) {
	t.Parallel()
	c := setup(t)
	badToken, err := os.ReadFile(filepath.Join(c.repo, "slurm", "slurmtest", "samples", "err-bad-token.get-job.response.json"))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("during the wait", func(t *testing.T) {
		t.Parallel()
		p := c.proxy(t)
		p.Add(
			// Polls of the job: two 500s, two resets, a 10 s stall, then a
			// refused token, in that order.
			slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Respond, Status: 500},
			slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Reset},
			slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 1, Action: slurmtest.Stall, Delay: 10 * time.Second},
			slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 1, Action: slurmtest.Respond, Status: 511, Body: string(badToken)},
		)
		mint, calls := c.minter(t, 3600)
		name := uniqueName("e2e-rest-wait")
		// The starting token really expires mid-run (by its claim, during
		// the stall): the client mints a fresh one, and again after the 511.
		r := c.prepare(t, runOpts{name: name, restURL: p.URL, token: c.mintToken(t, 18),
			slurm:  []string{"token_command = " + tomlList(mint)},
			recipe: mockRecipe{Name: name, OSL: 3000, ITL: "5ms", Conc: "4"}.String()}).start()
		code := r.wait(5 * time.Minute)
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, r.output())
		}
		assertFaultsHit(t, p, slurmtest.Respond, slurmtest.Reset, slurmtest.Stall)
		if n := countAction(p, slurmtest.Respond); n != 3 {
			t.Errorf("%d requests answered by the proxy, want 3 (two 500s, one 511)", n)
		}
		if n := countLines(calls); n < 2 {
			t.Errorf("token command ran %d times, want ≥ 2 (expired claim, refused token)", n)
		}
		assertOneJob(t, r, p, 1)
	})

	t.Run("not found while following", func(t *testing.T) {
		t.Parallel()
		p := c.proxy(t)
		// slurmctld answering "Invalid job id" for the running job, with no
		// accounting to ask (the test cluster has none): the run used to
		// end "final state unknown" and cancel the healthy job (exit 5).
		p.Add(slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 2, Times: 3, Action: slurmtest.Respond, Status: 404,
			Body: `{"errors":[{"error_number":2017,"error":"Invalid job id specified"}]}`})
		name := uniqueName("e2e-rest-404")
		r := c.prepare(t, runOpts{name: name, restURL: p.URL, recipe: mockRecipe{Name: name}.String()}).start()
		code := r.wait(5 * time.Minute)
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, r.output())
		}
		assertFaultsHit(t, p, slurmtest.Respond)
		assertOneJob(t, r, p, 1)
	})

	t.Run("at submit", func(t *testing.T) {
		t.Parallel()
		p := c.proxy(t)
		p.Add(
			// The first submit never reaches slurmrestd (500 from a
			// gateway); the second creates the job but its answer is lost.
			slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.Respond, Status: 500},
			slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward},
		)
		name := uniqueName("e2e-rest-submit")
		r := c.prepare(t, runOpts{name: name, restURL: p.URL, recipe: mockRecipe{Name: name}.String()}).start()
		code := r.wait(5 * time.Minute)
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, r.output())
		}
		assertFaultsHit(t, p, slurmtest.Respond, slurmtest.DropAfterForward)
		// Two POSTs (the first was never forwarded), one job.
		assertOneJob(t, r, p, 2)
	})
}

func countAction(p *slurmtest.FaultProxy, a slurmtest.Action) int {
	n := 0
	for _, rq := range p.Requests() {
		if rq.Action == a {
			n++
		}
	}
	return n
}

func assertFaultsHit(t *testing.T, p *slurmtest.FaultProxy, want ...slurmtest.Action) {
	t.Helper()
	seen := map[slurmtest.Action]int{}
	for _, rq := range p.Requests() {
		seen[rq.Action]++
	}
	for _, a := range want {
		if seen[a] == 0 {
			t.Errorf("fault %v never applied (the run ended before it?); requests by action: %v", a, seen)
		}
	}
}

// assertOneJob: the cluster holds exactly one job of the run, and the
// proxy saw posts job submissions.
func assertOneJob(t *testing.T, r *run, p *slurmtest.FaultProxy, posts int) {
	t.Helper()
	jobs := r.jobs()
	if len(jobs) != 1 {
		t.Errorf("%d jobs named %s, want 1: %+v", len(jobs), r.opts.name, jobs)
	} else if jobs[0].ID != r.jobID() {
		t.Errorf("the cluster's job is %d, run reported %d", jobs[0].ID, r.jobID())
	}
	if n := submits(p); n != posts {
		t.Errorf("proxy saw %d POSTs to job/submit, want %d", n, posts)
	}
}
