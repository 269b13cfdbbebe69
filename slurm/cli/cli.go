// Package cli reaches Slurm through its own commands (sbatch, squeue,
// scontrol, sacct, scancel) on a cluster without slurmrestd. It answers
// the slurm client's requests in slurmrestd's place, as an
// http.RoundTripper (slurm.Config.Commands): since Slurm 23.02 the
// commands' --json output is printed by the same data_parser plugin
// slurmrestd answers with, so the client's decoding, retries, submit-key
// lookup, waiting and error taxonomy serve both transports, and nothing
// above the client knows which one it has.
//
// Every command is bounded: by the request's context (the client's
// RequestTimeout), by Config.Timeout, and by Config.MaxOutput bytes of
// output. A command that prints one of Slurm's communication errors is a
// transport error (the client retries a read, and looks up the job of a
// submit by its key); any other failure is an answer carrying the
// command's standard error, which the client does not retry.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/slurm"
)

// Commands is every Slurm command this transport runs.
var Commands = []string{"sbatch", "squeue", "scontrol", "sacct", "scancel"}

// DefaultMaxOutput bounds a command's output: a squeue --json of a few
// thousand jobs fits (slurmrestd's responses have the same bound).
const DefaultMaxOutput = 64 << 20

// Config says where Slurm's commands are and how they are bounded.
type Config struct {
	// Dir holds sbatch, squeue, ...; "" finds them on PATH.
	Dir string
	// Timeout bounds one command; 0 leaves it to the request's context.
	Timeout time.Duration
	// MaxOutput bounds a command's standard output (DefaultMaxOutput).
	MaxOutput int64
	// Runner runs the commands (ExecRunner when nil).
	Runner Runner
}

// Transport answers slurmrestd's requests by running Slurm's commands.
type Transport struct {
	cfg Config

	mu     sync.Mutex
	parser string // the data_parser version the commands print, e.g. v0.0.42
}

// New returns the transport for cfg.
func New(cfg Config) *Transport {
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if cfg.Runner == nil {
		cfg.Runner = ExecRunner{}
	}
	return &Transport{cfg: cfg}
}

// Available reports whether sbatch can be found, for choosing a transport
// ("auto"): in dir, or on PATH when dir is "".
func Available(dir string) (string, bool) {
	if dir != "" {
		p := filepath.Join(dir, "sbatch")
		st, err := os.Stat(p)
		return p, err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
	}
	p, err := exec.LookPath("sbatch")
	return p, err == nil
}

// route is one request the client makes, and the command that answers it.
type route struct {
	method, root string
	path         *regexp.Regexp
	answer       func(t *Transport, ctx context.Context, req *http.Request, m []string) (*http.Response, error)
}

var routes = []route{
	{http.MethodGet, "slurm", regexp.MustCompile(`^ping/?$`), (*Transport).ping},
	{http.MethodGet, "slurm", regexp.MustCompile(`^jobs/?$`), jsonCommand("squeue", "--json", "--states=all")},
	{http.MethodGet, "slurm", regexp.MustCompile(`^jobs/state/?$`), (*Transport).jobStates},
	{http.MethodGet, "slurm", regexp.MustCompile(`^job/([0-9]+)$`), jsonCommand("scontrol", "show", "job", "$1", "--json")},
	{http.MethodDelete, "slurm", regexp.MustCompile(`^job/([0-9]+)$`), (*Transport).cancel},
	{http.MethodGet, "slurm", regexp.MustCompile(`^nodes/?$`), jsonCommand("scontrol", "show", "nodes", "--json")},
	{http.MethodGet, "slurm", regexp.MustCompile(`^partitions/?$`), jsonCommand("scontrol", "show", "partitions", "--json")},
	{http.MethodGet, "slurmdb", regexp.MustCompile(`^job/([0-9]+)$`), (*Transport).accountingJob},
	{http.MethodGet, "slurmdb", regexp.MustCompile(`^jobs/?$`), (*Transport).accountingJobs},
	{http.MethodPost, "slurm", regexp.MustCompile(`^job/submit/?$`), (*Transport).submit},
}

var requestPath = regexp.MustCompile(`^/(slurm|slurmdb)/(v[0-9.]+)/(.*)$`)

// RoundTrip answers one of the client's requests. Only a CommandError
// (no answer from slurmctld) is a transport error; anything else that
// fails is an answer carrying the error, so the client does not ask
// again what cannot change (a command not installed, output that is not
// JSON).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	resp, err := t.roundTrip(req)
	var ce *CommandError
	if err != nil && !errors.As(err, &ce) {
		return failed(req, http.StatusInternalServerError, 0, err.Error()), nil
	}
	return resp, err
}

