package mockengine

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"
)

// Mode selects what the process pretends to be.
type Mode string

const (
	// ModeStandalone is a plain OpenAI server, like `python -m sglang.launch_server`
	// or `vllm serve`: /health answers 200 once loaded, /v1/models lists the model.
	ModeStandalone Mode = "standalone"
	// ModeFrontend is a Dynamo-like frontend: /health lists the registered
	// workers' instances and /v1/* is forwarded to a decode (or agg) worker.
	ModeFrontend Mode = "frontend"
	// ModePrefill, ModeDecode and ModeAgg are workers that register with a
	// frontend under the Dynamo component "prefill", "decode" and "backend".
	ModePrefill Mode = "prefill"
	ModeDecode  Mode = "decode"
	ModeAgg     Mode = "agg"
)

// Modes lists every mode, in the order --help shows them.
var Modes = []Mode{ModeFrontend, ModePrefill, ModeDecode, ModeAgg, ModeStandalone}

// IsWorker reports whether m registers with a frontend.
func (m Mode) IsWorker() bool { return m == ModePrefill || m == ModeDecode || m == ModeAgg }

// component is the Dynamo component name a worker of mode m registers under;
// srtctl counts "prefill" as P and "decode"/"backend" as D (see registry.go).
func (m Mode) component() string {
	switch m {
	case ModePrefill:
		return "prefill"
	case ModeDecode:
		return "decode"
	case ModeAgg:
		return "backend"
	}
	return ""
}

// ParseMode accepts the names in Modes.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want one of frontend, prefill, decode, agg, standalone)", s)
}

// Defaults used when an Options field is zero.
const (
	DefaultModel             = "mock-model"
	DefaultNamespace         = "dynamo"
	DefaultMaxTokens         = 16 // OpenAI's legacy completions default
	DefaultAnswer            = "I don't know."
	DefaultHeartbeatInterval = time.Second
	DefaultWorkerTTL         = 3 * time.Second
	DefaultStatsInterval     = 10 * time.Second
	DefaultFailExitCode      = 1
	// fillerToken is the text of every generated token when no answer key
	// decides the text: one word per chunk, so a client can count ITL per chunk.
	fillerToken = " tok"
)

// Options configure a Server. The zero value is a standalone server named
// DefaultModel with no latency.
type Options struct {
	Mode  Mode   // default ModeStandalone
	Model string // served model name; default DefaultModel (frontends list their workers' models)
	// AnyModel accepts requests naming any model; by default an unknown model
	// gets 404 like vLLM and Dynamo.
	AnyModel bool

	TTFT time.Duration // delay from request arrival to the first token
	ITL  time.Duration // delay between tokens
	// StartupDelay is the simulated model-load time before the server turns
	// healthy (and before a worker registers).
	StartupDelay time.Duration

	// DefaultMaxTokens applies when a request has no max_tokens; default DefaultMaxTokens.
	DefaultMaxTokens int
	// EOSAfter, when > 0, ends generation with finish_reason "stop" after this
	// many tokens for requests without ignore_eos. Zero means every request
	// generates max_tokens (unless an answer key gives a shorter text).
	EOSAfter int

	// AnswerKey maps gsm8k question text to the completion returned for it;
	// nil generates filler tokens. DefaultAnswer is returned for prompts the
	// key does not contain (default DefaultAnswer).
	AnswerKey     *AnswerKey
	DefaultAnswer string

	// FrontendGenerates makes a frontend answer /v1/* itself, with its own
	// TTFT and ITL, instead of forwarding to a decode worker; it still
	// answers 503 while no decode (or agg) worker is registered and accepts
	// only the workers' models. Forwarding doubles the CPU per token, which
	// matters when thousands of streams share a small machine.
	FrontendGenerates bool

	// FrontendURL is where a worker registers (http://host:port). Empty means
	// the worker serves requests but registers nowhere.
	FrontendURL string
	// AdvertiseURL is how the frontend reaches this worker; default
	// http://<listen address>, with the hostname when listening on all addresses.
	AdvertiseURL string
	Namespace    string // Dynamo namespace; default DefaultNamespace
	// HeartbeatInterval is how often a worker re-registers; WorkerTTL is how long
	// a frontend keeps a worker without a heartbeat.
	HeartbeatInterval time.Duration
	WorkerTTL         time.Duration

	// StatsInterval is how often a serving engine logs an sglang-style
	// "Decode batch, #running-req: ..." line while it has traffic; <0 disables.
	StatsInterval time.Duration

	Faults Faults

	// Log receives timestamped log lines and the fault lines; default os.Stderr.
	Log io.Writer
}

