package power

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Endpoint is one node's exporter: the hostname samples are recorded under
// and the URL polled for it.
type Endpoint struct {
	Hostname string
	URL      string
}

// Settings configure one session. Durations follow the recipe's telemetry
// block (default_frequency, startup/request/collector-join timeouts).
type Settings struct {
	PowerDir        string // <log dir>/<storage_subdir>
	ResultRoot      string // what window result_path values are relative to
	JobID, RunName  string
	Interval        time.Duration
	StartupTimeout  time.Duration
	RequestTimeout  time.Duration
	JoinTimeout     time.Duration
	Required        bool
	ExporterImage   string
	ExporterPort    int
	ExporterCommand string
	ProducerVersion string
	ProducerCommit  string // empty: null in the manifest
	Endpoints       []Endpoint
	ExpectedDevices []ExpectedDevice
	ExpectedWindows []ExpectedWindow
	// Client polls the exporters; nil means a plain client. Its timeout is
	// RequestTimeout per request either way.
	Client *http.Client
	// Now is the head node's clock; nil means time.Now.
	Now func() time.Time
}

// Outcome is the terminal verdict handed back to the driver.
type Outcome struct {
	Status           string
	PublicationValid bool
	Reasons          []Reason
	// FailJob is true when the job must fail for telemetry's sake: an
	// operational failure, or a required package that is not publishable.
	FailJob bool
}

// Session owns the collector goroutine and samples.csv for one job.
type Session struct {
	set      Settings
	manifest Manifest
	expected map[DeviceKey]bool

	mu        sync.Mutex // guards everything below
	writer    *sampleWriter
	seq       int
	scrapes   int
	maxScrape *float64
	rs        reasons
	readyAt   time.Time
	ready     chan struct{}
	frozen    bool

	startedAt time.Time
	cancel    context.CancelFunc
	done      chan struct{}
	outcome   *Outcome
}

// NewSession prepares the power directory: windows/, samples.csv with its
// header, and a "starting" manifest.
func NewSession(s Settings) (*Session, error) {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Client == nil {
		s.Client = &http.Client{}
	}
	if err := os.MkdirAll(filepath.Join(s.PowerDir, WindowsDir), 0o755); err != nil {
		return nil, fmt.Errorf("creating the power directory: %w", err)
	}
	w, err := newSampleWriter(filepath.Join(s.PowerDir, SamplesFile))
	if err != nil {
		return nil, err
	}
	var commit *string
	if s.ProducerCommit != "" {
		c := s.ProducerCommit
		commit = &c
	}
	ss := &Session{
		set:      s,
		expected: map[DeviceKey]bool{},
		writer:   w,
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
		manifest: Manifest{
			SchemaVersion: SchemaVersion, Producer: Producer, ProducerVersion: s.ProducerVersion,
			ProducerGitCommit: commit, SourceMetric: PowerMetric, Unit: PowerUnit, PowerScope: PowerScope,
			TimestampSource: ClockSource, JobID: s.JobID, RunName: s.RunName,
			SampleInterval: s.Interval.Seconds(), RequestTimeout: s.RequestTimeout.Seconds(),
			Required: s.Required, StartedAt: unix(s.Now()), Status: StatusStarting,
			Exporter:        exporterIdentity(s),
			ExpectedDevices: s.ExpectedDevices, ObservedDevices: []ObservedDevice{},
			ExpectedWindows: s.ExpectedWindows, WindowValidations: []WindowValidation{},
			ArtifactErrors: []ArtifactError{}, Reasons: []Reason{},
		},
	}
	for _, d := range s.ExpectedDevices {
		ss.expected[d.Key()] = true
	}
	if err := writeManifest(ss.manifestPath(), &ss.manifest); err != nil {
		w.close()
		return nil, err
	}
	return ss, nil
}

func (s *Session) manifestPath() string { return filepath.Join(s.set.PowerDir, ManifestFile) }

// WindowDir is where the benchmark client writes its window files.
func (s *Session) WindowDir() string { return filepath.Join(s.set.PowerDir, WindowsDir) }

// RecordReason records a provider-level failure (an exporter that exited or
// could not start) without failing anything by itself.
func (s *Session) RecordReason(r Reason) {
	s.mu.Lock()
	s.rs.add(r)
	s.mu.Unlock()
}

