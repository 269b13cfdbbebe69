package workflow

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// EventFile is the record every launch leaves in the workspace, which the
// workflow uploads as job_event_<RESULT_FILENAME> and
// infx.results.collect_events joins into events.jsonl
// (inferencex-e2e/infx/results/collect_events.py@4f0503f2, FILENAME).
const EventFile = "job_event.json"

// EventSchemaVersion is event.py's SCHEMA_VERSION.
const EventSchemaVersion = 1

// JobEvent is job_event.json, schema v1, field for field as
// inferencex-e2e/infx/launch/event.py@4f0503f2 defines JobEvent: every
// field is written, null when unknown, so a consumer reads both
// launchers' records alike.
type JobEvent struct {
	SchemaVersion          int                `json:"schema_version"`
	RunID                  *string            `json:"run_id"`
	RunAttempt             *int               `json:"run_attempt"`
	ResultFilename         *string            `json:"result_filename"`
	ExpName                *string            `json:"exp_name"`
	Model                  *string            `json:"model"`
	ModelPrefix            *string            `json:"model_prefix"`
	Framework              *string            `json:"framework"`
	Precision              *string            `json:"precision"`
	SpecDecoding           *string            `json:"spec_decoding"`
	Scenario               *string            `json:"scenario"`
	Multinode              bool               `json:"multinode"`
	Conc                   *int               `json:"conc"`
	ConcList               []int              `json:"conc_list"`
	ISL                    *int               `json:"isl"`
	OSL                    *int               `json:"osl"`
	Image                  *string            `json:"image"`
	Recipe                 *string            `json:"recipe"`
	RecipeFingerprint      *string            `json:"recipe_fingerprint"`
	Runner                 *string            `json:"runner"`
	Cluster                *string            `json:"cluster"`
	SlurmJobID             *string            `json:"slurm_job_id"`
	BatchJobID             *string            `json:"batch_job_id"`
	Nodes                  *string            `json:"nodes"`
	LaunchPath             *string            `json:"launch_path"`
	Power                  *EventPower        `json:"power"`
	GoldenAcceptanceLength *float64           `json:"golden_acceptance_length"`
	EvalOnly               bool               `json:"eval_only"`
	RunEval                bool               `json:"run_eval"`
	KVOffloading           *string            `json:"kv_offloading"`
	KVOffloadBackend       *string            `json:"kv_offload_backend"`
	StartedAt              *string            `json:"started_at"`
	DurationS              *float64           `json:"duration_s"`
	Stages                 map[string]float64 `json:"stages"`
	Outcome                *string            `json:"outcome"`
	Error                  *EventError        `json:"error"`
	Artifacts              []string           `json:"artifacts"`
}

// EventPower is event.py's Power: which power paths the launch used.
type EventPower struct {
	DCGM    bool `json:"dcgm"`
	AgentX  bool `json:"agentx"`
	Adapter bool `json:"adapter"`
}

// EventError is event.py's JobError: the first failure, where and why.
type EventError struct {
	Stage     string  `json:"stage"`
	Type      string  `json:"type"`
	Message   string  `json:"message"`
	ExitCode  int     `json:"exit_code"`
	Retriable bool    `json:"retriable"`
	Evidence  *string `json:"evidence"`
}

// Outcomes event.py's Outcome takes.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// fileStamp is a top-level workspace file's modification time and size.
type fileStamp struct {
	mtime int64
	size  int64
}

// EventRecorder builds one launch's JobEvent as the launch learns facts
// and writes it once at the end (event.py's JobEventBuilder). The first
// recorded failure wins: later ones are usually its consequences.
type EventRecorder struct {
	event     JobEvent
	workspace string
	now       func() time.Time
	started   time.Time
	stage     string
	since     time.Time
	stages    map[string]time.Duration
	failure   *EventError
	before    map[string]fileStamp
}

// BeginEvent identifies the job from the workflow environment, as
// event.py's JobEventBuilder.begin does; it never fails. now is the clock
// (nil: time.Now).
func BeginEvent(env Env, now func() time.Time) *EventRecorder {
	if now == nil {
		now = time.Now
	}
	text := func(name string) *string {
		if v := env.get(name); v != "" {
			return &v
		}
		return nil
	}
	number := func(name string) *int {
		v := env.get(name)
		if !asciiDigits(v) {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil
		}
		return &n
	}
	recipe := text("SRT_RECIPE")
	if recipe == nil {
		recipe = text("CONFIG_FILE")
	}
	ev := JobEvent{
		SchemaVersion: EventSchemaVersion,
		RunID:         text("GITHUB_RUN_ID"), RunAttempt: number("GITHUB_RUN_ATTEMPT"),
		ResultFilename: text("RESULT_FILENAME"), ExpName: text("EXP_NAME"),
		Model: text("MODEL"), ModelPrefix: text("MODEL_PREFIX"), Framework: text("FRAMEWORK"),
		Precision: text("PRECISION"), SpecDecoding: text("SPEC_DECODING"), Scenario: text("SCENARIO_TYPE"),
		Multinode: env.get("IS_MULTINODE") == "true",
		Conc:      number("CONC"), ConcList: []int{},
		ISL: number("ISL"), OSL: number("OSL"), Image: text("IMAGE"),
		Recipe: recipe, RecipeFingerprint: text("RECIPE_FINGERPRINT"), Runner: text("RUNNER_NAME"),
		EvalOnly: env.get("EVAL_ONLY") == "true", RunEval: env.get("RUN_EVAL") == "true",
		KVOffloading: text("KV_OFFLOADING"), KVOffloadBackend: text("KV_OFFLOAD_BACKEND"),
		Stages: map[string]float64{}, Artifacts: []string{},
	}
	for _, w := range strings.Fields(env.get("CONC_LIST")) {
		if asciiDigits(w) {
			if n, err := strconv.Atoi(w); err == nil {
				ev.ConcList = append(ev.ConcList, n)
			}
		}
	}
	t := now()
	rec := &EventRecorder{event: ev, workspace: env.get("GITHUB_WORKSPACE"), now: now, started: t, since: t,
		stages: map[string]time.Duration{}}
	rec.before = topLevelFiles(rec.workspace)
	return rec
}

