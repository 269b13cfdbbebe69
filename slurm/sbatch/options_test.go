package sbatch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sampleValues is a valid value for each kind of directive.
func sampleValue(k string, spec directiveSpec) string {
	switch spec.kind {
	case dTrue, dFalse, dConst:
		return ""
	case dList:
		return "n1,n2"
	case dUpperList:
		return "END,FAIL"
	case dMemMB, dMemMBInt, dGresGPUMem:
		return "2048M"
	case dMinutes:
		return "90"
	case dGres:
		return "gpu:h100:8,nic:1"
	case dGresFlags:
		return "enforce-binding"
	case dKillInvalidDep:
		return "no"
	}
	switch k {
	case "wait-all-nodes":
		return "1"
	case "gpu-bind":
		return "closest"
	}
	if spec.kind == dString {
		return "value-" + k
	}
	return "7"
}

// viaJSON is what the job description looks like after the HTTP round trip
// (numbers as float64, lists as []any), which is what Options reads.
func viaJSON(t *testing.T, d map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOptionsInvertDirectives: for every option Directives translates,
// the field it makes goes back through Options to an option that
// Directives translates to the same field and value: the rule, over the
// whole table, not a sample.
func TestOptionsInvertDirectives(t *testing.T) {
	for k, spec := range sbatchDirectives {
		t.Run(k, func(t *testing.T) {
			v := sampleValue(k, spec)
			fields, err := Directives(map[string]string{k: v})
			if err != nil {
				t.Fatalf("Directives(%s=%q): %v", k, v, err)
			}
			opts, err := Options(viaJSON(t, fields))
			if err != nil {
				t.Fatalf("Options(%v): %v", fields, err)
			}
			back := map[string]string{}
			for _, o := range opts {
				back[o.Name] = o.Value
			}
			again, err := Directives(back)
			if err != nil {
				t.Fatalf("Directives(%v) of Options' result: %v", back, err)
			}
			if !reflect.DeepEqual(viaJSON(t, again), viaJSON(t, fields)) {
				t.Errorf("%s=%q: fields %v → options %v → fields %v", k, v, fields, back, again)
			}
		})
	}
}

// TestOptionsPlanFields: the fields the plan and submit set become the
// options sbatch reads for them; script and environment are not options;
// a field no option sets, and values an option cannot carry, are refused
// naming the field.
func TestOptionsPlanFields(t *testing.T) {
	desc := map[string]any{
		"name": "run-1", "comment": "tag slurmbench-submit=ab", "partition": "gpu", "account": "acct",
		"nodes": "3", "current_working_directory": "/shared/run", "standard_output": "/shared/run/%j.out",
		"standard_error": "/shared/run/%j.err", "time_limit": map[string]any{"set": true, "infinite": false, "number": 20},
		"tasks_per_node": 1, "tres_per_node": "gres/gpu:4", "shared": []string{"none"},
		"script": "#!/bin/bash\n", "environment": []string{"PATH=/bin"},
	}
	opts, err := Options(viaJSON(t, desc))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, o := range opts {
		args = append(args, o.Arg())
	}
	want := "--job-name=run-1 --comment=tag slurmbench-submit=ab --chdir=/shared/run --partition=gpu --account=acct --nodes=3 " +
		"--exclusive --error=/shared/run/%j.err --output=/shared/run/%j.out --ntasks-per-node=1 --time=20 --gres=gpu:4"
	if got := strings.Join(args, " "); !sameWords(got, want) {
		t.Errorf("options\n got %s\nwant %s", got, want)
	}
	for _, tc := range []struct {
		field string
		value any
		want  string
	}{
		{"burst_buffer", "x", "no sbatch option sets"},
		{"shared", []string{"user"}, `only "none"`},
		{"time_limit", map[string]any{"set": true, "infinite": true, "number": 0}, "not a value sbatch --time takes"},
		{"comment", "two\nlines", "not a value sbatch --comment takes"},
		{"flags", []string{"NO_SUCH_FLAG"}, "no sbatch option sets job flag NO_SUCH_FLAG"},
		{"tres_per_node", "gpu:4", "not a value sbatch --gres takes"},
		{"requeue", "yes", "not true or false"},
	} {
		_, err := Options(viaJSON(t, map[string]any{tc.field: tc.value}))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s=%v: error %v, want one naming the field and %q", tc.field, tc.value, err, tc.want)
		}
	}
}

func sameWords(a, b string) bool {
	split := func(s string) map[string]int {
		m := map[string]int{}
		for _, w := range strings.Split(s, " --") {
			m[strings.TrimPrefix(w, "--")]++
		}
		return m
	}
	return reflect.DeepEqual(split(a), split(b))
}
