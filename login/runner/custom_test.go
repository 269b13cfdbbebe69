package runner

import (
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