// Start begins collecting at the configured cadence; the startup timeout
// runs from here. It returns at once: WaitReady waits for coverage, so the
// exporters can come up while the engines load.
func (s *Session) Start(ctx context.Context) error {
	s.manifest.Status = StatusRunning
	if err := writeManifest(s.manifestPath(), &s.manifest); err != nil {
		return err
	}
	s.startedAt = time.Now()
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go s.run(cctx)
	return nil
}

// WaitReady waits until one scrape covered every expected GPU, or the
// startup timeout (counted from Start) passed: then it records
// exporter_startup_timeout and returns false. Collection goes on either way.
func (s *Session) WaitReady(ctx context.Context) (bool, error) {
	deadline := time.NewTimer(time.Until(s.startedAt.Add(s.set.StartupTimeout)))
	defer deadline.Stop()
	select {
	case <-s.ready:
		return true, nil
	case <-deadline.C:
		select {
		case <-s.ready:
			return true, nil
		default:
		}
		s.RecordReason(ExporterStartupTimeout)
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// run is the collector: fixed-cadence cycles that never overlap, and one
// last cycle after stop so the final window is bracketed.
func (s *Session) run(ctx context.Context) {
	defer close(s.done)
	next := time.Now()
	for {
		s.collectOnce(ctx)
		next = next.Add(s.set.Interval)
		wait := time.Until(next)
		if wait < 0 {
			wait, next = 0, time.Now()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			s.collectOnce(ctx)
			return
		case <-t.C:
		}
	}
}

type pollResult struct {
	host     string
	rows     []SampleRow
	reasons  []Reason
	duration float64
	settled  bool
}

// collectOnce polls every endpoint concurrently under one cycle deadline and
// appends what settled in time; an endpoint that did not counts as a timeout.
func (s *Session) collectOnce(ctx context.Context) {
	s.mu.Lock()
	if s.frozen {
		s.mu.Unlock()
		return
	}
	seq := s.seq
	s.seq++
	s.scrapes++
	s.mu.Unlock()

	budget := 2*s.set.RequestTimeout + time.Duration(collectCycleGraceSeconds*float64(time.Second))
	// The last cycle runs after ctx is done (it brackets the final
	// window): each cycle is bounded by its own budget instead.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	results := make([]pollResult, len(s.set.Endpoints))
	var wg sync.WaitGroup
	for i, ep := range s.set.Endpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.poll(ctx, ep, seq)
		}()
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].host < results[j].host })

	var rows []SampleRow
	var rs reasons
	seen := map[DeviceKey]bool{}
	var longest *float64
	for _, r := range results {
		if !r.settled {
			rs.add(EndpointTimeout)
			continue
		}
		rs.add(r.reasons...)
		rows = append(rows, r.rows...)
		for _, row := range r.rows {
			seen[DeviceKey{row.Hostname, row.GPUIndex}] = true
		}
		if r.duration > 0 && (longest == nil || r.duration > *longest) {
			d := r.duration
			longest = &d
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rs.add(rs...)
	if longest != nil && (s.maxScrape == nil || *longest > *s.maxScrape) {
		s.maxScrape = longest
	}
	if s.frozen {
		return
	}
	if err := s.writer.append(rows); err != nil {
		s.rs.add(CollectorException)
		return
	}
	if len(s.expected) > 0 && s.readyAt.IsZero() && coversAll(seen, s.expected) {
		s.readyAt = time.Now()
		close(s.ready)
	}
}

func coversAll(seen, want map[DeviceKey]bool) bool {
	for k := range want {
		if !seen[k] {
			return false
		}
	}
	return true
}

// poll makes one request, timestamped at the midpoint of its round trip on
// the head node's clock.
func (s *Session) poll(ctx context.Context, ep Endpoint, seq int) pollResult {
	res := pollResult{host: ep.Hostname}
	rctx, cancel := context.WithTimeout(ctx, s.set.RequestTimeout)
	defer cancel()
	started := s.set.Now()
	t0 := time.Now()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, ep.URL, nil)
	if err != nil {
		res.settled, res.reasons = true, []Reason{EndpointHTTPError}
		return res
	}
	resp, err := s.set.Client.Do(req)
	if err != nil {
		res.settled = ctx.Err() == nil
		if rctx.Err() != nil {
			res.reasons = []Reason{EndpointTimeout}
		} else {
			res.reasons = []Reason{EndpointHTTPError}
		}
		return res
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxScrapeBytes+1))
	if err != nil {
		res.settled = ctx.Err() == nil
		res.reasons = []Reason{EndpointTimeout}
		return res
	}
	if len(body) > MaxScrapeBytes {
		// A cut scrape could end mid-number ("250" read as "25"): none of
		// it is kept.
		res.settled, res.reasons = true, []Reason{EndpointParseError}
		return res
	}
	if resp.StatusCode/100 != 2 {
		res.settled, res.reasons = true, []Reason{EndpointHTTPError}
		return res
	}
	settled := s.set.Now()
	res.settled = true
	res.duration = time.Since(t0).Seconds()
	sc := ParseScrape(string(body))
	res.reasons = sc.Reasons
	ts := (unix(started) + unix(settled)) / 2
	for _, r := range sc.Readings {
		res.rows = append(res.rows, SampleRow{TimestampUnix: ts, ScrapeSeq: seq, Hostname: ep.Hostname, GPUIndex: r.GPUIndex, GPUUUID: r.GPUUUID, PowerW: r.PowerW})
	}
	return res
}