func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	m := requestPath.FindStringSubmatch(req.URL.Path)
	if m == nil {
		return plain(req, http.StatusNotFound, "not a path Slurm's commands answer"), nil
	}
	root, version, rest := m[1], m[2], m[3]
	ctx := req.Context()
	parser, err := t.parserVersion(ctx)
	if err != nil {
		return nil, err
	}
	if version != parser {
		// The client probes the newest version first: the others are not
		// served, as a slurmrestd without that plugin answers.
		return plain(req, http.StatusNotFound, fmt.Sprintf("Slurm's commands print data_parser/%s, not %s", parser, version)), nil
	}
	for _, r := range routes {
		if r.method != req.Method || r.root != root {
			continue
		}
		if sub := r.path.FindStringSubmatch(rest); sub != nil {
			return r.answer(t, ctx, req, sub)
		}
	}
	return plain(req, http.StatusNotFound, fmt.Sprintf("%s %s is not answered by Slurm's commands", req.Method, req.URL.Path)), nil
}

var parserPattern = regexp.MustCompile(`^(?:data_parser/)?(v0\.0\.[0-9]+)$`)

// parserVersion is the data_parser version the commands print, read once
// from scontrol ping --json's meta.
func (t *Transport) parserVersion(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.parser != "" {
		return t.parser, nil
	}
	res, cmd, err := t.run(ctx, Command{Argv: []string{"scontrol", "ping", "--json"}})
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		if transient(res.Stderr) {
			return "", commandError(cmd, res)
		}
		// Not a CommandError: RoundTrip answers it as a verdict, not retried.
		return "", errors.New(commandError(cmd, res).Error())
	}
	var w struct {
		Meta struct {
			Plugin struct {
				DataParser string `json:"data_parser"`
			} `json:"plugin"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(res.Stdout, &w); err != nil {
		return "", fmt.Errorf("%s: output is not JSON (Slurm before 23.02 has no --json output; slurmbench needs 23.11 or newer): %w", cmd, err)
	}
	v := parserPattern.FindStringSubmatch(w.Meta.Plugin.DataParser)
	if v == nil {
		return "", fmt.Errorf("%s: meta.plugin.data_parser %q is not data_parser/v0.0.N", cmd, w.Meta.Plugin.DataParser)
	}
	if !slices.Contains(slurm.SupportedVersions, v[1]) {
		return "", fmt.Errorf("%s prints data_parser/%s, which slurmbench does not read (it reads %s: Slurm 23.11 and newer)", cmd, v[1], strings.Join(slurm.SupportedVersions, ", "))
	}
	t.parser = v[1]
	return t.parser, nil
}

// run runs c with the command's path resolved and the transport's bounds.
func (t *Transport) run(ctx context.Context, c Command) (Result, Command, error) {
	if t.cfg.Dir != "" {
		c.Argv = append([]string{filepath.Join(t.cfg.Dir, c.Argv[0])}, c.Argv[1:]...)
	}
	if c.Limit <= 0 {
		c.Limit = t.cfg.MaxOutput
	}
	if t.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.cfg.Timeout)
		defer cancel()
	}
	res, err := t.cfg.Runner.Run(ctx, c)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return res, c, fmt.Errorf("running %s: %w", c.Argv[0], err) // it never ran: nothing reached slurmctld
	}
	if err != nil {
		return res, c, &CommandError{Command: c.String(), Err: err, Stderr: lastLines(res.Stderr)}
	}
	return res, c, nil
}

// jsonCommand answers with a command's --json output; "$1" in argv is the
// path's first match (a job id).
func jsonCommand(argv ...string) func(*Transport, context.Context, *http.Request, []string) (*http.Response, error) {
	return func(t *Transport, ctx context.Context, req *http.Request, m []string) (*http.Response, error) {
		a := make([]string, len(argv))
		for i, s := range argv {
			if s == "$1" {
				s = m[1]
			}
			a[i] = s
		}
		return t.answer(ctx, req, Command{Argv: a})
	}
}

// answer runs c and turns how it ended into a response: its output when
// it exits 0, a transport error when it printed a communication error or
// did not finish, an error answer carrying its standard error otherwise.
func (t *Transport) answer(ctx context.Context, req *http.Request, c Command) (*http.Response, error) {
	res, cmd, err := t.run(ctx, c)
	if err != nil {
		return nil, err
	}
	if res.TooLarge {
		return failed(req, http.StatusInternalServerError, 0, fmt.Sprintf("%s: output larger than the %d MiB slurmbench reads", cmd, t.cfg.MaxOutput>>20)), nil
	}
	if res.ExitCode != 0 {
		if transient(res.Stderr) {
			return nil, commandError(cmd, res)
		}
		return failed(req, http.StatusInternalServerError, errnoOf(res.Stdout), commandError(cmd, res).Error()), nil
	}
	return respond(req, http.StatusOK, "application/json", res.Stdout), nil
}

func (t *Transport) ping(ctx context.Context, req *http.Request, _ []string) (*http.Response, error) {
	return t.answer(ctx, req, Command{Argv: []string{"scontrol", "ping", "--json"}})
}

// jobStates lists every job's id and state, cheaply: squeue's own format,
// one line a job (array tasks one by one), for the submit-key lookup,
// which reads jobs in full afterwards one at a time.
func (t *Transport) jobStates(ctx context.Context, req *http.Request, _ []string) (*http.Response, error) {
	res, cmd, err := t.run(ctx, Command{Argv: []string{"squeue", "--noheader", "--array", "--states=all", "--format=%A %T"}})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 || res.TooLarge {
		return t.answerFailure(req, cmd, res)
	}
	type entry struct {
		JobID int64    `json:"job_id"`
		State []string `json:"state"`
	}
	jobs := []entry{}
	for line := range strings.Lines(string(res.Stdout)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		id, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || len(f) != 2 {
			return failed(req, http.StatusInternalServerError, 0, fmt.Sprintf("%s: line %q is not \"JOBID STATE\"", cmd, strings.TrimSpace(line))), nil //nolint:bodyclose // a response made here, which the client closes
		}
		jobs = append(jobs, entry{id, []string{f[1]}})
	}
	body, _ := json.Marshal(map[string]any{"jobs": jobs})
	return respond(req, http.StatusOK, "application/json", body), nil
}

func (t *Transport) answerFailure(req *http.Request, cmd Command, res Result) (*http.Response, error) {
	if res.TooLarge {
		return failed(req, http.StatusInternalServerError, 0, fmt.Sprintf("%s: output larger than the %d MiB slurmbench reads", cmd, t.cfg.MaxOutput>>20)), nil
	}
	if transient(res.Stderr) {
		return nil, commandError(cmd, res)
	}
	return failed(req, http.StatusInternalServerError, 0, commandError(cmd, res).Error()), nil
}

// Slurm error numbers answered on the commands' behalf (slurm/errors.go
// reads them the same way from slurmrestd).
const (
	errnoInvalidJobID = 2017
	errnoAlreadyDone  = 2021
)

var signalParam = regexp.MustCompile(`^(SIG)?[A-Z0-9+]{1,12}$`)

// cancel is scancel JOBID, or scancel --signal=SIG JOBID: like slurmrestd's
// DELETE without flags, a signal goes to the job's steps.
func (t *Transport) cancel(ctx context.Context, req *http.Request, m []string) (*http.Response, error) {
	argv := []string{"scancel"}
	if sig := req.URL.Query().Get("signal"); sig != "" {
		if !signalParam.MatchString(sig) {
			return failed(req, http.StatusBadRequest, 0, fmt.Sprintf("signal %q is not a signal name or number", sig)), nil
		}
		argv = append(argv, "--signal="+sig)
	}
	argv = append(argv, m[1])
	res, cmd, err := t.run(ctx, Command{Argv: argv})
	if err != nil {
		return nil, err
	}
	stderr := string(res.Stderr)
	switch {
	case strings.Contains(stderr, "already completing or completed"):
		// The job has ended: slurmrestd says so with errno 2021 in a 200.
		return failed(req, http.StatusOK, errnoAlreadyDone, commandError(cmd, res).Error()), nil
	case strings.Contains(stderr, "Invalid job id specified"):
		return failed(req, http.StatusNotFound, errnoInvalidJobID, commandError(cmd, res).Error()), nil
	case res.ExitCode != 0:
		return t.answerFailure(req, cmd, res)
	}
	return respond(req, http.StatusOK, "application/json", []byte(`{"errors":[],"warnings":[]}`)), nil
}

// accountingJob is sacct --json; without slurmdbd sacct says accounting is
// disabled, which the client reads as slurmrestd's missing slurmdb plugin.
func (t *Transport) accountingJob(ctx context.Context, req *http.Request, m []string) (*http.Response, error) {
	return t.sacct(ctx, req, []string{"sacct", "--json", "--jobs=" + m[1]})
}

// sacctFilters are slurmdbd's GET jobs query parameters the client sends
// (FindJobs) as sacct's options; the times are UNIX seconds there, and
// sacct reads a local date and time.
var sacctFilters = []struct {
	param, option string
	unix          bool
}{
	{"users", "--user", false},
	{"job_name", "--name", false},
	{"state", "--state", false},
	{"start_time", "--starttime", true},
	{"end_time", "--endtime", true},
}

// accountingJobs is sacct --json selecting as slurmdbd's GET jobs does;
// a parameter sacct is not given here is refused, never dropped (an
// unfiltered answer would read as a match).
func (t *Transport) accountingJobs(ctx context.Context, req *http.Request, _ []string) (*http.Response, error) {
	q := req.URL.Query()
	argv := []string{"sacct", "--json"}
	for _, f := range sacctFilters {
		v := q.Get(f.param)
		q.Del(f.param)
		if v == "" {
			continue
		}
		if f.unix {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return failed(req, http.StatusBadRequest, 0, fmt.Sprintf("%s=%q is not UNIX seconds", f.param, v)), nil
			}
			v = time.Unix(n, 0).Format("2006-01-02T15:04:05")
		}
		argv = append(argv, f.option+"="+v)
	}
	if len(q) > 0 {
		return failed(req, http.StatusBadRequest, 0, fmt.Sprintf("accounting query %s has parameters sacct is not given here", q.Encode())), nil
	}
	return t.sacct(ctx, req, argv)
}

func (t *Transport) sacct(ctx context.Context, req *http.Request, argv []string) (*http.Response, error) {
	res, cmd, err := t.run(ctx, Command{Argv: argv})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 && bytes.Contains(res.Stderr, []byte("accounting storage is disabled")) {
		return plain(req, http.StatusNotFound, commandError(cmd, res).Error()), nil
	}
	if res.ExitCode != 0 || res.TooLarge {
		return t.answerFailure(req, cmd, res)
	}
	return respond(req, http.StatusOK, "application/json", res.Stdout), nil
}

// errnoOf is the first error_number a command's --json output carries.
func errnoOf(stdout []byte) int {
	var w struct {
		Errors []struct {
			Number int `json:"error_number"`
		} `json:"errors"`
	}
	if json.Unmarshal(stdout, &w) != nil {
		return 0
	}
	for _, e := range w.Errors {
		if e.Number != 0 {
			return e.Number
		}
	}
	return 0
}

func respond(req *http.Request, status int, contentType string, body []byte) *http.Response {
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {contentType}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: req,
	}
}

func plain(req *http.Request, status int, msg string) *http.Response {
	return respond(req, status, "text/plain", []byte(msg))
}

// failed is an answer with one entry in errors[], as slurmrestd reports a
// Slurm error: the client reads it as Slurm's verdict.
func failed(req *http.Request, status, errno int, msg string) *http.Response {
	first, _, _ := strings.Cut(msg, "\n")
	body, _ := json.Marshal(map[string]any{"errors": []map[string]any{{"error_number": errno, "error": first, "description": msg}}, "warnings": []any{}})
	return respond(req, status, "application/json", body)
}

// CommandError is a Slurm command that failed without a verdict: it did
// not run to the end, or printed one of Slurm's communication errors.
type CommandError struct {
	Command  string
	ExitCode int
	Stderr   string
	Err      error // the run's own error (killed, not found), if any
}

func (e *CommandError) Error() string {
	var b strings.Builder
	b.WriteString(e.Command)
	switch {
	case e.Err != nil:
		fmt.Fprintf(&b, ": %v", e.Err)
	default:
		fmt.Fprintf(&b, ": exit status %d", e.ExitCode)
	}
	if e.Stderr != "" {
		b.WriteString(": " + e.Stderr)
	}
	return b.String()
}

func (e *CommandError) Unwrap() error { return e.Err }

func commandError(c Command, res Result) *CommandError {
	return &CommandError{Command: c.String(), ExitCode: res.ExitCode, Stderr: lastLines(res.Stderr)}
}

// lastLines is a command's standard error for a message: its last few
// lines, joined.
func lastLines(stderr []byte) string {
	lines := strings.FieldsFunc(strings.TrimSpace(string(stderr)), func(r rune) bool { return r == '\n' || r == '\r' })
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "; ")
}

// transientMessages are how Slurm's commands print the communication
// failures slurm/errors.go's communicationErrnos lists (slurmctld busy,
// unreachable, a connection cut, a timeout), and the backup controller's
// standby: the command did not get slurmctld's answer, which it may
// still give when asked again.
var transientMessages = []string{
	"Socket timed out on send/recv operation",
	"Unable to contact slurm controller",
	"Unexpected message received",
	"Communication connection failure",
	"Communication send failure",
	"Communication receive failure",
	"Communication shutdown failure",
	"Insane message length",
	"Zero Bytes were transmitted or received",
	"Incomplete packet received",
	"Resource temporarily unavailable",
	"Connection refused",
	"Connection reset by peer",
	"Connection timed out",
	"backup controller in standby mode",
	"Slurm temporarily unable to accept job",
}

func transient(stderr []byte) bool {
	s := string(stderr)
	for _, m := range transientMessages {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// IsTransient reports whether err is a command that failed for a reason
// asking again may fix.
func IsTransient(err error) bool {
	var ce *CommandError
	return errors.As(err, &ce)
}
