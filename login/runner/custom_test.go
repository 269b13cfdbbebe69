package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/slurmbench/slurmbench/plan"
)

// TestCustomConcurrencies: the concurrencies collection expects are the
// ones agentic_srt.sh runs, ${CONC_LIST:-$CONC}, with the recipe's
// benchmark.env over the inherited workflow environment.
func TestCustomConcurrencies(t *testing.T) {
	cases := []struct {
		name      string
		env, jobs map[string]string // benchmark.env; the submitting environment
		want      []int
	}{
		{"recipe CONC", map[string]string{"CONC": "388"}, nil, []int{388}},
		{"workflow CONC_LIST over recipe CONC", map[string]string{"CONC": "388"}, map[string]string{"CONC_LIST": "4 8"}, []int{4, 8}},
		{"recipe CONC_LIST wins", map[string]string{"CONC_LIST": "1 2"}, map[string]string{"CONC_LIST": "4"}, []int{1, 2}},
		{"workflow CONC only", nil, map[string]string{"CONC": "16"}, []int{16}},
		{"nothing", nil, nil, nil},
		{"unreadable", map[string]string{"CONC": "lots"}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl := &plan.Plan{Processes: []plan.Process{{Name: "prefill_w0", Role: plan.RolePrefill, Env: map[string]string{"CONC": "9"}},
				{Name: "benchmark", Role: plan.RoleBenchmark, Env: tc.env}}}
			lookup := func(k string) (string, bool) { v, ok := tc.jobs[k]; return v, ok }
			if got := customConcurrencies(pl, lookup); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFixedSequenceDirs: the directories a fixed-sequence workload's points
// are looked for in are copy_fixed_sequence_results' (*isl*osl* directly
// under the logs) that hold raw results; nothing else counts.
func TestFixedSequenceDirs(t *testing.T) {
	logs := t.TempDir()
	mk := func(dir, file string) {
		if err := os.MkdirAll(filepath.Join(logs, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if file != "" {
			if err := os.WriteFile(filepath.Join(logs, dir, file), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("sa-bench_isl_64_osl_16", "results_concurrency_2_gpus_12_ctx_8_gen_4.json")
	mk("custom_isl_1k_osl_1k", "results_concurrency_4_gpus_8.json")
	mk("sa-bench_isl_8_osl_8", "")                         // no results
	mk("osl_1_isl_1", "results_concurrency_1_gpus_1.json") // osl before isl
	mk("agentic", "results_concurrency_1_gpus_1.json")
	mk("sa-bench_isl_1_osl_1/nested", "results_concurrency_1_gpus_1.json")
	got := fixedSequenceDirs(logs)
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	if want := []string{"custom_isl_1k_osl_1k", "sa-bench_isl_64_osl_16"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
