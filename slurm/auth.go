package slurm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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

// tokenError is a failure to obtain a token: no request was sent.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// IsTokenError reports whether err is a failure to obtain a token (the
// token file or command failed), as opposed to the server refusing one.
func IsTokenError(err error) bool {
	var te *tokenError
	return errors.As(err, &te) || errors.Is(err, ErrNoToken)
}

// expirySlack is how long before its exp claim a token is replaced, so a
// request never leaves with a token that dies in flight.
const expirySlack = 10 * time.Second

// tokenSource holds the current JWT and knows how to get a fresh one.
type tokenSource struct {
	file    string
	command []string
	dir     string // the command's working directory
	timeout time.Duration
	log     *slog.Logger

	mu    sync.Mutex
	token string
}

func newTokenSource(cfg Config, log *slog.Logger) (*tokenSource, error) {
	ts := &tokenSource{file: cfg.TokenFile, command: cfg.TokenCommand, dir: cfg.TokenCommandDir, timeout: cfg.TokenCommandTimeout, log: log}
	switch {
	case strings.TrimSpace(cfg.Token) != "":
		ts.token = strings.TrimSpace(cfg.Token)
	case cfg.TokenFile != "":
		tok, err := readTokenFile(cfg.TokenFile)
		if err != nil {
			return nil, err
		}
		ts.token = tok
	case len(cfg.TokenCommand) > 0:
		// Minted on first use, under that call's context.
	default:
		return nil, ErrNoToken
	}
	if len(cfg.TokenCommand) > 0 && cfg.TokenCommand[0] == "" {
		return nil, errors.New("token command: empty program name")
	}
	return ts, nil
}

// current returns the token to send, minting one first when there is none
// yet or the current one has expired by its own claim.
func (ts *tokenSource) current(ctx context.Context) (string, error) {
	ts.mu.Lock()
	tok := ts.token
	ts.mu.Unlock()
	if tok != "" && !(ts.expired(tok) && len(ts.command) > 0) {
		return tok, nil
	}
	if err := ts.refresh(ctx, tok); err != nil {
		return "", err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.token, nil
}

func (ts *tokenSource) canRefresh() bool { return ts.file != "" || len(ts.command) > 0 }

// expired reports whether tok's exp claim is (nearly) past. Tokens without
// a readable claim are taken as valid: the server is the judge.
func (ts *tokenSource) expired(tok string) bool {
	exp, ok := tokenExpiry(tok)
	return ok && time.Until(exp) < expirySlack
}

// refresh replaces stale with a fresh token: a changed token file first
// (someone else rotates it), then the token command. Concurrent callers
// that saw the same stale token share one refresh.
func (ts *tokenSource) refresh(ctx context.Context, stale string) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token != stale {
		return nil
	}
	if ts.file != "" {
		tok, err := readTokenFile(ts.file)
		if err != nil && len(ts.command) == 0 {
			return err
		}
		if err == nil && tok != stale && !ts.expired(tok) {
			ts.log.Info("re-read the token file", "file", ts.file)
			ts.token = tok
			return nil
		}
	}
	if len(ts.command) == 0 {
		return fmt.Errorf("token file %s holds no newer token and no token command is configured", ts.file)
	}
	tok, err := mintToken(ctx, ts.command, ts.dir, ts.timeout)
	if err != nil {
		return err
	}
	ts.token = tok
	if exp, ok := tokenExpiry(tok); ok {
		ts.log.Info("minted a fresh slurmrestd token", "command", ts.command[0], "expires", exp.Format(time.RFC3339))
	} else {
		ts.log.Info("minted a fresh slurmrestd token", "command", ts.command[0])
	}
	return nil
}

// readTokenFile reads a JWT from a file only its owner can read.
func readTokenFile(path string) (string, error) {
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
	tok, err := parseTokenOutput(b)
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

// tokenPipeGrace is how long a token command's output is read after the
// command exited (a child it left behind may hold the pipes).
const tokenPipeGrace = 500 * time.Millisecond

// mintToken runs argv in dir ("" = the current directory) and reads the
// token it prints. Neither its output nor the token ends up in the error:
// only the exit status and a redacted first line of stderr.
func mintToken(ctx context.Context, argv []string, dir string, timeout time.Duration) (string, error) {
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
			msg = ": " + redactJWTs(msg)
		}
		return "", fmt.Errorf("minting a token with %s: %w%s", argv[0], err, msg)
	}
	tok, err := parseTokenOutput(stdout.Bytes())
	if err != nil {
		return "", fmt.Errorf("minting a token with %s: %w", argv[0], err)
	}
	return tok, nil
}

// parseTokenOutput takes "SLURM_JWT=<token>" (scontrol token's output,
// possibly with "export ") or a bare token on one line.
func parseTokenOutput(b []byte) (string, error) {
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

// tokenExpiry reads the exp claim of a JWT without verifying it.
func tokenExpiry(tok string) (time.Time, bool) {
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
	exp, err := numberToInt(string(claims.Exp))
	if err != nil || exp <= 0 {
		return time.Time{}, false
	}
	return time.Unix(exp, 0), true
}

var jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)

// redactJWTs replaces anything shaped like a JWT, so text from outside
// (stderr, response bodies) cannot carry a token into an error.
func redactJWTs(s string) string { return jwtPattern.ReplaceAllString(s, "[redacted-token]") }

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
