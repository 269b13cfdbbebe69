package slurm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// TestTokenCommandLeavingAChild: a token_command that leaves a background
// child holding its output open does not hold the call up (audit #33 row
// 8: every slurmrestd call waited for the child, 73 s past the 30 s
// timeout). A command that prints its token and exits gives the token
// while the child still runs; one that hangs is killed at the timeout
// with its child, its whole process group.
func TestTokenCommandLeavingAChild(t *testing.T) {
	for _, tt := range []struct {
		name       string
		script     string // %[1]s: the pid file
		wantToken  bool
		childAlive bool // when mintToken returns (else: killed with the command)
	}{
		{"prints, exits, child lingers", "printf 'SLURM_JWT=tok\\n'\nsleep 20 &\necho $! > %[1]s\nexit 0\n", true, true},
		{"child holds stderr only", "printf 'SLURM_JWT=tok\\n'\nsleep 20 >/dev/null &\necho $! > %[1]s\nexit 0\n", true, true},
		{"hangs with a child", "sleep 3600 &\necho $! > %[1]s\nsleep 3600\n", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			script := filepath.Join(dir, "mint.sh")
			if err := os.WriteFile(script, []byte("#!/bin/sh\n"+fmt.Sprintf(tt.script, pidFile)), 0o700); err != nil {
				t.Fatal(err)
			}
			tok, err := mintToken(context.Background(), []string{script}, "", time.Second)
			pid := readPid(t, pidFile)
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if tt.wantToken && (err != nil || tok != "tok") {
				t.Fatalf("mintToken = %q, %v; want tok", tok, err)
			}
			if !tt.wantToken && err == nil {
				t.Fatalf("mintToken = %q, want an error", tok)
			}
			if tt.childAlive && !running(pid) {
				t.Errorf("child %d had ended when mintToken returned: it waited for it", pid)
			}
			for !tt.childAlive && running(pid) {
				time.Sleep(10 * time.Millisecond) // the group's SIGKILL lands (without it: an hour)
			}
		})
	}
	t.Run("through the client", func(t *testing.T) {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "child.pid")
		script := filepath.Join(dir, "mint.sh")
		body := fmt.Sprintf("#!/bin/sh\nprintf 'SLURM_JWT=tok\\n'\nsleep 20 &\necho $! > %s\n", pidFile)
		if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
		fake := slurmtest.NewFake(t, slurmtest.InProcess())
		cfg := slowConfig(fake)
		cfg.Token, cfg.TokenCommand = "", []string{script}
		c := newClient(t, cfg)
		_, err := c.Ping(context.Background())
		pid := readPid(t, pidFile)
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		if err != nil {
			t.Fatal(err)
		}
		if !running(pid) {
			t.Errorf("the call returned only once the token command's child %d had ended", pid)
		}
	})
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// running: the process exists and is not a zombie waiting to be reaped.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
