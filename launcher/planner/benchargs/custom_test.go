package benchargs

import (
	"reflect"
	"testing"
)

// TestCustomConcurrencies: the concurrencies collection and telemetry
// expect are the ones agentic_srt.sh runs, ${CONC_LIST:-$CONC}, with the
// step's own environment (benchmark.env) over --conc / CONC_LIST and the
// submitting environment's CONC; --conc as a flag is reported so the plan
// puts it into the step's environment.
func TestCustomConcurrencies(t *testing.T) {
	cases := []struct {
		name     string
		env      map[string]string // the step's environment (benchmark.env)
		flag     []int             // --conc / CONC_LIST
		envConc  string            // the submitting environment's CONC
		want     []int
		fromFlag bool
	}{
		{"recipe CONC", map[string]string{"CONC": "388"}, nil, "", []int{388}, false},
		{"--conc over recipe CONC", map[string]string{"CONC": "388"}, []int{4, 8}, "", []int{4, 8}, true},
		{"recipe CONC_LIST wins", map[string]string{"CONC_LIST": "1 2"}, []int{4}, "", []int{1, 2}, false},
		{"workflow CONC only", nil, nil, "16", []int{16}, false},
		{"step CONC over workflow CONC", map[string]string{"CONC": "2"}, nil, "16", []int{2}, false},
		{"nothing", nil, nil, "", nil, false},
		{"unreadable", map[string]string{"CONC": "lots"}, nil, "", nil, false},
		{"not positive", map[string]string{"CONC_LIST": "4 0"}, nil, "", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, fromFlag := CustomConcurrencies(tc.env, tc.flag, tc.envConc)
			if !reflect.DeepEqual(got, tc.want) || fromFlag != tc.fromFlag {
				t.Errorf("got %v (from --conc %v), want %v (%v)", got, fromFlag, tc.want, tc.fromFlag)
			}
		})
	}
}
