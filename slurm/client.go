package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/slurmbench/slurmbench/slurm/token"

	"github.com/slurmbench/slurmbench/slurm/wire"
)

// Defaults for Config fields left zero.
const (
	DefaultRequestTimeout      = 30 * time.Second
	DefaultRetryMax            = 4
	DefaultRetryWaitMin        = 250 * time.Millisecond
	DefaultRetryWaitMax        = 4 * time.Second
	DefaultSubmitAttempts      = 3
	DefaultSubmitLookupWindow  = 30 * time.Second
	DefaultTokenCommandTimeout = 30 * time.Second
)

// maxBody bounds how much of a response is read; a /jobs listing of a few
// thousand jobs fits, a larger one fails with an error naming the limit
// (the submit-key lookup reads jobs/state instead: see jobsByKey).
const maxBody = 64 << 20

// streamTimeout bounds a streamed listing (50,000 jobs: some 450 MB).
const streamTimeout = 10 * time.Minute

// Config says how to reach slurmrestd. Only URL and one token source are
// required.
type Config struct {
	// URL is slurmrestd's base URL, e.g. http://127.0.0.1:6820.
	URL string
	// User is sent as X-SLURM-USER-NAME. Optional with user tokens (the
	// token's sun claim names the user); needed with SlurmUser/root tokens.
	User string

	// Token sources, tried in this order at New. TokenFile must not be
	// readable by group or others. TokenCommand (argv, e.g.
	// ["scontrol","token","lifespan=3600"]) mints a fresh token when the
	// server rejects the current one or its exp claim has passed; it prints
	// "SLURM_JWT=..." or the bare token.
	Token        string
	TokenFile    string
	TokenCommand []string
	// TokenCommandDir is the directory TokenCommand runs in, so a profile
	// can name a script relative to itself; "" is the current directory.
	TokenCommandDir string

	// APIVersion pins the slurmrestd API version ("v0.0.41"); "" picks the
	// newest of v0.0.44..v0.0.40 the server serves.
	APIVersion string

	// Defaults fill JobSpec fields a submit leaves empty.
	Defaults JobDefaults

	// RequestTimeout bounds one HTTP attempt (DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Retry bounds retries of GET/DELETE and of connection errors.
	Retry RetryPolicy
	// SubmitAttempts bounds how many times one Submit sends the job
	// (DefaultSubmitAttempts); a resend only follows a lookup that did not
	// find the job.
	SubmitAttempts int
	// SubmitLookupWindow bounds slurmctld's queue latency: after a submit
	// attempt failed ambiguously, the job it may have made can still appear
	// until the attempt's start + RequestTimeout + SubmitLookupWindow, and
	// it is looked for (and, if the submit gives up, cancelled) until then
	// (DefaultSubmitLookupWindow: three of slurmctld's default 10 s
	// MessageTimeout, for slurmrestd's RPC and its resend).
	SubmitLookupWindow time.Duration
	// TokenCommandTimeout bounds one run of TokenCommand.
	TokenCommandTimeout time.Duration

	// CAFile is a PEM file of CA certificates trusted for an https URL in
	// addition to the system's (a site's private CA).
	CAFile string
	// UseEnvProxy sends requests through the proxy HTTPS_PROXY, HTTP_PROXY
	// and NO_PROXY name. Off by default: slurmrestd is a cluster-internal
	// service, and a proxy set for downloads must not see its token.
	UseEnvProxy bool

	// Logger receives debug lines per request and info lines on retries
	// and token refreshes. Nil discards. Tokens are never logged.
	Logger *slog.Logger
	// Transport replaces the HTTP transport (tests); CAFile and UseEnvProxy
	// then do not apply.
	Transport http.RoundTripper
	// Commands answers in slurmrestd's place when set: Slurm's own
	// commands (slurm/cli.Transport). URL and the token sources are then
	// not used.
	Commands http.RoundTripper
}

// JobDefaults are the profile-level job settings.
type JobDefaults struct {
	Partition string
	Account   string
	TimeLimit time.Duration
}

