package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSbatchDirectivesReachSlurm: a recipe's sbatch_directives (srtctl's
// #SBATCH lines; here cpus-per-gpu, mem, gres-flags) are submitted through
// slurmrestd as job fields, the job runs, and slurmctld holds them.
func TestSbatchDirectivesReachSlurm(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-directives")
	rec := mockRecipe{Name: name}.String() + "sbatch_directives:\n  cpus-per-gpu: 1\n  mem: 0\n  gres-flags: enforce-binding\n"
	r := c.prepare(t, runOpts{name: name, recipe: rec})
	r.start()
	if code := r.wait(5 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	id := r.jobID()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, strings.TrimRight(c.Cluster.RestURL, "/")+"/slurm/v0.0.41/job/"+id.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-SLURM-USER-NAME", c.Cluster.User)
	req.Header.Set("X-SLURM-USER-TOKEN", c.Cluster.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var got struct {
		Jobs []struct {
			CPUsPerTRES string   `json:"cpus_per_tres"`
			Flags       []string `json:"flags"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(body, &got); err != nil || len(got.Jobs) != 1 {
		t.Fatalf("GET job %s: %v\n%.2000s", id, err, body)
	}
	j := got.Jobs[0]
	t.Logf("job %s: cpus_per_tres %q, flags %v", id, j.CPUsPerTRES, j.Flags)
	if j.CPUsPerTRES != "gres/gpu:1" || !slices.Contains(j.Flags, "GRES_BINDING_ENFORCED") {
		t.Errorf("cpus_per_tres %q flags %v, want gres/gpu:1 and GRES_BINDING_ENFORCED", j.CPUsPerTRES, j.Flags)
	}
	r.removeOnPass()
}