// Set changes the record's fields (cluster, job id, nodes, power, ...).
func (r *EventRecorder) Set(f func(*JobEvent)) { f(&r.event) }

// Stage starts timing name; the previous stage's time ends now. A stage
// entered twice adds up.
func (r *EventRecorder) Stage(name string) {
	r.lap()
	r.stage = name
}

// CurrentStage is the stage a failure is recorded in ("prepare" before any).
func (r *EventRecorder) CurrentStage() string {
	if r.stage == "" {
		return "prepare"
	}
	return r.stage
}

func (r *EventRecorder) lap() {
	t := r.now()
	if r.stage != "" {
		r.stages[r.stage] += t.Sub(r.since)
	}
	r.since = t
}

// Fail records a failure of kind with message in the current stage
// (stage "" ) unless one is recorded already. evidence is a log file
// ("" : none).
func (r *EventRecorder) Fail(stage, kind, message string, retriable bool, evidence string) {
	if r.failure != nil {
		return
	}
	if stage == "" {
		stage = r.CurrentStage()
	}
	e := &EventError{Stage: stage, Type: kind, Message: message, Retriable: retriable}
	if evidence != "" {
		shown := evidence
		if rel, err := filepath.Rel(r.workspace, evidence); err == nil && r.workspace != "" && !strings.HasPrefix(rel, "..") {
			shown = filepath.ToSlash(rel)
		}
		e.Evidence = &shown
	}
	r.failure = e
}

// Finish closes the record for a launch that ends with exit code rc:
// duration, stages, outcome, the error (only when rc is not 0; a failure
// is recorded as "ExitStatus" when none was), and the workspace's
// top-level files created or changed since BeginEvent.
func (r *EventRecorder) Finish(rc int) JobEvent {
	r.lap()
	ev := r.event
	started := startedAt(r.started)
	ev.StartedAt = &started
	d := round3(r.now().Sub(r.started).Seconds())
	ev.DurationS = &d
	ev.Stages = map[string]float64{}
	for name, t := range r.stages {
		ev.Stages[name] = round3(t.Seconds())
	}
	outcome := OutcomeSuccess
	ev.Error = nil
	if rc != 0 {
		outcome = OutcomeFailure
		r.Fail("", "ExitStatus", fmt.Sprintf("exited %d", rc), false, "")
		e := *r.failure
		e.ExitCode = rc
		ev.Error = &e
	}
	ev.Outcome = &outcome
	after := topLevelFiles(r.workspace)
	ev.Artifacts = []string{}
	for name, st := range after {
		if name == EventFile || strings.HasPrefix(name, atomicfile.TempPrefix) {
			continue
		}
		if prev, ok := r.before[name]; !ok || prev != st {
			ev.Artifacts = append(ev.Artifacts, name)
		}
	}
	sort.Strings(ev.Artifacts)
	return ev
}

// Write finishes the record and writes it into the workspace atomically
// (a reader sees the old file or the new one, never a part). It never
// fails the launch: a problem is returned for the caller to warn about.
// Without a workspace there is nowhere to write, as event.py.
func (r *EventRecorder) Write(rc int) (JobEvent, error) {
	ev := r.Finish(rc)
	if r.workspace == "" {
		return ev, nil
	}
	data, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return ev, fmt.Errorf("%s: %w", EventFile, err)
	}
	data = append(data, '\n')
	path := filepath.Join(r.workspace, EventFile)
	if err := atomicfile.WriteFile(path, data, atomicfile.Options{Overwrite: true}); err != nil {
		return ev, fmt.Errorf("writing %s: %w", path, err)
	}
	return ev, nil
}

func round3(s float64) float64 { return math.Round(s*1000) / 1000 }

// startedAt is started_at as event.py's record serializes a UTC datetime
// (pydantic's JSON of datetime.now(UTC), event.py@4f0503f2): whole
// microseconds, the fraction left out when it is zero, "Z" for UTC.
func startedAt(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}

// topLevelFiles are dir's regular files (not symlinks) by name, with
// their modification time and size (event.py's _files); nil when dir
// cannot be read.
func topLevelFiles(dir string) map[string]fileStamp {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := map[string]fileStamp{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out[e.Name()] = fileStamp{mtime: info.ModTime().UnixNano(), size: info.Size()}
	}
	return out
}
