package slurm

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/syncbuf"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

func TestNegotiatePicksNewestServedVersion(t *testing.T) {
	tests := []struct {
		served []string
		pin    string
		want   string
	}{
		{[]string{"v0.0.40", "v0.0.41", "v0.0.42"}, "", "v0.0.42"},
		{[]string{"v0.0.40", "v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"}, "", "v0.0.44"},
		{[]string{"v0.0.40"}, "", "v0.0.40"},
		{[]string{"v0.0.40", "v0.0.41", "v0.0.42"}, "0.0.41", "v0.0.41"},
	}
	for _, tt := range tests {
		fake := slurmtest.NewFake(t, slurmtest.WithVersions(tt.served...))
		proxy := slurmtest.NewFaultProxy(t, fake.URL)
		cfg := testConfig(proxy.URL, "tok")
		cfg.APIVersion = tt.pin
		c := newClient(t, cfg)
		if _, err := c.ListNodes(ctxT(t)); err != nil {
			t.Fatalf("served %v pin %q: %v", tt.served, tt.pin, err)
		}
		info := c.Server()
		if info.APIVersion != tt.want || info.SlurmRelease != "24.11.5" {
			t.Errorf("served %v pin %q: server = %+v, want %s and release 24.11.5", tt.served, tt.pin, info, tt.want)
		}
		if got := proxy.Count("GET", "/slurm/"+tt.want+"/nodes"); got != 1 {
			t.Errorf("served %v pin %q: %d node calls at %s, want 1", tt.served, tt.pin, got, tt.want)
		}
		if tt.pin != "" && proxy.Count("GET", "/ping") != 0 {
			t.Errorf("pinned version probed anyway: %+v", proxy.Requests())
		}
	}
}