// Stop ends collection, closes samples.csv, turns windows still running into
// interrupted (the benchmark is over when Stop is called), validates the
// persisted bytes and commits the terminal manifest. It is idempotent and
// bounded by the join timeout.
func (s *Session) Stop(interrupted bool) (Outcome, error) {
	if s.outcome != nil {
		return *s.outcome, nil
	}
	if s.cancel != nil {
		s.cancel()
		select {
		case <-s.done:
		case <-time.After(s.set.JoinTimeout):
			s.RecordReason(CollectorJoinTimeout)
		}
	}
	if interrupted {
		s.RecordReason(CollectorInterrupted)
	}
	s.mu.Lock()
	s.frozen = true
	werr := s.writer.close()
	rs := append(reasons(nil), s.rs...)
	s.manifest.ScrapeCount = s.scrapes
	s.manifest.MaxScrapeDuration = s.maxScrape
	s.mu.Unlock()
	if werr != nil {
		rs.add(CollectorException)
	}
	if _, err := ConvertRunning(s.WindowDir(), "benchmark did not reach a formal end boundary"); err != nil {
		rs.add(CollectorException)
	}

	rows, sampleReasons := ReadSamples(filepath.Join(s.set.PowerDir, SamplesFile))
	observed := DeriveObserved(rows)
	deviceReasons := ValidateDevices(s.set.ExpectedDevices, observed)
	rs.add(sampleReasons...)
	rs.add(deviceReasons...)
	validations, artifactErrs := ValidateWindows(s.set.PowerDir, s.set.ResultRoot, s.set.ExpectedWindows, s.set.ExpectedDevices, observed)
	windowsValid := len(validations) > 0
	for _, v := range validations {
		rs.add(v.Reasons...)
		windowsValid = windowsValid && v.CoverageValid
	}
	for _, e := range artifactErrs {
		rs.add(e.Reasons...)
	}

	status := StatusComplete
	switch {
	case rs.any(fatalLifecycle):
		status = StatusIncomplete
	case s.set.Required && rs.any(startupFailure):
		status = StatusFailed
	}
	valid := status == StatusComplete && len(deviceReasons) == 0 && windowsValid && len(sampleReasons) == 0 && len(artifactErrs) == 0

	stopped := unix(s.set.Now())
	s.manifest.ObservedDevices = observed
	s.manifest.SampleRowCount = len(rows)
	s.manifest.WindowValidations = validations
	s.manifest.ArtifactErrors = artifactErrs
	s.manifest.Reasons = rs.list()
	s.manifest.Status = status
	s.manifest.StoppedAt = &stopped
	s.manifest.PublicationValid = &valid
	out := Outcome{Status: status, PublicationValid: valid, Reasons: rs.list(),
		FailJob: rs.has(CollectorJoinTimeout) || (s.set.Required && !valid)}
	s.outcome = &out
	return out, writeManifest(s.manifestPath(), &s.manifest)
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// exporterIdentity records the exporter image verbatim, hashed when it is a
// local file (a squash), so the manifest says exactly what produced samples.
func exporterIdentity(s Settings) Exporter {
	e := Exporter{Image: s.ExporterImage, Port: s.ExporterPort, Command: s.ExporterCommand}
	if strings.Contains(s.ExporterImage, "://") {
		return e
	}
	f, err := os.Open(s.ExporterImage)
	if err != nil {
		return e
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return e
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err == nil {
		sum := hex.EncodeToString(h.Sum(nil))
		e.ImageSHA256 = &sum
	}
	return e
}
