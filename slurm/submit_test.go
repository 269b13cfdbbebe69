package slurm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

func TestSubmitSendsJobDescription(t *testing.T) {
	fake := slurmtest.NewFake(t)
	cfg := testConfig(fake.URL, "tok")
	cfg.Defaults = JobDefaults{Partition: "debug", Account: "bench", TimeLimit: 90 * time.Minute}
	c := newClient(t, cfg)
	res, err := c.Submit(ctxT(t), JobSpec{
		Name: "disagg", Script: "#!/bin/bash\nsrun hostname\n", Nodes: "3", TasksPerNode: 1,
		GPUsPerNode: 4, Exclusive: true, TimeLimit: 89*time.Minute + time.Second,
		Environment: []string{"PATH=/usr/bin:/bin", "HF_HOME=/shared/hf"},
		WorkDir:     "/shared/run", StdOut: "/shared/run/%j.out", StdErr: "/shared/run/%j.err",
		Comment: "recipe=x", Extra: map[string]any{"constraints": "gb300"},
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs := fake.Jobs()
	if len(jobs) != 1 || jobs[0].ID != int64(res.JobID) || res.Attempts != 1 || res.Recovered {
		t.Fatalf("jobs = %+v, result = %+v", jobs, res)
	}
	d := jobs[0].Desc
	want := map[string]any{
		"name": "disagg", "script": "#!/bin/bash\nsrun hostname\n", "nodes": "3", "tasks_per_node": 1.0,
		"tres_per_node": "gres/gpu:4", "shared": []any{"none"}, "partition": "debug", "account": "bench",
		"time_limit":                map[string]any{"set": true, "infinite": false, "number": 90.0},
		"environment":               []any{"PATH=/usr/bin:/bin", "HF_HOME=/shared/hf"},
		"current_working_directory": "/shared/run", "standard_output": "/shared/run/%j.out", "standard_error": "/shared/run/%j.err",
		"comment": "recipe=x " + res.SubmitKey, "constraints": "gb300",
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("job description\n got %v\nwant %v", d, want)
	}
	if !strings.HasPrefix(res.SubmitKey, "slurmbench-submit=") || len(res.SubmitKey) != len("slurmbench-submit=")+16 {
		t.Errorf("submit key = %q", res.SubmitKey)
	}
}

func TestSubmitDefaultsAndValidation(t *testing.T) {
	fake := slurmtest.NewFake(t)
	c := newClient(t, testConfig(fake.URL, "tok"))
	if _, err := c.Submit(ctxT(t), JobSpec{Name: "min", Script: "#!/bin/sh\ntrue\n"}); err != nil {
		t.Fatal(err)
	}
	d := fake.Jobs()[0].Desc
	if env := d["environment"].([]any); len(env) != 1 || !strings.HasPrefix(env[0].(string), "PATH=") {
		t.Errorf("environment = %v, want the default PATH (slurmrestd needs one)", env)
	}
	for _, k := range []string{"tres_per_node", "shared", "time_limit", "account", "nodes"} {
		if _, ok := d[k]; ok {
			t.Errorf("%s sent although unset", k)
		}
	}
	for _, spec := range []JobSpec{
		{Script: "#!/bin/sh\n"},
		{Name: "x", Script: "echo no shebang"},
		{Name: "x", Script: "#!/bin/sh\n", Environment: []string{"NOEQUALS"}},
	} {
		if _, err := c.Submit(ctxT(t), spec); err == nil || !strings.HasPrefix(err.Error(), "submitting job") {
			t.Errorf("Submit(%+v) err = %v", spec, err)
		}
	}
	if len(fake.Jobs()) != 1 {
		t.Errorf("invalid specs reached the server")
	}
}

func TestSubmitRejectionsAreReturnedNotRetried(t *testing.T) {
	tests := []struct {
		name string
		spec JobSpec
		want string
	}{
		{"bad partition", JobSpec{Name: "x", Partition: "nope", Script: "#!/bin/sh\n"},
			`submitting job "x": slurmrestd 500: Invalid partition name specified (Batch job submission failed)`},
		{"too many nodes", JobSpec{Name: "y", Nodes: "9", Script: "#!/bin/sh\n"},
			`submitting job "y": slurmrestd 500: Requested node configuration is not available (Batch job submission failed)`},
		{"too many gpus", JobSpec{Name: "z", GPUsPerNode: 8, Script: "#!/bin/sh\n"},
			`submitting job "z": slurmrestd 500: Requested node configuration is not available (Batch job submission failed)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := slurmtest.NewFake(t)
			proxy := slurmtest.NewFaultProxy(t, fake.URL)
			c := newClient(t, testConfig(proxy.URL, "tok"))
			_, err := c.Submit(ctxT(t), tt.spec)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant  %s", err, tt.want)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Status != 500 || !IsRejected(err) {
				t.Errorf("err is not a rejection *APIError: %#v", err)
			}
			if n := proxy.Count("POST", "/job/submit"); n != 1 {
				t.Errorf("POSTs = %d, want 1", n)
			}
			if n := proxy.Count("GET", "/jobs"); n != 0 {
				t.Errorf("a rejection triggered %d lookups", n)
			}
		})
	}
}

// TestSubmitAmbiguousFailuresMakeOneJob is the fault test: whatever
// happens to the submit request, one Submit call leaves exactly one job.
func TestSubmitAmbiguousFailuresMakeOneJob(t *testing.T) {
	tests := []struct {
		name       string
		faults     []slurmtest.Fault
		wantPosts  int
		recovered  bool
		wantLookup bool
	}{
		{"answer lost after slurmctld took the job", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward}}, 1, true, true},
		{"answer stalled past the client timeout", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.StallResponse, Delay: time.Second}}, 1, true, true},
		{"connection dropped before forwarding", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.Drop}}, 2, false, true},
		{"connection reset before forwarding", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.Reset}}, 2, false, true},
		{"request stalled and abandoned", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.Stall, Delay: 5 * time.Second}}, 2, false, true},
		{"502 from a proxy, twice", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 2, Action: slurmtest.Respond, Status: 502, Body: "Bad Gateway"}}, 3, false, true},
		{"500 without a Slurm verdict", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.Respond, Status: 500}}, 2, false, true},
		{"500 with a communication error", []slurmtest.Fault{{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.Respond, Status: 500,
			Body: `{"errors":[{"error_number":5004,"error":"Socket timed out on send/recv operation","description":"Batch job submission failed"}]}`}}, 2, false, true},
		{"lost answer and flaky lookups", []slurmtest.Fault{
			{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward},
			{Method: "GET", Path: "/jobs", Times: 2, Action: slurmtest.Respond, Status: 503},
		}, 1, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := slurmtest.NewFake(t)
			proxy := slurmtest.NewFaultProxy(t, fake.URL)
			cfg := testConfig(proxy.URL, "tok")
			cfg.RequestTimeout = 300 * time.Millisecond
			c := newClient(t, cfg)
			if _, err := c.Negotiate(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			proxy.Add(tt.faults...)
			res, err := c.Submit(ctxT(t), JobSpec{Name: "once", Script: "#!/bin/sh\n"})
			if err != nil {
				t.Fatalf("Submit: %v", err)
			}
			time.Sleep(50 * time.Millisecond) // let a stalled request reach the fake if it ever would
			jobs := fake.Jobs()
			if len(jobs) != 1 {
				t.Fatalf("jobs = %d (%+v), want exactly 1", len(jobs), jobs)
			}
			if jobs[0].ID != int64(res.JobID) || !strings.Contains(jobs[0].Comment, res.SubmitKey) {
				t.Errorf("result %+v does not name the job %+v", res, jobs[0])
			}
			if n := proxy.Count("POST", "/job/submit"); n != tt.wantPosts || res.Attempts != tt.wantPosts {
				t.Errorf("POSTs = %d, attempts = %d, want %d", n, res.Attempts, tt.wantPosts)
			}
			if res.Recovered != tt.recovered {
				t.Errorf("recovered = %v, want %v", res.Recovered, tt.recovered)
			}
			if got := proxy.Count("GET", "/jobs") > 0; got != tt.wantLookup {
				t.Errorf("looked up = %v, want %v", got, tt.wantLookup)
			}
		})
	}
}

func TestSubmitNotSentIsResentWithoutLookup(t *testing.T) {
	fake := slurmtest.NewFake(t)
	// A port nobody listens on: dial fails, nothing was sent.
	c := newClient(t, testConfig("http://127.0.0.1:1", "tok"))
	c.server.APIVersion = "v0.0.42"
	_, err := c.Submit(ctxT(t), JobSpec{Name: "x", Script: "#!/bin/sh\n"})
	if err == nil || !strings.Contains(err.Error(), `submitting job "x": giving up after 3 attempts`) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v", err)
	}
	if len(fake.Jobs()) != 0 {
		t.Fatal("fake got a job")
	}
}

func TestSubmitOutcomeUnknownWhenLookupFails(t *testing.T) {
	fake := slurmtest.NewFake(t)
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	c := newClient(t, testConfig(proxy.URL, "tok"))
	if _, err := c.Negotiate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	proxy.Add(
		slurmtest.Fault{Method: "POST", Path: "/job/submit", Action: slurmtest.DropAfterForward},
		slurmtest.Fault{Method: "GET", Path: "/jobs", Action: slurmtest.Respond, Status: 503},
	)
	_, err := c.Submit(ctxT(t), JobSpec{Name: "lost", Script: "#!/bin/sh\n"})
	if !errors.Is(err, ErrSubmitOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrSubmitOutcomeUnknown", err)
	}
	if !strings.Contains(err.Error(), "slurmbench-submit=") {
		t.Errorf("error does not name the submit key to look for: %v", err)
	}
	if n := proxy.Count("POST", "/job/submit"); n != 1 || len(fake.Jobs()) != 1 {
		t.Errorf("POSTs = %d, jobs = %d; want 1 and 1 (never resend without a lookup)", n, len(fake.Jobs()))
	}
}

func TestSubmitDuplicateIsCancelled(t *testing.T) {
	// The first POST is stalled past the client timeout but still reaches
	// slurmctld later than the lookup window: the resend makes a second
	// job, and the guard cancels the one not returned.
	fake := slurmtest.NewFake(t)
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	cfg := testConfig(proxy.URL, "tok")
	cfg.RequestTimeout = 200 * time.Millisecond
	cfg.SubmitLookupWindow = 50 * time.Millisecond
	c := newClient(t, cfg)
	if _, err := c.Negotiate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// Hide the job from the lookup, then let the resend through.
	proxy.Add(
		slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward},
		slurmtest.Fault{Method: "GET", Path: "/jobs", Times: 1, Action: slurmtest.Respond, Status: 200, Body: `{"jobs":[],"errors":[],"warnings":[]}`},
	)
	res, err := c.Submit(ctxT(t), JobSpec{Name: "dup", Script: "#!/bin/sh\n"})
	if err != nil {
		t.Fatal(err)
	}
	jobs := fake.Jobs()
	if len(jobs) != 2 {
		t.Fatalf("jobs = %d, want 2 for this scenario", len(jobs))
	}
	for _, j := range jobs {
		j := j
		got, err := c.GetJob(ctxT(t), JobID(j.ID))
		if err != nil {
			t.Fatal(err)
		}
		if JobID(j.ID) == res.JobID && got.State.Base == StateCancelled {
			t.Errorf("the returned job %d was cancelled", j.ID)
		}
		if JobID(j.ID) != res.JobID && got.State.Base != StateCancelled {
			t.Errorf("duplicate job %d left %s", j.ID, got.State)
		}
	}
}

func TestSubmitVersionProbeFailureIsNotAmbiguous(t *testing.T) {
	fake := slurmtest.NewFake(t)
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	proxy.Add(slurmtest.Fault{Method: "GET", Path: "/ping", Action: slurmtest.Respond, Status: 502})
	c := newClient(t, testConfig(proxy.URL, "tok"))
	_, err := c.Submit(ctxT(t), JobSpec{Name: "p", Script: "#!/bin/sh\n"})
	if err == nil || errors.Is(err, ErrSubmitOutcomeUnknown) || !strings.Contains(err.Error(), "choosing the slurmrestd API version") {
		t.Fatalf("err = %v", err)
	}
	if proxy.Count("POST", "") != 0 || proxy.Count("GET", "/jobs") != 0 {
		t.Errorf("requests after a failed probe: %+v", proxy.Requests())
	}
}
