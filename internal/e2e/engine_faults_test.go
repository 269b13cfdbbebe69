package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEngineFaults: an engine fault from the mock, through `slurmbench
// run`, ends with its layer's exit code and class, the points that
// finished kept (and the missing one named), and the job gone.
func TestEngineFaults(t *testing.T) {
	t.Parallel()
	c := setup(t)
	oom := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB"
	cases := []struct {
		name  string
		rec   mockRecipe
		code  int
		class string
		// kept are the concurrencies whose results must be staged; missing
		// the ones the summary must name as missing or invalid.
		kept, missing []int
	}{
		{name: "crash before healthy", code: 7, class: "cuda_oom",
			rec: mockRecipe{Decode: []string{"fail-before-healthy-after: 1s", "fail-log-line: " + quoteYAML(oom)}}},
		// c4 is 8 requests, c8 16: the decode worker dies during c8.
		{name: "crash mid-benchmark", code: 7, class: "died_after_healthy", kept: []int{4}, missing: []int{8},
			rec: mockRecipe{Conc: "4x8", OSL: 64, Decode: []string{"exit-after-requests: 14"}}},
		{name: "hang", code: 6, class: "health_deadline",
			rec: mockRecipe{Prefill: []string{"hang: true"}, Attempts: 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := uniqueName("e2e-engine")
			tc.rec.Name = name
			r := c.prepare(t, runOpts{name: name, recipe: tc.rec.String()}).start()
			code := r.wait(5 * time.Minute)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, r.output())
			}
			o := r.outcome()
			if o.Result != "failed" || string(o.Class) != tc.class {
				t.Errorf("outcome.json: %s / %s, want failed / %s", o.Result, o.Class, tc.class)
			}
			// The summary names the class (terminal and step summary share it).
			if !strings.Contains(r.stdout.String(), tc.class) {
				t.Errorf("summary does not name class %s:\n%s", tc.class, r.stdout.String())
			}
			r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
			assertBundle(t, r.stage)

			staged := stagedResults(t, r.stage)
			if len(staged) != len(tc.kept) {
				t.Errorf("staged %v, want results of %v only", staged, tc.kept)
			}
			for _, conc := range tc.kept {
				want := "_conc" + itoa(conc) + "_gpus_12_ctx_8_gen_4.json"
				found := false
				for _, s := range staged {
					found = found || strings.HasSuffix(s, want)
				}
				if !found {
					t.Errorf("no staged result for c%d in %v", conc, staged)
				}
			}
			for _, conc := range tc.missing {
				assertMarked(t, r, conc)
			}
		})
	}
}

// assertMarked: a point that did not finish is named in the summary and in
// the manifest, and if its result file exists it is marked partial/invalid.
func assertMarked(t *testing.T, r *run, conc int) {
	t.Helper()
	var row string
	for _, l := range strings.Split(r.stdout.String(), "\n") {
		if strings.Contains(l, " c"+itoa(conc)+" ") {
			row = l
		}
	}
	if row == "" || !(strings.Contains(row, "missing") || strings.Contains(row, "invalid")) {
		t.Errorf("summary row of c%d does not mark it missing or invalid: %q\n%s", conc, row, r.stdout.String())
	}
	files, _ := filepath.Glob(filepath.Join(r.runDir(), "results", "*", "results_concurrency_"+itoa(conc)+"_*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Partial bool  `json:"slurmbench_partial"`
			Valid   *bool `json:"slurmbench_valid"`
		}
		if err := json.Unmarshal(b, &res); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if !res.Partial && (res.Valid == nil || *res.Valid) {
			t.Errorf("%s is kept but not marked partial or invalid", f)
		}
	}
}

func quoteYAML(s string) string {
	b, _ := json.Marshal(s) // JSON strings are YAML double-quoted scalars
	return string(b)
}