// RetryPolicy bounds the retries of idempotent requests.
type RetryPolicy struct {
	Max     int           // retries after the first attempt (DefaultRetryMax); -1 disables
	WaitMin time.Duration // first backoff (DefaultRetryWaitMin)
	WaitMax time.Duration // backoff cap (DefaultRetryWaitMax)
}

// ServerInfo is what the client learned about the server.
type ServerInfo struct {
	URL          string `json:"url"`
	Transport    string `json:"transport"`     // "rest" (slurmrestd) or "cli" (Slurm's commands)
	APIVersion   string `json:"api_version"`   // e.g. v0.0.42
	SlurmRelease string `json:"slurm_release"` // e.g. 24.11.5
	Cluster      string `json:"cluster,omitempty"`
	// DataParser and AccountingStorage are meta.plugin fields.
	DataParser        string `json:"data_parser,omitempty"`
	AccountingStorage string `json:"accounting_storage,omitempty"`
}

// Client talks to one slurmrestd. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base *url.URL
	http *retryablehttp.Client
	// streamHTTP carries streamed listings (bounded by streamTimeout).
	streamHTTP *retryablehttp.Client
	log        *slog.Logger
	auth       *token.Source

	negotiateMu sync.Mutex // one version probe at a time
	mu          sync.Mutex
	server      ServerInfo
	accounting  int // 0 unknown, 1 served, -1 not served
}

// New checks cfg and builds a client. It makes no request: the API version
// is chosen on first use (or by Negotiate).
func New(cfg Config) (*Client, error) {
	if cfg.Commands != nil {
		// One fixed base: requests never leave the process. The commands
		// authenticate as the user running them; the placeholder token
		// only satisfies the token source and goes nowhere.
		cfg.URL, cfg.Transport, cfg.Token, cfg.TokenFile, cfg.TokenCommand = "http://slurm-commands", cfg.Commands, "-", "", nil
	}
	if cfg.URL == "" {
		return nil, errors.New("slurmrestd URL is empty")
	}
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("slurmrestd URL %q is not http(s)://host:port", cfg.URL)
	}
	if cfg.APIVersion != "" {
		v, err := normalizeVersion(cfg.APIVersion)
		if err != nil {
			return nil, err
		}
		cfg.APIVersion = v
	}
	setDefaults(&cfg)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	auth, err := newTokenSource(cfg, log)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, base: base, log: log, auth: auth}
	c.server.URL, c.server.Transport = base.String(), "rest"
	if cfg.Commands != nil {
		c.server.URL, c.server.Transport = "", "cli"
	}
	c.server.APIVersion = cfg.APIVersion
	transport := cfg.Transport
	if transport == nil {
		if transport, err = newTransport(cfg); err != nil {
			return nil, err
		}
	}
	c.http = c.newRetryClient(transport)
	c.streamHTTP = c.newRetryClient(transport)
	c.streamHTTP.HTTPClient.Timeout = max(c.cfg.RequestTimeout, streamTimeout)
	return c, nil
}

func setDefaults(cfg *Config) {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	switch {
	case cfg.Retry.Max < 0:
		cfg.Retry.Max = 0
	case cfg.Retry.Max == 0:
		cfg.Retry.Max = DefaultRetryMax
	}
	if cfg.Retry.WaitMin <= 0 {
		cfg.Retry.WaitMin = DefaultRetryWaitMin
	}
	if cfg.Retry.WaitMax < cfg.Retry.WaitMin {
		cfg.Retry.WaitMax = max(DefaultRetryWaitMax, cfg.Retry.WaitMin)
	}
	if cfg.SubmitAttempts <= 0 {
		cfg.SubmitAttempts = DefaultSubmitAttempts
	}
	if cfg.SubmitLookupWindow <= 0 {
		cfg.SubmitLookupWindow = DefaultSubmitLookupWindow
	}
	if cfg.TokenCommandTimeout <= 0 {
		cfg.TokenCommandTimeout = DefaultTokenCommandTimeout
	}
}

