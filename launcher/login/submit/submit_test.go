package submit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

func TestBatchScriptExecsTheDriverOnly(t *testing.T) {
	p := &plan.Plan{RunID: "r1", Binary: "/shared/runs/r1/bin/slurmbench", PlanFile: "/shared/runs/r1/plan.json"}
	got, err := BatchScript(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "#!/bin/sh\n# slurmbench run r1\nexec '/shared/runs/r1/bin/slurmbench' driver --plan '/shared/runs/r1/plan.json'\n"
	if got != want {
		t.Errorf("script:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []string{"/a'b/slurmbench", "/a\nb", "relative/slurmbench"} {
		p.Binary = bad
		if _, err := BatchScript(p); err == nil {
			t.Errorf("binary %q went into a script", bad)
		}
	}
}

func TestDirectives(t *testing.T) {
	cases := []struct {
		in      map[string]string
		key     string
		want    string
		wantErr string
	}{
		{map[string]string{"cpus-per-task": "144"}, "cpus_per_task", "144", ""},
		{map[string]string{"mem": "0"}, "memory_per_node", "map[infinite:false number:0 set:true]", ""},
		{map[string]string{"mem": "16G"}, "memory_per_node", "map[infinite:false number:16384 set:true]", ""},
		{map[string]string{"segment": "3"}, "segment_size", "3", ""},
		{map[string]string{"exclude": "n1,n2"}, "excluded_nodes", "[n1 n2]", ""},
		{map[string]string{"cpus-per-task": "many"}, "", "", "cpus-per-task"},
		{map[string]string{"gres-flags": "enforce-binding"}, "flags", "[GRES_BINDING_ENFORCED]", ""},
		{map[string]string{"cpus-per-gpu": "16"}, "cpus_per_tres", "gres/gpu:16", ""},
		{map[string]string{"hint": "nomultithread"}, "", "", "--hint"},
	}
	for _, tc := range cases {
		out, err := directives(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want one naming %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.in, err)
			continue
		}
		if got := fmt.Sprint(out[tc.key]); got != tc.want {
			t.Errorf("%v: %s = %s, want %s", tc.in, tc.key, got, tc.want)
		}
	}
}

func TestJobSpecKeepsTheSiteCommentFirst(t *testing.T) {
	p := &plan.Plan{RunID: "r1", RunDir: "/shared/runs/r1", Binary: "/shared/runs/r1/bin/slurmbench", PlanFile: "/shared/runs/r1/plan.json",
		Layout: rundir.Layout{BatchOut: "/shared/runs/r1/logs/batch.out"},
		Slurm: plan.Slurm{JobName: "x", Partition: "p", Nodes: 3, GPUsPerNode: 8, TimeLimitMinutes: 240, Comment: "slurmbench:r1",
			Directives: map[string]string{"comment": `{"reaper":{"exempt":true}}`}}}
	spec, err := JobSpec(p, []string{"PATH=/usr/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Comment != `{"reaper":{"exempt":true}} slurmbench:r1` || spec.Nodes != "3" || spec.GPUsPerNode != 8 || spec.WorkDir != p.RunDir {
		t.Errorf("spec %+v", spec)
	}
}

// TestJobSpecGPUsPerNode: a plan whose cluster turns --gpus-per-node off
// (srtslurm.yaml's use_gpus_per_node_directive: false) asks no
// tres_per_node, or only the GRES its directives ask.
func TestJobSpecGPUsPerNode(t *testing.T) {
	for _, c := range []struct {
		name       string
		off        bool
		directives map[string]string
		want       string // the job description's tres_per_node, "" for none
	}{
		{name: "default", want: "gres/gpu:8"},
		{name: "off", off: true},
		{name: "off, GRES by directive", off: true, directives: map[string]string{"gres": "gpu:8"}, want: "gres/gpu:8"},
	} {
		p := &plan.Plan{RunID: "r1", RunDir: "/shared/runs/r1", Binary: "/shared/runs/r1/bin/slurmbench", PlanFile: "/shared/runs/r1/plan.json",
			Layout: rundir.Layout{BatchOut: "/shared/runs/r1/logs/batch.out"},
			Slurm:  plan.Slurm{JobName: "x", Partition: "p", Nodes: 2, GPUsPerNode: 8, NoGPUsPerNode: c.off, TimeLimitMinutes: 60, Comment: "slurmbench:r1", Directives: c.directives}}
		spec, err := JobSpec(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(spec.Extra["tres_per_node"])
		if spec.Extra["tres_per_node"] == nil && spec.GPUsPerNode > 0 {
			got = "gres/gpu:" + strconv.Itoa(spec.GPUsPerNode)
		}
		if got == "<nil>" {
			got = ""
		}
		if got != c.want {
			t.Errorf("%s: tres_per_node %q, want %q (spec GPUsPerNode %d)", c.name, got, c.want, spec.GPUsPerNode)
		}
	}
}

// chownTree walks inside its root: files and directories get the owner,
// a symbolic link pointing out of the tree is changed itself, not its target.
func TestChownTreeStaysInside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "logs", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "logs", "deep", "a.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "logs", "out")); err != nil {
		t.Fatal(err)
	}
	if err := chownTree(dir, os.Getuid(), os.Getgid()); err != nil {
		t.Fatalf("chownTree: %v", err)
	}
	if err := chownTree(filepath.Join(dir, "missing"), os.Getuid(), os.Getgid()); err == nil {
		t.Error("chownTree of a missing directory: no error")
	}
}
