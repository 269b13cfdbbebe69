package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSlurm is a Runner standing in for Slurm's commands: a queue of jobs
// that sbatch adds to and squeue/scontrol/scancel read, recorded 24.11
// output for the rest, and per-command faults.
type fakeSlurm struct {
	t  *testing.T
	mu sync.Mutex

	calls []string // each run's argv, base name first
	jobs  []fakeJob
	next  int

	// fault, when set for a command's base name, decides its outcome
	// instead (nil Result pointer: run normally). n counts that
	// command's calls, from 1.
	fault map[string]func(ctx context.Context, n int, c Command) (*Result, error)
	count map[string]int
}

type fakeJob struct {
	ID                     int
	Name, Comment, State   string
	Partition, Stdin, User string
	Env                    []string
	Submit                 time.Time
}

func newFake(t *testing.T) *fakeSlurm {
	return &fakeSlurm{t: t, next: 100, fault: map[string]func(context.Context, int, Command) (*Result, error){}, count: map[string]int{}}
}

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "slurm-24.11", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var directive = regexp.MustCompile(`(?m)^#SBATCH --([a-z-]+)(?:=(?:"([^"]*)"|(\S*)))?$`)

func (f *fakeSlurm) Run(ctx context.Context, c Command) (Result, error) {
	name := filepath.Base(c.Argv[0])
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+strings.Join(c.Argv[1:], " "))
	f.count[name]++
	n := f.count[name]
	fault := f.fault[name]
	f.mu.Unlock()
	if fault != nil {
		if res, err := fault(ctx, n, c); res != nil || err != nil {
			if res == nil {
				res = &Result{}
			}
			return *res, err
		}
	}
	return f.serve(c)
}

// serve answers c from the fake queue, unrecorded (a fault's own run).
func (f *fakeSlurm) serve(c Command) (Result, error) {
	name := filepath.Base(c.Argv[0])
	f.mu.Lock()
	defer f.mu.Unlock()
	args := strings.Join(c.Argv[1:], " ")
	switch {
	case name == "scontrol" && args == "ping --json":
		return Result{Stdout: recorded(f.t, "scontrol-ping.json")}, nil
	case name == "scontrol" && args == "show nodes --json":
		return Result{Stdout: recorded(f.t, "scontrol-show-nodes.json")}, nil
	case name == "scontrol" && args == "show partitions --json":
		return Result{Stdout: recorded(f.t, "scontrol-show-partitions.json")}, nil
	case name == "scontrol" && strings.HasPrefix(args, "show job "):
		id := strings.Fields(args)[2]
		if id == "3" {
			return Result{Stdout: recorded(f.t, "scontrol-show-job-3.json")}, nil
		}
		for _, j := range f.jobs {
			if fmt.Sprint(j.ID) == id {
				return Result{Stdout: jobsJSON(j)}, nil
			}
		}
		return Result{Stdout: recorded(f.t, "scontrol-show-job-missing.json")}, nil
	case name == "squeue" && strings.Contains(args, "--format=%A %T"):
		var b strings.Builder
		for _, j := range f.jobs {
			fmt.Fprintf(&b, "%d %s\n", j.ID, j.State)
		}
		return Result{Stdout: []byte(b.String())}, nil
	case name == "squeue" && strings.Contains(args, "--json"):
		return Result{Stdout: jobsJSON(f.jobs...)}, nil
	case name == "sacct":
		return Result{ExitCode: 1, Stderr: []byte("Slurm accounting storage is disabled\n")}, nil
	case name == "scancel":
		id := c.Argv[len(c.Argv)-1]
		for i, j := range f.jobs {
			if fmt.Sprint(j.ID) == id {
				f.jobs[i].State = "CANCELLED"
			}
		}
		return Result{}, nil
	case name == "sbatch":
		j := fakeJob{ID: f.next, State: "PENDING", Stdin: string(c.Stdin), Env: c.Env, Submit: time.Now()}
		f.next++
		for _, m := range directive.FindAllStringSubmatch(string(c.Stdin), -1) {
			v := m[2] + m[3]
			switch m[1] {
			case "job-name":
				j.Name = v
			case "comment":
				j.Comment = v
			case "partition":
				j.Partition = v
			}
		}
		if j.Partition == "nosuch" {
			return Result{ExitCode: 1, Stderr: []byte("sbatch: error: invalid partition specified: nosuch\nsbatch: error: Batch job submission failed: Invalid partition name specified\n")}, nil
		}
		f.jobs = append(f.jobs, j)
		return Result{Stdout: []byte(fmt.Sprintf("%d\n", j.ID))}, nil
	}
	return Result{ExitCode: 1, Stderr: []byte(name + ": fake does not know " + args)}, nil
}

// jobsJSON is jobs as scontrol show job / squeue --json print them (the
// fields the client reads).
func jobsJSON(jobs ...fakeJob) []byte {
	out := []map[string]any{}
	for _, j := range jobs {
		out = append(out, map[string]any{
			"job_id": j.ID, "name": j.Name, "comment": j.Comment, "job_state": []string{j.State},
			"user_name": "slurmtest", "partition": j.Partition,
			"submit_time": map[string]any{"set": true, "infinite": false, "number": j.Submit.Unix()},
		})
	}
	b, _ := json.Marshal(map[string]any{"jobs": out, "errors": []any{}, "warnings": []any{},
		"meta": map[string]any{"plugin": map[string]any{"data_parser": "data_parser/v0.0.42"}, "slurm": map[string]any{"release": "24.11.5"}}})
	return b
}

func (f *fakeSlurm) callsOf(name string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, name+" ") {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeSlurm) jobCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.jobs)
}