// Server returns what is known about the server so far: after any
// successful call it has the API version and the Slurm release.
func (c *Client) Server() ServerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server
}

// APIVersion returns the chosen API version ("" before the first call).
func (c *Client) APIVersion() string { return c.Server().APIVersion }

// request is one slurmrestd call.
type request struct {
	method string
	root   string // "slurm" (slurmctld) or "slurmdb"
	path   string // below /<root>/<version>/, e.g. "job/submit"
	query  url.Values
	body   any
	// once disables retries (submit): the caller decides what an ambiguous
	// failure means.
	once bool
	// limit bounds the response body read (maxBody when 0).
	limit int64
	// stream, when set, reads a 2xx body itself (a listing, one record at
	// a time); other answers are read and decoded as usual.
	stream func(io.Reader) error
}

// envelope is what every slurmrestd response carries besides its payload.
type envelope struct {
	Meta struct {
		Plugin struct {
			DataParser        string `json:"data_parser"`
			AccountingStorage string `json:"accounting_storage"`
		} `json:"plugin"`
		Slurm struct {
			Version struct {
				Major wire.FlexText `json:"major"`
				Minor wire.FlexText `json:"minor"`
				Micro wire.FlexText `json:"micro"`
			} `json:"version"`
			Release string `json:"release"`
			Cluster string `json:"cluster"`
		} `json:"slurm"`
	} `json:"meta"`
	Errors   []Problem `json:"errors"`
	Warnings []Problem `json:"warnings"`
	// Status is v0.0.42+'s per-job result list (DELETE job).
	Status []struct {
		Error struct {
			Code    int    `json:"code"`
			String  string `json:"string"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"status"`
}

// do runs req against the negotiated API version and decodes the payload
// into out (which may be nil).
func (c *Client) do(ctx context.Context, req request, out any) error {
	version, err := c.negotiate(ctx)
	if err != nil {
		return err
	}
	return c.doVersion(ctx, version, req, out)
}

// doVersion runs req against one API version. An auth failure is retried
// once with a fresh token when a token file or command can provide one.
func (c *Client) doVersion(ctx context.Context, version string, req request, out any) error {
	refreshed := false
	for {
		token, err := c.auth.Current(ctx)
		if err != nil {
			return &tokenError{err}
		}
		status, body, err := c.send(ctx, version, req, token)
		if err != nil {
			return err
		}
		apiErr := c.decode(req, version, status, body, out)
		if apiErr == nil {
			return nil
		}
		if IsAuth(apiErr) && !refreshed && c.auth.CanRefresh() {
			c.log.Info("slurmrestd refused the token; getting a fresh one", "method", req.method, "path", apiErr.Path, "status", status)
			if rerr := c.auth.Refresh(ctx, token); rerr != nil {
				return fmt.Errorf("%w; getting a fresh token failed: %w", apiErr, &tokenError{rerr})
			}
			refreshed = true
			continue
		}
		if IsAuth(apiErr) && c.auth.Expired(token) {
			apiErr.TokenExpired = true
		}
		return apiErr
	}
}

func (c *Client) urlFor(version string, req request) *url.URL {
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + "/" + req.root + "/" + version + "/" + req.path
	u.RawQuery = req.query.Encode()
	return &u
}

// send performs the HTTP exchange (with retries unless req.once) and returns
// the status and body. Transport errors come back as error.
func (c *Client) send(ctx context.Context, version string, req request, token string) (int, []byte, error) {
	u := c.urlFor(version, req)
	var payload any
	if req.body != nil {
		b, err := json.Marshal(req.body)
		if err != nil {
			return 0, nil, fmt.Errorf("encoding %s request: %w", req.path, err)
		}
		payload = b
	}
	if req.once {
		ctx = context.WithValue(ctx, noRetryKey{}, true)
	}
	hr, err := retryablehttp.NewRequestWithContext(ctx, req.method, u.String(), payload)
	if err != nil {
		return 0, nil, err
	}
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", "slurmbench")
	if payload != nil {
		// Without it slurmrestd answers 400 "Unable to parse query."
		hr.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		hr.Header.Set("X-SLURM-USER-TOKEN", token)
	}
	if c.cfg.User != "" {
		hr.Header.Set("X-SLURM-USER-NAME", c.cfg.User)
	}
	start := time.Now()
	hc := c.http
	if req.stream != nil {
		hc = c.streamHTTP
	}
	resp, err := hc.Do(hr)
	if err != nil && resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		c.log.Debug("slurmrestd request failed", "method", req.method, "path", u.Path, "elapsed", time.Since(start), "error", err)
		return 0, nil, fmt.Errorf("%s %s: %w", req.method, u.Path, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if req.stream != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if err := req.stream(resp.Body); err != nil {
			return 0, nil, fmt.Errorf("%s %s: %w", req.method, u.Path, err)
		}
		return resp.StatusCode, nil, nil
	}
	limit := req.limit
	if limit <= 0 {
		limit = maxBody
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: reading response: %w", req.method, u.Path, err)
	}
	if int64(len(body)) > limit {
		// A truncated listing would decode as an error or, worse, as fewer
		// jobs: refuse it, naming the limit.
		return 0, nil, fmt.Errorf("%s %s: %w", req.method, u.Path, &TooLargeError{Limit: limit})
	}
	c.log.Debug("slurmrestd request", "method", req.method, "path", u.Path, "status", resp.StatusCode, "bytes", len(body), "elapsed", time.Since(start))
	return resp.StatusCode, body, nil
}

// unwrapURLError drops *url.Error's quoted URL, which send already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// decode checks status and errors[] and fills out. It returns nil on
// success and an *APIError otherwise.
func (c *Client) decode(req request, version string, status int, body []byte, out any) *APIError {
	path := c.urlFor(version, req).Path
	apiErr := &APIError{Method: req.method, Path: path, Status: status}
	if c.cfg.Commands != nil {
		apiErr.Via = "Slurm's commands"
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		apiErr.Body = snippet(trimmed)
		if status >= 200 && status < 300 && out == nil {
			return nil
		}
		if status >= 200 && status < 300 {
			apiErr.Body = "response is not JSON: " + apiErr.Body
		}
		return apiErr
	}
	var env envelope
	if err := json.Unmarshal(trimmed, &env); err != nil {
		apiErr.Body = "undecodable response: " + err.Error()
		return apiErr
	}
	c.noteMeta(version, env)
	apiErr.Warnings = env.Warnings
	for _, p := range env.Errors {
		if p.Number != 0 || p.Error != "" || p.Description != "" {
			apiErr.Errors = append(apiErr.Errors, p)
		}
	}
	for _, s := range env.Status {
		if s.Error.Code != 0 {
			msg := s.Error.String
			if msg == "" {
				msg = s.Error.Message
			}
			apiErr.Errors = append(apiErr.Errors, Problem{Number: s.Error.Code, Error: msg})
		}
	}
	for _, w := range env.Warnings {
		c.log.Debug("slurmrestd warning", "path", path, "warning", w.String())
	}
	if status < 200 || status >= 300 || len(apiErr.Errors) > 0 {
		return apiErr
	}
	if out != nil {
		if err := json.Unmarshal(trimmed, out); err != nil {
			apiErr.Body = "undecodable response: " + err.Error()
			return apiErr
		}
	}
	return nil
}

// snippet shortens a non-JSON body for an error message.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return token.Redact(s)
}

// noteMeta records the server's Slurm release from any response.
func (c *Client) noteMeta(version string, env envelope) {
	s := env.Meta.Slurm
	release := s.Release
	if release == "" && s.Version.Major != "" {
		release = fmt.Sprintf("%s.%s.%s", s.Version.Major, s.Version.Minor, s.Version.Micro)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if release != "" {
		c.server.SlurmRelease = release
	}
	if s.Cluster != "" {
		c.server.Cluster = s.Cluster
	}
	if p := env.Meta.Plugin; p.DataParser != "" {
		c.server.DataParser = p.DataParser
		c.server.AccountingStorage = p.AccountingStorage
	}
}
