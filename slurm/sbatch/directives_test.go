package sbatch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestDirectives: each sbatch option becomes its job-description
// field with the value slurmrestd reads; options the plan sets, options
// the job description has no field for, unknown options and bad values
// are refused naming the option.
func TestDirectives(t *testing.T) {
	cases := []struct {
		key, value string
		field      string
		want       string // fmt.Sprint of the field's value
		wantErr    string
	}{
		{"cpus-per-gpu", "16", "cpus_per_tres", "gres/gpu:16", ""},
		{"cpus-per-task", "72", "cpus_per_task", "72", ""},
		{"mem", "0", "memory_per_node", "map[infinite:false number:0 set:true]", ""},
		{"mem", "2T", "memory_per_node", "map[infinite:false number:2097152 set:true]", ""},
		{"mem", "1536K", "memory_per_node", "map[infinite:false number:2 set:true]", ""},
		{"mem-per-cpu", "4G", "memory_per_cpu", "map[infinite:false number:4096 set:true]", ""},
		{"mem-per-gpu", "80G", "memory_per_tres", "gres/gpu:81920", ""},
		{"tmp", "100G", "temporary_disk_per_node", "102400", ""},
		{"segment", "1", "segment_size", "1", ""},
		{"gpus", "16", "tres_per_job", "gres/gpu:16", ""},
		{"gpus-per-task", "1", "tres_per_task", "gres/gpu:1", ""},
		{"gres", "gpu:h100:8", "tres_per_node", "gres/gpu:h100:8", ""},
		{"gpu-bind", "closest", "tres_bind", "gres/gpu:closest", ""},
		{"exclude", "n1,n2", "excluded_nodes", "[n1 n2]", ""},
		{"nodelist", "n3", "required_nodes", "[n3]", ""},
		{"mail-type", "end,fail", "mail_type", "[END FAIL]", ""},
		{"mail-type", "ALL", "mail_type", "[BEGIN END FAIL INVALID_DEPENDENCY REQUEUE STAGE_OUT]", ""},
		{"exclusive", "", "shared", "none", ""},
		{"requeue", "", "requeue", "true", ""},
		{"no-requeue", "", "requeue", "false", ""},
		{"priority", "10", "priority", "map[infinite:false number:10 set:true]", ""},
		{"time-min", "1-02:03:04", "time_minimum", "map[infinite:false number:1564 set:true]", ""},
		{"time-min", "90", "time_minimum", "map[infinite:false number:90 set:true]", ""},
		{"time-min", "10:30", "time_minimum", "map[infinite:false number:11 set:true]", ""},
		{"wait-all-nodes", "1", "wait_all_nodes", "true", ""},
		{"gres-flags", "disable-binding", "flags", "[GRES_BINDING_DISABLED]", ""},
		{"constraint", "gpu&ib", "constraints", "gpu&ib", ""},
		{"comment", "anything", "comment", "<nil>", ""}, // the caller joins it with the run tag
		{"cpus-per-gpu", "many", "", "", `"cpus-per-gpu" = "many": not a whole number`},
		{"mem", "lots", "", "", `"mem"`},
		{"time-min", "1:2:3:4", "", "", "not a Slurm time"},
		{"wait-all-nodes", "yes", "", "", "want 0 or 1"},
		{"gres-flags", "bind-harder", "", "", "enforce-binding or disable-binding"},
		{"hint", "nomultithread", "", "", "slurmrestd cannot express it"},
		{"begin", "now+1hour", "", "", "not translated: the job description's begin_time"},
		{"cores-per-socket", "8", "", "", "no cores-per-socket field"},
		{"nodes", "4", "", "", "set by slurmbench's plan"},
		{"time", "10", "", "", "slurm.time_limit"},
		{"segmnet", "9", "", "", `"segmnet"`},
		{"qos", "", "", "", "needs a value"},
	}
	for _, tc := range cases {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			out, err := Directives(map[string]string{tc.key: tc.value})
			if tc.wantErr != "" {
				var de *DirectiveError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &de) || de.Directive != tc.key {
					t.Fatalf("error %v, want a DirectiveError for %s containing %q", err, tc.key, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(out[tc.field]); got != tc.want {
				t.Errorf("%s = %s, want %s (all: %v)", tc.field, got, tc.want, out)
			}
		})
	}
}

// TestDirectivesTogether: flags from several options accumulate; two
// options setting one field are refused; every bad option is named.
func TestDirectivesTogether(t *testing.T) {
	out, err := Directives(map[string]string{"gres-flags": "enforce-binding", "kill-on-invalid-dep": "yes", "spread-job": ""})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out["flags"]); got != "[GRES_BINDING_ENFORCED KILL_INVALID_DEPENDENCY SPREAD_JOB]" {
		t.Errorf("flags %s", got)
	}
	if _, err := Directives(map[string]string{"gres": "gpu:8", "gpus-per-node": "8"}); err == nil || !strings.Contains(err.Error(), "tres_per_node") {
		t.Errorf("two options setting tres_per_node: %v", err)
	}
	_, err = Directives(map[string]string{"hint": "x", "segmnet": "1", "mem": "0"})
	if err == nil || !strings.Contains(err.Error(), `"hint"`) || !strings.Contains(err.Error(), `"segmnet"`) {
		t.Errorf("want both bad options named: %v", err)
	}
	if out, err := Directives(nil); out != nil || err != nil {
		t.Errorf("none: %v %v", out, err)
	}
}
