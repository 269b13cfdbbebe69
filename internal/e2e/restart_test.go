package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/login/matrix"
)

// restartRow is one row of the restart master: its recipe and the mock
// engine settings that make its servers differ from its neighbours'.
type restartRow struct {
	recipe string
	rec    mockRecipe
}

// restartMaster writes a master config in InferenceX's shape whose entries
// each name one recipe per row: one topology per entry (the same nodes,
// image and model), different engine arguments per row.
func restartMaster(entries map[string][]restartRow, order []string) string {
	var b strings.Builder
	for _, e := range order {
		b.WriteString(masterEntryHead(e))
		for _, r := range entries[e] {
			fmt.Fprintf(&b, `      - conc-list: [2]
        prefill: {num-worker: %d, tp: 4, ep: 1, dp-attn: false, additional-settings: ["CONFIG_FILE=recipes/%s.yaml"]}
        decode: {num-worker: 1, tp: 4, ep: 1, dp-attn: false}
`, r.rec.PrefillWorkers, r.recipe)
		}
	}
	return b.String()
}

// TestMatrixRestartsInPlace is issue 35 on the test cluster: rows of two
// topologies (2P1D on 3 nodes, 1P1D on 2), each row with its own mock
// engine arguments (--ttft/--itl), run in 2 allocations with the engines
// restarted in place between rows; every row that passes is staged with a
// manifest naming its allocation and restart; the middle row of the 1P1D
// group restarts the engines but fails before healthy, ends alone with its
// exit code, and the row after it runs on nodes proven clean in the same
// allocation.
func TestMatrixRestartsInPlace(t *testing.T) {
	c := setup(t)
	dir := t.TempDir()
	a, b := uniqueName("e2e-rsa"), uniqueName("e2e-rsb")
	rows := map[string][]restartRow{
		a: {
			{a, mockRecipe{PrefillWorkers: 2, TTFT: "5ms", ITL: "2ms"}},
			{a + "-slow", mockRecipe{PrefillWorkers: 2, TTFT: "40ms", ITL: "20ms"}},
		},
		b: {
			{b, mockRecipe{PrefillWorkers: 1, TTFT: "5ms", ITL: "2ms"}},
			{b + "-bad", mockRecipe{PrefillWorkers: 1, Decode: []string{"fail-before-healthy-after: 1s"}}},
			{b + "-slow", mockRecipe{PrefillWorkers: 1, TTFT: "40ms", ITL: "20ms"}},
		},
	}
	recipes := filepath.Join(dir, "recipes")
	if err := os.MkdirAll(recipes, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rs := range rows {
		for _, r := range rs {
			r.rec.Name, r.rec.OSL, r.rec.Conc = r.recipe, 16, "2"
			names = append(names, r.recipe)
			if err := os.WriteFile(filepath.Join(recipes, r.recipe+".yaml"), []byte(r.rec.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	master := filepath.Join(dir, "master.yaml")
	if err := os.WriteFile(master, []byte(restartMaster(rows, []string{a, b})), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := c.Env.Profile(t, dir, "")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, n := range names {
			for _, j := range c.jobsNamed(t, n) {
				if !j.Terminal() {
					_ = c.api.CancelJob(ctx, j.ID)
				}
			}
		}
	})
	stage := filepath.Join(dir, "stage")
	argv := []string{"matrix", "-p", profile, "--master", master, "--recipes-root", recipes, "--stage-dir", stage, "--max-parallel", "2"}

	plan, planErr, code := c.matrixRun(t, time.Minute, append(argv, "--plan")...)
	if code != 0 || !strings.Contains(plan, "5 points in 2 allocations") {
		t.Fatalf("plan: exit %d, want 5 points in 2 allocations:\n%s\n%s", code, plan, planErr)
	}

	start := time.Now()
	out, errOut, code := c.matrixRun(t, 10*time.Minute, argv...)
	t.Logf("5 points in %s, exit %d\nsummary:\n%s", time.Since(start).Round(time.Second), code, out)
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "matrix:") {
			t.Log(l)
		}
	}
	if code == 0 {
		t.Errorf("matrix exit 0 with a failing row:\n%s", errOut)
	}
	// Two allocations: one job per entry, named by its first row.
	jobs := 0
	for _, n := range names {
		js := c.jobsNamed(t, n)
		jobs += len(js)
		for _, j := range js {
			if !j.Terminal() {
				t.Errorf("job %d of %s still %s after the matrix", j.ID, n, j.State)
			}
		}
	}
	if jobs != 2 {
		t.Errorf("%d jobs, want 2 allocations", jobs)
	}
	// The restarts in place, each timed beside its fresh allocation.
	restart := regexp.MustCompile(`matrix: (\S+): engines restarted in place in ([0-9.]+)s .*the fresh allocation took (\S+)`)
	got := restart.FindAllStringSubmatch(errOut, -1)
	// Timed: the restarts that reached a passed gate, here a's second row
	// (b's second row restarts and fails before healthy).
	if len(got) != 1 || !strings.HasPrefix(got[0][1], a+"#1") {
		t.Errorf("restarts in place reported %v, want a's second row's:\n%s", got, errOut)
	}
	for _, g := range got {
		t.Logf("restart for %s: %ss in place against a fresh allocation's %s", g[1], g[2], g[3])
	}

	// Every passing row staged, the failing one marked failed with its
	// exit code in the summary.
	dirs, err := filepath.Glob(filepath.Join(stage, "*_*_*"))
	if err != nil {
		t.Fatal(err)
	}
	ok, failed := 0, 0
	for _, p := range dirs {
		data, err := os.ReadFile(filepath.Join(p, matrix.MarkerFile))
		var mk matrix.Marker
		if err != nil || json.Unmarshal(data, &mk) != nil {
			t.Errorf("%s: marker %s (%v)", p, data, err)
			continue
		}
		if !mk.OK {
			failed++
			if !strings.Contains(mk.Point, b) || !strings.Contains(mk.Point, "#1") {
				t.Errorf("failed row %s, want %s's second row", mk.Point, b)
			}
			continue
		}
		ok++
		results, _ := filepath.Glob(filepath.Join(p, "mock_64_16_fp8_dynamo-mock_*_conc2_testcluster_*.json"))
		if len(results) == 0 {
			all, _ := filepath.Glob(filepath.Join(p, "*"))
			t.Errorf("%s: no result staged among %v", p, all)
		}
	}
	if ok != 4 || failed != 1 {
		t.Errorf("%d rows passed and %d failed, want 4 and 1", ok, failed)
	}
	failLine := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(b) + `#1\S*\s+2\s+\d+\s+([1-9][0-9]*)\s+`)
	if !failLine.MatchString(out) {
		t.Errorf("the summary does not give the failed row its exit code:\n%s", out)
	}
	// The row after the failure ran in the same allocation, on nodes
	// proven clean; the manifests say which allocation and restart.
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(b) + `#2\S*.*ok \(job \d+`).MatchString(out) {
		t.Errorf("the row after the failure did not pass in its allocation:\n%s", out)
	}
	manifests, _ := filepath.Glob(filepath.Join(stage, a+"_1_*", "*manifest*.json"))
	if len(manifests) == 0 {
		t.Fatalf("no manifest staged for %s's second row", a)
	}
	data, err := os.ReadFile(manifests[0])
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Provenance struct {
			JobID string            `json:"job_id"`
			Extra map[string]string `json:"extra"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Provenance.JobID == "" || m.Provenance.Extra["held_servers"] != "restarted" || m.Provenance.Extra["held_restart"] != "1" {
		t.Errorf("%s: provenance %+v; want the allocation and restart 1", manifests[0], m.Provenance)
	}
}
