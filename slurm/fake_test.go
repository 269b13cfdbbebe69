package slurm

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/syncbuf"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// testConfig is a Config with fast retries for tests against a fake.
func testConfig(url, token string) Config {
	return Config{
		URL:                url,
		Token:              token,
		Retry:              RetryPolicy{Max: 3, WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond},
		RequestTimeout:     2 * time.Second,
		SubmitLookupWindow: 200 * time.Millisecond,
		Defaults:           JobDefaults{Partition: "debug"},
	}
}

func newClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// jwt builds an unsigned JWT whose claims the client can read.
func jwt(exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc([]byte(fmt.Sprintf(`{"exp":%d,"iat":%d,"sun":"slurmtest"}`, exp.Unix(), exp.Add(-time.Hour).Unix()))) + ".c2lnbmF0dXJl"
}

// tokenScript writes an executable that prints out (and, with stderr, a
// line on stderr) and exits with code; it appends one line to a counter
// file per run. It returns the argv and a func reporting the run count.
func tokenScript(t *testing.T, out, stderr string, code int) ([]string, func() int) {
	t.Helper()
	dir := t.TempDir()
	count := filepath.Join(dir, "runs")
	script := filepath.Join(dir, "mint.sh")
	body := fmt.Sprintf("#!/bin/sh\necho run >> %q\nprintf '%%s\\n' %q\n", count, out)
	if stderr != "" {
		body += fmt.Sprintf("printf '%%s\\n' %q >&2\n", stderr)
	}
	body += fmt.Sprintf("exit %d\n", code)
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return []string{script, "lifespan=3600"}, func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "run")
	}
}

func debugLogger(w *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var _ = slurmtest.NewFake
