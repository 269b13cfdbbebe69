// Package token holds slurmrestd's JWT for the client: as given, read
// from a file only its owner can read, or minted by a command (scontrol
// token), refreshed when it expires or the server refuses it. Tokens never
// reach an error message: Redact blanks them.
package token

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNoToken means no token source was configured.
var ErrNoToken = errors.New("no slurmrestd token: set SLURM_JWT (or the profile's token_env), slurm.token_file or slurm.token_command")

// expirySlack is how long before its exp claim a token is replaced, so a
// request never leaves with a token that dies in flight.
const expirySlack = 10 * time.Second

// Source holds the current JWT and knows how to get a fresh one.
type Source struct {
	file    string
	command []string
	dir     string // the command's working directory
	timeout time.Duration
	log     *slog.Logger

	mu    sync.Mutex
	token string
}

// Options say where tokens come from: Token as given, else File, else
// Command (run in Dir, bounded by Timeout), which also mints a fresh one.
type Options struct {
	Token   string
	File    string
	Command []string
	Dir     string
	Timeout time.Duration
}

// New is the token source o describes; ErrNoToken when it names none.
func New(o Options, log *slog.Logger) (*Source, error) {
	ts := &Source{file: o.File, command: o.Command, dir: o.Dir, timeout: o.Timeout, log: log}
	switch {
	case strings.TrimSpace(o.Token) != "":
		ts.token = strings.TrimSpace(o.Token)
	case o.File != "":
		tok, err := ReadFile(o.File)
		if err != nil {
			return nil, err
		}
		ts.token = tok
	case len(o.Command) > 0:
		// Minted on first use, under that call's context.
	default:
		return nil, ErrNoToken
	}
	if len(o.Command) > 0 && o.Command[0] == "" {
		return nil, errors.New("token command: empty program name")
	}
	return ts, nil
}

// Current returns the token to send, minting one first when there is none
// yet or the current one has expired by its own claim.
func (ts *Source) Current(ctx context.Context) (string, error) {
	ts.mu.Lock()
	tok := ts.token
	ts.mu.Unlock()
	if tok != "" && !(ts.Expired(tok) && len(ts.command) > 0) {
		return tok, nil
	}
	if err := ts.Refresh(ctx, tok); err != nil {
		return "", err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.token, nil
}

// CanRefresh reports whether a fresh token can be had (a file or a command).
func (ts *Source) CanRefresh() bool { return ts.file != "" || len(ts.command) > 0 }

// Expired reports whether tok's exp claim is (nearly) past. Tokens without
// a readable claim are taken as valid: the server is the judge.
func (ts *Source) Expired(tok string) bool {
	exp, ok := Expiry(tok)
	return ok && time.Until(exp) < expirySlack
}

// Refresh replaces stale with a fresh token: a changed token file first
// (someone else rotates it), then the token command. Concurrent callers
// that saw the same stale token share one refresh.
func (ts *Source) Refresh(ctx context.Context, stale string) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token != stale {
		return nil
	}
	if ts.file != "" {
		tok, err := ReadFile(ts.file)
		if err != nil && len(ts.command) == 0 {
			return err
		}
		if err == nil && tok != stale && !ts.Expired(tok) {
			ts.log.Info("re-read the token file", "file", ts.file)
			ts.token = tok
			return nil
		}
	}
	if len(ts.command) == 0 {
		return fmt.Errorf("token file %s holds no newer token and no token command is configured", ts.file)
	}
	tok, err := Mint(ctx, ts.command, ts.dir, ts.timeout)
	if err != nil {
		return err
	}
	ts.token = tok
	if exp, ok := Expiry(tok); ok {
		ts.log.Info("minted a fresh slurmrestd token", "command", ts.command[0], "expires", exp.Format(time.RFC3339))
	} else {
		ts.log.Info("minted a fresh slurmrestd token", "command", ts.command[0])
	}
	return nil
}

// ReadFile reads a JWT from a file only its owner can read.
func ReadFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("token file %s is accessible by group or others (mode %04o); run: chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok, err := Parse(b)
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

// tokenPipeGrace is how long a token command's output is read after the
// command exited (a child it left behind may hold the pipes).
const tokenPipeGrace = 500 * time.Millisecond

// Mint runs argv in dir ("" = the current directory) and reads the
// token it prints. Neither its output nor the token ends up in the error:
// only the exit status and a redacted first line of stderr.
func Mint(ctx context.Context, argv []string, dir string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// A relative program path (./token.sh) is found from dir too.
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A background child the command leaves holds its output pipes open:
	// Wait would block until that child exits, past the timeout (73 s
	// measured). The command runs in its own process group, which the
	// timeout kills whole, and Wait stops reading the pipes tokenPipeGrace
	// after the command itself has exited.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = tokenPipeGrace
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) && ctx.Err() == nil {
		err = nil // it exited 0; only a child it left kept the pipes open
	}
	if err != nil {
		msg := firstLine(stderr.String())
		if msg != "" {
			msg = ": " + Redact(msg)
		}
		return "", fmt.Errorf("minting a token with %s: %w%s", argv[0], err, msg)
	}
	tok, err := Parse(stdout.Bytes())
	if err != nil {
		return "", fmt.Errorf("minting a token with %s: %w", argv[0], err)
	}
	return tok, nil
}

// Parse takes "SLURM_JWT=<token>" (scontrol token's output,
// possibly with "export ") or a bare token on one line.
func Parse(b []byte) (string, error) {
	var bare []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		line = strings.TrimPrefix(line, "export ")
		if v, ok := strings.CutPrefix(line, "SLURM_JWT="); ok {
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			if v == "" {
				return "", errors.New("SLURM_JWT= line is empty")
			}
			return v, nil
		}
		if line != "" {
			bare = append(bare, line)
		}
	}
	if len(bare) == 1 && !strings.ContainsAny(bare[0], " \t=") {
		return bare[0], nil
	}
	if len(bare) == 0 {
		return "", errors.New("no token in output (empty)")
	}
	return "", errors.New("no token in output (expected SLURM_JWT=<token> or a bare token on one line)")
}

// Expiry reads the exp claim of a JWT without verifying it.
func Expiry(tok string) (time.Time, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == "" {
		return time.Time{}, false
	}
	exp, err := claims.Exp.Float64() // an integer, or a float some issuers write
	if err != nil || math.IsNaN(exp) || exp <= 0 || exp > math.MaxInt64/2 {
		return time.Time{}, false
	}
	return time.Unix(int64(exp), 0), true
}

var jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)

// Redact replaces anything shaped like a JWT, so text from outside
// (stderr, response bodies) cannot carry a token into an error.
func Redact(s string) string { return jwtPattern.ReplaceAllString(s, "[redacted-token]") }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