func TestNegotiateNothingServed(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithVersions("v0.0.39"))
	c := newClient(t, testConfig(fake.URL, "tok"))
	_, err := c.ListNodes(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "serves none of the API versions v0.0.44, v0.0.43, v0.0.42, v0.0.41, v0.0.40") {
		t.Fatalf("err = %v", err)
	}

	cfg := testConfig(fake.URL, "tok")
	cfg.APIVersion = "v0.0.41"
	c = newClient(t, cfg)
	_, err = c.ListNodes(ctxT(t))
	if !IsUnsupported(err) || !strings.Contains(err.Error(), "listing nodes: slurmrestd 404: Unable find requested URL") {
		t.Fatalf("pinned unserved version: err = %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{
		{Token: "t"},
		{URL: "127.0.0.1:6820", Token: "t"},
		{URL: "http://h:1"},
		{URL: "http://h:1", Token: "t", APIVersion: "41"},
		{URL: "http://h:1", TokenCommand: []string{""}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := New(Config{URL: "http://h:1"}); !errors.Is(err, ErrNoToken) {
		t.Errorf("no token: err = %v, want ErrNoToken", err)
	}
}

func TestHeadersSent(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"job_id":5,"errors":[],"warnings":[]}`))
	}))
	defer srv.Close()
	cfg := testConfig(srv.URL, "the-token")
	cfg.User = "slurmtest"
	cfg.APIVersion = "v0.0.41"
	c := newClient(t, cfg)
	if _, err := c.Submit(ctxT(t), JobSpec{Name: "h", Script: "#!/bin/sh\n"}); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"X-Slurm-User-Token": "the-token", "X-Slurm-User-Name": "slurmtest", "Content-Type": "application/json", "Accept": "application/json"} {
		if got.Get(k) != want {
			t.Errorf("header %s = %q, want %q", k, got.Get(k), want)
		}
	}
}

func TestGetRetriesTransientFailures(t *testing.T) {
	fake := slurmtest.NewFake(t)
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	c := newClient(t, testConfig(proxy.URL, "tok"))
	res, err := c.Submit(ctxT(t), JobSpec{Name: "r", Script: "#!/bin/sh\n"})
	if err != nil {
		t.Fatal(err)
	}
	proxy.Add(
		slurmtest.Fault{Method: "GET", Path: "/job/", Times: 1, Action: slurmtest.Respond, Status: 503},
		slurmtest.Fault{Method: "GET", Path: "/job/", Times: 1, Action: slurmtest.Drop},
		slurmtest.Fault{Method: "GET", Path: "/job/", Times: 1, Action: slurmtest.Respond, Status: 500, Body: "proxy error"},
	)
	j, err := c.GetJob(ctxT(t), res.JobID)
	if err != nil {
		t.Fatalf("GetJob through 3 transient failures: %v", err)
	}
	if j.ID != res.JobID || j.State.Base != StatePending {
		t.Errorf("job = %d %s", j.ID, j.State)
	}
	if n := proxy.Count("GET", "/job/"); n != 4 {
		t.Errorf("GET job calls = %d, want 4 (3 failures + 1 success)", n)
	}
}

func TestGetGivesUpAfterRetryMax(t *testing.T) {
	fake := slurmtest.NewFake(t)
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	c := newClient(t, testConfig(proxy.URL, "tok"))
	proxy.Add(slurmtest.Fault{Method: "GET", Path: "/nodes", Action: slurmtest.Respond, Status: 502, Body: "bad gateway"})
	_, err := c.ListNodes(ctxT(t))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 502 || !strings.Contains(err.Error(), "listing nodes: slurmrestd 502: bad gateway") {
		t.Fatalf("err = %v", err)
	}
	if n := proxy.Count("GET", "/nodes"); n != 4 {
		t.Errorf("attempts = %d, want 1 + 3 retries", n)
	}
}

func TestVerdictOn500IsNotRetried(t *testing.T) {
	fake := slurmtest.NewFake(t)
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	c := newClient(t, testConfig(proxy.URL, "tok"))
	body := `{"errors":[{"description":"Failure to query nodes","error_number":2000,"error":"Something definite","source":"x"}]}`
	proxy.Add(slurmtest.Fault{Method: "GET", Path: "/nodes", Action: slurmtest.Respond, Status: 500, Body: body})
	_, err := c.ListNodes(ctxT(t))
	if err == nil || err.Error() != "listing nodes: slurmrestd 500: Something definite (Failure to query nodes)" {
		t.Fatalf("err = %v", err)
	}
	if n := proxy.Count("GET", "/nodes"); n != 1 {
		t.Errorf("attempts = %d, want 1", n)
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jwt")
	if err := os.WriteFile(path, []byte("SLURM_JWT=from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(Config{URL: "http://h:1", TokenFile: path})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "group or others") {
		t.Fatalf("world-readable token file: err = %v", err)
	}
	if strings.Contains(err.Error(), "from-file") {
		t.Fatalf("error shows the token: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	fake := slurmtest.NewFake(t, slurmtest.WithTokens("from-file"))
	cfg := testConfig(fake.URL, "")
	cfg.TokenFile = path
	c := newClient(t, cfg)
	if _, err := c.ListNodes(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// A rotated file is picked up when the server refuses the old token.
	fake.RevokeToken("from-file")
	fake.AcceptToken("rotated")
	if err := os.WriteFile(path, []byte("rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListNodes(ctxT(t)); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
}

func TestParseTokenOutput(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"SLURM_JWT=abc.def.ghi\n", "abc.def.ghi"},
		{"export SLURM_JWT=abc\n", "abc"},
		{"SLURM_JWT=\"abc\"\n", "abc"},
		{"  abc.def.ghi  \n\n", "abc.def.ghi"},
		{"noise line\nSLURM_JWT=xyz\n", "xyz"},
	}
	for _, tt := range tests {
		got, err := parseTokenOutput([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("parseTokenOutput(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "SLURM_JWT=\n", "two\nlines\n", "has space"} {
		if _, err := parseTokenOutput([]byte(bad)); err == nil {
			t.Errorf("parseTokenOutput(%q) accepted", bad)
		}
	}
}

func TestTokenExpiry(t *testing.T) {
	exp := time.Unix(1900000000, 0)
	got, ok := tokenExpiry(jwt(exp))
	if !ok || !got.Equal(exp) {
		t.Errorf("tokenExpiry = %v, %v", got, ok)
	}
	for _, bad := range []string{"", "abc", "a.b.c", "a.e30.c"} {
		if _, ok := tokenExpiry(bad); ok {
			t.Errorf("tokenExpiry(%q) found a claim", bad)
		}
	}
}

func TestExpiredTokenRefreshedOnce(t *testing.T) {
	fresh := jwt(time.Now().Add(time.Hour))
	fake := slurmtest.NewFake(t, slurmtest.WithTokens(fresh))
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	argv, runs := tokenScript(t, "SLURM_JWT="+fresh, "", 0)
	cfg := testConfig(proxy.URL, "stale-token-without-claims")
	cfg.TokenCommand = argv
	c := newClient(t, cfg)
	if _, err := c.Submit(ctxT(t), JobSpec{Name: "after-refresh", Script: "#!/bin/sh\n"}); err != nil {
		t.Fatal(err)
	}
	if runs() != 1 {
		t.Errorf("token command ran %d times, want 1", runs())
	}
	if got := proxy.Count("POST", "/job/submit"); got != 2 {
		t.Errorf("submit requests = %d, want 2 (511, then success with the fresh token)", got)
	}
	if n := len(fake.Jobs()); n != 1 {
		t.Errorf("jobs = %d, want 1", n)
	}
}

func TestExpiredClaimMintsBeforeSending(t *testing.T) {
	fresh := jwt(time.Now().Add(time.Hour))
	fake := slurmtest.NewFake(t, slurmtest.WithTokens(fresh))
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	argv, runs := tokenScript(t, fresh, "", 0)
	cfg := testConfig(proxy.URL, jwt(time.Now().Add(-time.Minute)))
	cfg.TokenCommand = argv
	c := newClient(t, cfg)
	if _, err := c.ListNodes(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if runs() != 1 {
		t.Errorf("token command ran %d times, want 1", runs())
	}
	for _, r := range proxy.Requests() {
		if r.Status == 511 {
			t.Errorf("request sent with the expired token: %+v", r)
		}
	}
}

func TestExpiredTokenWithoutCommand(t *testing.T) {
	good := jwt(time.Now().Add(time.Hour))
	fake := slurmtest.NewFake(t, slurmtest.WithTokens(good))
	expired := jwt(time.Now().Add(-time.Minute))
	c := newClient(t, testConfig(fake.URL, expired))
	_, err := c.ListNodes(ctxT(t))
	if !IsAuth(err) {
		t.Fatalf("err = %v, want an auth error", err)
	}
	want := "listing nodes: slurmrestd 511: Protocol authentication error (Failure to query nodes) (the token has expired; configure a token command to mint fresh ones)"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
}

// TestTokenNeverInErrorsOrLogs drives every path that handles a token,
// including failing ones, with debug logging on, and looks for the tokens.
func TestTokenNeverInErrorsOrLogs(t *testing.T) {
	const stale = "stale-secret-AAAAAAAAAAAAAAAAAAAA"
	fresh := "fresh-secret-BBBBBBBBBBBBBBBBBBBB"
	leakyFresh := jwt(time.Now().Add(time.Hour)) // also JWT-shaped, for redaction
	var logs syncbuf.Buffer
	var errs []error

	fake := slurmtest.NewFake(t, slurmtest.WithTokens(fresh))
	proxy := slurmtest.NewFaultProxy(t, fake.URL)

	// 1. A token command that fails and echoes a token on stderr.
	argv, _ := tokenScript(t, "", "error: cannot mint, old was "+leakyFresh, 1)
	cfg := testConfig(proxy.URL, stale)
	cfg.TokenCommand = argv
	cfg.Logger = debugLogger(&logs)
	c := newClient(t, cfg)
	_, err := c.ListNodes(ctxT(t))
	if err == nil {
		t.Fatal("a failing token command went unnoticed")
	}
	errs = append(errs, err)
	_, err = c.Ping(ctxT(t))
	errs = append(errs, err)

	// 2. A token command that works: refresh, then normal traffic, faults.
	argv, _ = tokenScript(t, "SLURM_JWT="+fresh, "", 0)
	cfg.TokenCommand = argv
	c = newClient(t, cfg)
	res, err := c.Submit(ctxT(t), JobSpec{Name: "leak", Script: "#!/bin/sh\n"})
	if err != nil {
		t.Fatal(err)
	}
	proxy.Add(slurmtest.Fault{Method: "GET", Path: "/job/", Times: 2, Action: slurmtest.Reset})
	_, err = c.GetJob(ctxT(t), res.JobID)
	errs = append(errs, err)
	_, err = c.GetJob(ctxT(t), 99999)
	errs = append(errs, err)
	_, err = c.Submit(ctxT(t), JobSpec{Name: "bad", Partition: "nope", Script: "#!/bin/sh\n"})
	errs = append(errs, err)

	// 3. No refresh possible: the plain auth failure.
	c = newClient(t, Config{URL: proxy.URL, Token: stale, Logger: debugLogger(&logs)})
	_, err = c.ListNodes(ctxT(t))
	errs = append(errs, err)

	// 4. A token file that may not be used.
	path := filepath.Join(t.TempDir(), "jwt")
	if err := os.WriteFile(path, []byte(fresh), 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{URL: proxy.URL, TokenFile: path})
	errs = append(errs, err)

	out := logs.String()
	if !strings.Contains(out, "minted a fresh slurmrestd token") || !strings.Contains(out, "slurmrestd request") {
		t.Fatalf("logs do not cover the token paths:\n%s", out)
	}
	for _, secret := range []string{stale, fresh, leakyFresh} {
		if strings.Contains(out, secret) {
			t.Errorf("a token appears in the logs:\n%s", out)
		}
		for _, e := range errs {
			if e != nil && strings.Contains(e.Error(), secret) {
				t.Errorf("a token appears in an error: %v", e)
			}
		}
	}
	if len(errs) < 6 {
		t.Fatalf("only %d errors collected", len(errs))
	}
}

func TestPing(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithTokens("good"))
	c := newClient(t, testConfig(fake.URL, "good"))
	res, err := c.Ping(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Controllers) != 1 || res.Controllers[0].Pinged != "UP" || res.Server.APIVersion != "v0.0.42" || res.Server.SlurmRelease != "24.11.5" {
		t.Errorf("ping = %+v", res)
	}

	// A bad token: slurmrestd says 200 and DOWN.
	c = newClient(t, testConfig(fake.URL, "bad"))
	_, err = c.Ping(ctxT(t))
	if !errors.Is(err, ErrControllerDown) || !strings.Contains(err.Error(), "slurmctl DOWN") || !strings.Contains(err.Error(), "token") {
		t.Fatalf("err = %v", err)
	}

	// With a way to get a fresh token, ping recovers.
	argv, runs := tokenScript(t, "good", "", 0)
	cfg := testConfig(fake.URL, "bad")
	cfg.TokenCommand = argv
	c = newClient(t, cfg)
	if _, err := c.Ping(ctxT(t)); err != nil || runs() != 1 {
		t.Fatalf("ping after refresh: %v (token command runs: %d)", err, runs())
	}
}

func TestNodesAndPartitions(t *testing.T) {
	fake := slurmtest.NewFake(t)
	c := newClient(t, testConfig(fake.URL, "tok"))
	nodes, err := c.ListNodes(ctxT(t))
	if err != nil || len(nodes) != 4 || nodes[3].Name != "n4" || nodes[3].GPUs() != 4 {
		t.Fatalf("nodes = %+v, %v", nodes, err)
	}
	parts, err := c.ListPartitions(ctxT(t))
	if err != nil || len(parts) != 1 || parts[0].Name != "debug" || parts[0].Nodes != "n[1-4]" {
		t.Fatalf("partitions = %+v, %v", parts, err)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := newClient(t, testConfig(url, "tok"))
	_, err := c.ListNodes(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "GET /slurm/v0.0.44/ping/") {
		t.Fatalf("err = %v", err)
	}
}
