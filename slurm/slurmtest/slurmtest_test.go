package slurmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/internal/tbrecord"
)

func TestEmbeddedSamplesMatchRecorded(t *testing.T) {
	dir := shareddata.Path(t, "research", "slurm-lab", "samples")
	entries, err := samples.ReadDir("samples")
	if err != nil || len(entries) < 20 {
		t.Fatalf("embedded samples: %d, %v", len(entries), err)
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if got := sample(e.Name()); !bytes.Equal(got, want) {
			t.Errorf("%s differs from the recorded sample", e.Name())
		}
	}
}

func get(t *testing.T, c *http.Client, url string) (int, string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-SLURM-USER-TOKEN", "tok")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestFakeAnswersLikeSlurmrestd(t *testing.T) {
	f := NewFake(t)
	c := &http.Client{}
	tests := []struct {
		path   string
		status int
		has    string
	}{
		{"/slurm/v0.0.42/ping/", 200, `"pinged": "UP"`},
		{"/slurm/v0.0.40/ping", 200, `"data_parser": "data_parser/v0.0.40"`},
		{"/slurm/v0.0.43/ping/", 404, "Unable find requested URL"},
		{"/slurm/v0.0.41/job/5", 404, `"error_number": 2017`},
		{"/slurm/v0.0.41/nodes/", 200, `"name": "n4"`},
		{"/slurmdb/v0.0.41/job/5", 404, "Unable find requested URL"},
	}
	for _, tt := range tests {
		status, body, err := get(t, c, f.URL+tt.path)
		if err != nil || status != tt.status || !strings.Contains(body, tt.has) {
			t.Errorf("GET %s = %d %v, want %d with %q; body:\n%.300s", tt.path, status, err, tt.status, tt.has, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, f.URL+"/slurm/v0.0.41/ping/", nil)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != 401 {
		t.Errorf("no token: %v %v", resp, err)
	}
}

func TestFakeJobLifecycle(t *testing.T) {
	f := NewFake(t, WithLifecycle(Step{State: []string{"RUNNING"}, Polls: 1}, Step{State: []string{"FAILED"}, Exit: 3}))
	c := &http.Client{}
	body := `{"job":{"name":"x","script":"#!/bin/sh\n","environment":["A=1"],"comment":"c","nodes":"2"}}`
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/slurm/v0.0.41/job/submit", strings.NewReader(body))
	req.Header.Set("X-SLURM-USER-TOKEN", "tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("submit: %v %v", resp, err)
	}
	resp.Body.Close()
	jobs := f.Jobs()
	if len(jobs) != 1 || jobs[0].Name != "x" || jobs[0].Comment != "c" {
		t.Fatalf("jobs = %+v", jobs)
	}
	url := fmt.Sprintf("%s/slurm/v0.0.41/job/%d", f.URL, jobs[0].ID)
	for _, want := range []string{`"RUNNING"`, `"FAILED"`, `"FAILED"`} {
		_, body, err := get(t, c, url)
		if err != nil || !strings.Contains(body, want) || !strings.Contains(body, `"nodes": "n[1-2]"`) {
			t.Fatalf("want %s in:\n%.400s", want, body)
		}
	}
	f.Forget(jobs[0].ID)
	if status, _, _ := get(t, c, url); status != 404 {
		t.Errorf("forgotten job: %d", status)
	}
}

func TestProxyActions(t *testing.T) {
	f := NewFake(t)
	p := NewFaultProxy(t, f.URL)
	c := &http.Client{Timeout: 300 * time.Millisecond}
	p.Add(
		Fault{Method: "GET", Path: "/ping", Times: 1, Action: Drop},
		Fault{Method: "GET", Path: "/ping", Times: 1, Action: Respond, Status: 503, Body: "busy"},
		Fault{Method: "GET", Path: "/ping", Times: 1, Action: Stall, Delay: 100 * time.Millisecond},
		Fault{Method: "GET", Path: "/ping", Times: 1, Action: StallResponse, Delay: time.Second},
		Fault{Method: "GET", Path: "/ping", Times: 1, Action: Reset},
	)
	url := p.URL + "/slurm/v0.0.42/ping/"
	// Drop: no answer. (net/http does not resend: the connection is new.)
	if _, _, err := get(t, c, url); err == nil {
		t.Error("drop: got an answer")
	}
	if status, body, err := get(t, c, url); err != nil || status != 503 || body != "busy" {
		t.Errorf("respond: %d %q %v", status, body, err)
	}
	start := time.Now()
	if status, _, err := get(t, c, url); err != nil || status != 200 || time.Since(start) < 100*time.Millisecond {
		t.Errorf("stall: %d %v after %s", status, err, time.Since(start))
	}
	if _, _, err := get(t, c, url); !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(fmt.Sprint(err), "Timeout") {
		t.Errorf("stall-response: err = %v, want a client timeout", err)
	}
	if _, _, err := get(t, &http.Client{}, url); err == nil {
		t.Error("reset: got an answer")
	}
	if status, _, err := get(t, c, url); err != nil || status != 200 {
		t.Errorf("after the faults: %d %v", status, err)
	}
	if n := p.Count("GET", "/ping"); n != 6 {
		t.Errorf("count = %d, want 6", n)
	}
	if n := p.Count("POST", "/ping"); n != 0 {
		t.Errorf("POST count = %d", n)
	}
	reqs := p.Requests()
	var actions []string
	for _, r := range reqs {
		actions = append(actions, r.Action.String())
	}
	if got := strings.Join(actions, ","); got != "drop,respond,stall,stall-response,reset,pass" {
		t.Errorf("actions = %s", got)
	}
	if !reqs[5].Delivered || reqs[3].Delivered || reqs[3].Status != 200 {
		t.Errorf("delivery bookkeeping: %+v", reqs)
	}
}

func TestClusterSkipsOrFails(t *testing.T) {
	for _, k := range []string{"SLURM_REST_URL", "SLURM_JWT", "SLURM_USER", "SLURM_PARTITION"} {
		t.Setenv(k, "")
	}
	t.Setenv("SLURM_USER", "someone")
	t.Setenv("SLURMBENCH_REQUIRE_CLUSTER", "")
	r := &tbrecord.TB{TB: t}
	Cluster(r)
	if !strings.Contains(r.SkipMsg, "[SLURM_REST_URL SLURM_JWT SLURM_PARTITION] unset") || r.FatalMsg != "" {
		t.Errorf("skipped %q failed %q", r.SkipMsg, r.FatalMsg)
	}
	t.Setenv("SLURMBENCH_REQUIRE_CLUSTER", "1")
	r = &tbrecord.TB{TB: t}
	Cluster(r)
	if r.FatalMsg == "" || r.SkipMsg != "" || !strings.Contains(r.FatalMsg, "SLURMBENCH_REQUIRE_CLUSTER=1") {
		t.Errorf("skipped %q failed %q", r.SkipMsg, r.FatalMsg)
	}
	for k, v := range map[string]string{"SLURM_REST_URL": "http://x", "SLURM_JWT": "j", "SLURM_PARTITION": "p"} {
		t.Setenv(k, v)
	}
	r = &tbrecord.TB{TB: t}
	if env := Cluster(r); env.RestURL != "http://x" || env.User != "someone" || r.FatalMsg != "" || r.SkipMsg != "" {
		t.Errorf("env = %+v, %q %q", env, r.FatalMsg, r.SkipMsg)
	}
}
