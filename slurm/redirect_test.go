package slurm

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// elsewhere is a server on another port that records what reaches it.
type elsewhere struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // method, token header and body of each request
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 4096)
		n, _ := r.Body.Read(b)
		e.mu.Lock()
		e.seen = append(e.seen, r.Method+" "+r.Header.Get("X-SLURM-USER-TOKEN")+" "+string(b[:n]))
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"job_id":7,"jobs":[],"errors":[]}`))
	}))
	t.Cleanup(e.Close)
	return e
}

func redirectTo(target string, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, status)
	}
}

// TestRedirectToAnotherHostIsRefused: a 30x to another host or port, or
// from https to http, is refused with an error naming it; neither the
// token nor the job description (with the job's environment) reaches the
// other end. Go's client follows them and forwards custom headers.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	const token, secret = "sekrit-token", "HF_TOKEN=hf_sekrit"
	for _, tc := range []struct {
		name   string
		status int
		tls    bool
	}{
		{"307 to another port", http.StatusTemporaryRedirect, false},
		{"308 to another port", http.StatusPermanentRedirect, false},
		{"302 to another port", http.StatusFound, false},
		{"307 from https to http", http.StatusTemporaryRedirect, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := newElsewhere(t)
			var srv *httptest.Server
			cfg := Config{Token: token, APIVersion: "v0.0.41", Retry: RetryPolicy{Max: 2}}
			if tc.tls {
				srv = httptest.NewTLSServer(redirectTo(other.URL, tc.status))
				cfg.CAFile = writeCA(t, srv)
			} else {
				srv = httptest.NewServer(redirectTo(other.URL, tc.status))
			}
			t.Cleanup(srv.Close)
			cfg.URL = srv.URL
			c := newClient(t, cfg)
			res, err := c.Submit(ctxT(t), JobSpec{Name: "r", Script: "#!/bin/sh\n", Environment: []string{secret}})
			var re *RedirectError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), other.URL) || !strings.Contains(err.Error(), srv.URL) {
				t.Fatalf("submit: %v, want a refused redirect naming both ends", err)
			}
			if res.Attempts != 1 {
				t.Errorf("attempts = %d: a refused redirect is not sent again", res.Attempts)
			}
			if _, err := c.GetJob(ctxT(t), 1); !errors.As(err, &re) {
				t.Errorf("get job: %v, want a refused redirect", err)
			}
			other.mu.Lock()
			defer other.mu.Unlock()
			if len(other.seen) != 0 {
				t.Errorf("the other host got %q", other.seen)
			}
		})
	}
}

// writeCA writes the TLS test server's certificate as a CA file.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCAFile: a slurmrestd with a certificate from a private CA is reached
// with slurm.ca_file, and refused without it.
func TestCAFile(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jobs":[],"errors":[]}`))
	}))
	t.Cleanup(srv.Close)
	cfg := Config{URL: srv.URL, Token: "tok", APIVersion: "v0.0.41", Retry: RetryPolicy{Max: -1}}
	if _, err := newClient(t, cfg).ListJobs(ctxT(t), JobFilter{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA file: %v, want a certificate error", err)
	}
	cfg.CAFile = writeCA(t, srv)
	if _, err := newClient(t, cfg).ListJobs(ctxT(t), JobFilter{}); err != nil {
		t.Fatalf("with the CA file: %v", err)
	}
	cfg.CAFile = filepath.Join(t.TempDir(), "none.pem")
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "CA file") {
		t.Errorf("missing CA file: %v", err)
	}
}

// TestProxyOnlyWhenAsked: the environment's proxy is used only with
// UseEnvProxy; a proxy set for downloads must not see slurmrestd's token.
func TestProxyOnlyWhenAsked(t *testing.T) {
	for _, use := range []bool{false, true} {
		tr, err := newTransport(Config{UseEnvProxy: use})
		if err != nil {
			t.Fatal(err)
		}
		if (tr.Proxy != nil) != use {
			t.Errorf("UseEnvProxy=%v: proxy func set = %v", use, tr.Proxy != nil)
		}
	}
}