// Faults inject the failures the job driver must diagnose. At most one of
// FailBeforeHealthy, Hang is honoured (in that order); the others apply once
// healthy, and the first to fire wins.
type Faults struct {
	// FailBeforeHealthy prints LogLines and ends Serve with ExitError
	// FailAfter after start, before the server turns healthy or registers.
	FailBeforeHealthy bool
	FailAfter         time.Duration
	// LogLines are printed verbatim (no timestamp) to Log when a fault that
	// exits fires; empty means one generic line.
	LogLines []string
	// ExitCode is the exit code of every fault that exits, used as given: 0
	// is a fault too (an engine that exits 0 must still be noticed). The
	// command's --fail-exit-code defaults to DefaultFailExitCode.
	ExitCode int

	// ExitAfterRequests > 0 serves that many generation requests, then ends
	// Serve with ExitError (a crash: connections are cut, no deregistration).
	// Requests arriving after the Nth are held until the exit.
	ExitAfterRequests int
	// ExitAfter > 0 ends Serve with ExitError that long after the server
	// turned healthy (a worker dying after the health gate, with or without
	// traffic). Like ExitAfterRequests, a crash.
	ExitAfter time.Duration
	// Hang never turns healthy: every HTTP request blocks, a worker never
	// registers, but the process stays alive.
	Hang bool
	// HangAfterRequests > 0 serves that many generation requests, then blocks
	// every later HTTP request. A worker keeps its heartbeat (the runtime of a
	// hung engine keeps its lease), so it stays listed.
	HangAfterRequests int
}

// withDefaults returns o with zero fields filled and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.Mode == "" {
		o.Mode = ModeStandalone
	}
	if _, err := ParseMode(string(o.Mode)); err != nil {
		return o, err
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.DefaultMaxTokens == 0 {
		o.DefaultMaxTokens = DefaultMaxTokens
	}
	if o.DefaultAnswer == "" {
		o.DefaultAnswer = DefaultAnswer
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.WorkerTTL == 0 {
		o.WorkerTTL = DefaultWorkerTTL
	}
	if o.StatsInterval == 0 {
		o.StatsInterval = DefaultStatsInterval
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	var errs []error
	for name, d := range map[string]time.Duration{
		"ttft": o.TTFT, "itl": o.ITL, "startup delay": o.StartupDelay,
		"heartbeat interval": o.HeartbeatInterval, "worker ttl": o.WorkerTTL,
		"fail-after": o.Faults.FailAfter, "exit-after": o.Faults.ExitAfter,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative (got %s)", name, d))
		}
	}
	if o.DefaultMaxTokens < 0 || o.EOSAfter < 0 || o.Faults.ExitAfterRequests < 0 || o.Faults.HangAfterRequests < 0 {
		errs = append(errs, errors.New("token and request counts must not be negative"))
	}
	if o.Faults.ExitCode < 0 || o.Faults.ExitCode > 255 {
		errs = append(errs, fmt.Errorf("exit code %d is outside 0..255", o.Faults.ExitCode))
	}
	for _, u := range []struct{ name, v string }{{"frontend URL", o.FrontendURL}, {"advertise URL", o.AdvertiseURL}} {
		if u.v == "" {
			continue
		}
		parsed, err := url.Parse(u.v)
		if err != nil || parsed.Scheme == "" || parsed.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q: want http://host:port", u.name, u.v))
		}
	}
	return o, errors.Join(errs...)
}
