package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
)

// clock is a fake clock that moves by step on every reading.
func clock(step time.Duration) func() time.Time {
	t := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	return func() time.Time {
		now := t
		t = t.Add(step)
		return now
	}
}

// readEvent reads job_event.json as a generic object, so the test sees
// exactly the keys written.
func readEvent(t *testing.T, ws string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, EventFile))
	if err != nil {
		t.Fatalf("no %s: %v", EventFile, err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", EventFile, err)
	}
	return m
}

// eventKeys are event.py's JobEvent fields, all of which are written.
var eventKeys = []string{"schema_version", "run_id", "run_attempt", "result_filename", "exp_name", "model", "model_prefix",
	"framework", "precision", "spec_decoding", "scenario", "multinode", "conc", "conc_list", "isl", "osl", "image", "recipe",
	"recipe_fingerprint", "runner", "cluster", "slurm_job_id", "batch_job_id", "nodes", "launch_path", "power",
	"golden_acceptance_length", "eval_only", "run_eval", "kv_offloading", "kv_offload_backend", "started_at", "duration_s",
	"stages", "outcome", "error", "artifacts"}

type fakeLaunch struct {
	got   launch.RunOptions
	plan  *plan.Plan
	prof  *profile.Profile
	res   *runner.Result
	err   error
	stage func(ws string) // writes what the run would stage
}

func (f *fakeLaunch) run(_ context.Context, o launch.RunOptions) error {
	f.got = o
	if f.plan == nil {
		return f.err
	}
	o.Hooks.Planned(f.plan, f.prof)
	o.Hooks.Submitted(4242)
	o.Hooks.Phase(rundir.PhaseHealth)
	o.Hooks.Phase(rundir.PhaseBenchmark)
	if f.stage != nil {
		f.stage(o.Stage.StageDir)
	}
	o.Hooks.Phase(rundir.PhaseDone)
	o.Hooks.Done(f.plan, f.res, f.err)
	return f.err
}

func resolved(cluster, cpu string) Resolver {
	return ResolverFunc(func(_ context.Context, r *Request) (Resolution, error) {
		return Resolution{Cluster: cluster, CPUSource: cpu, Plan: func(o *launch.PlanOptions) {
			o.Profile, o.Recipe = "/p/"+cluster+".toml", "/bound/"+r.Recipe()
		}}, nil
	})
}

func TestRun(t *testing.T) {
	healthErr := exitcode.Errorf(exitcode.Health, "workers not healthy")
	tests := []struct {
		name     string
		env      func(ws string) Env
		resolver Resolver
		launch   *fakeLaunch
		wantCode exitcode.Code
		check    func(t *testing.T, ws string, ev map[string]any, f *fakeLaunch, ghEnv string)
	}{
		{
			name: "a bad environment still leaves its record",
			env: func(ws string) Env {
				return with(multinodeEnv(), "GITHUB_WORKSPACE", ws, "IMAGE", "<unset>", "CONC_LIST", "4 4")
			},
			resolver: resolved("gb300-nv", "acpi"), launch: &fakeLaunch{}, wantCode: exitcode.Config,
			check: func(t *testing.T, ws string, ev map[string]any, f *fakeLaunch, _ string) {
				e := ev["error"].(map[string]any)
				if ev["outcome"] != "failure" || e["stage"] != "prepare" || e["type"] != "RequestError" || e["exit_code"] != 2.0 {
					t.Errorf("error %v", e)
				}
				if msg := e["message"].(string); !strings.Contains(msg, "IMAGE") || !strings.Contains(msg, "CONC_LIST") {
					t.Errorf("message %q names neither IMAGE nor CONC_LIST", msg)
				}
				if f.got.Plan.JobName != "" {
					t.Error("launched despite the bad environment")
				}
			},
		},
		{
			name: "no cluster for the runner",
			env:  func(ws string) Env { return with(multinodeEnv(), "GITHUB_WORKSPACE", ws) },
			resolver: ResolverFunc(func(context.Context, *Request) (Resolution, error) {
				return Resolution{}, errors.New("runner in two cluster labels")
			}),
			launch: &fakeLaunch{}, wantCode: exitcode.Config,
			check: func(t *testing.T, _ string, ev map[string]any, _ *fakeLaunch, _ string) {
				e := ev["error"].(map[string]any)
				if e["type"] != "ClusterError" || !strings.Contains(e["message"].(string), "two cluster labels") || ev["launch_path"] != "srt-multi" {
					t.Errorf("event %v", ev)
				}
			},
		},
		{
			name: "a power row that succeeds",
			env: func(ws string) Env {
				return with(multinodeEnv(), "GITHUB_WORKSPACE", ws, "RUN_EVAL", "true", "EVAL_X", "1", "GITHUB_RUN_ID", "99", "GITHUB_RUN_ATTEMPT", "2")
			},
			resolver: resolved("gb300-nv", "acpi"),
			launch: &fakeLaunch{plan: &plan.Plan{Telemetry: &plan.Telemetry{ExporterImage: "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0"}},
				res: &runner.Result{JobID: 4242, Job: slurm.Job{Nodes: "n[1-3]"}},
				stage: func(ws string) {
					_ = os.WriteFile(filepath.Join(ws, "RF_x_conc4_gpus_8.json"), []byte("{}"), 0o644)
					_ = os.MkdirAll(filepath.Join(ws, "LOGS", "power"), 0o755)
				}},
			check: func(t *testing.T, ws string, ev map[string]any, f *fakeLaunch, ghEnv string) {
				o := f.got
				if o.Plan.JobName != "inferencex-gb300-nv_07" || o.Stage.StageDir != ws || o.Stage.ResultFilename != "dsv4_8k1k_fp4_recipe-abc" || !o.Stage.Overwrite {
					t.Errorf("launch options %+v %+v", o.Plan, o.Stage)
				}
				if o.Plan.Profile != "/p/gb300-nv.toml" || o.Plan.Recipe != "/bound/"+multinodeEnv()["SRT_RECIPE"] || o.Plan.Conc != "4 64 512" || o.Plan.RunEval != "true" {
					t.Errorf("plan options %+v", o.Plan)
				}
				if len(o.Plan.Overrides) != 2 || !strings.Contains(o.Plan.Overrides[1].String(), `"EVAL_X"`) {
					t.Errorf("eval overrides %v", o.Plan.Overrides)
				}
				if ev["outcome"] != "success" || ev["error"] != nil || ev["slurm_job_id"] != "4242" || ev["nodes"] != "n[1-3]" || ev["cluster"] != "gb300-nv" {
					t.Errorf("event %v", ev)
				}
				if ev["run_id"] != "99" || ev["run_attempt"] != 2.0 || ev["power"].(map[string]any)["dcgm"] != true {
					t.Errorf("event identity %v %v %v", ev["run_id"], ev["run_attempt"], ev["power"])
				}
				stages := ev["stages"].(map[string]any)
				for _, s := range []string{"prepare", "queue_wait", "health", "benchmark", "collect"} {
					if _, ok := stages[s]; !ok {
						t.Errorf("stages %v lack %s", stages, s)
					}
				}
				arts := ev["artifacts"].([]any)
				for _, want := range []string{"RF_x_conc4_gpus_8.json", SrtSlurmStamp, PowerProducerStamp} {
					if !slices.Contains(arts, any(want)) {
						t.Errorf("artifacts %v lack %s", arts, want)
					}
				}
				if slices.Contains(arts, any("old.json")) {
					t.Errorf("artifacts %v list a file the launch did not touch", arts)
				}
				if ghEnv != "POWER_EXPECTED_CPU_SOURCE=acpi\n" {
					t.Errorf("GITHUB_ENV %q", ghEnv)
				}
				for _, p := range []string{PowerProducerStamp, filepath.Join("LOGS", "power", PowerProducerStamp), SrtSlurmStamp} {
					if b, err := os.ReadFile(filepath.Join(ws, p)); err != nil || string(b) != "c0ffee\n" {
						t.Errorf("%s: %q, %v", p, b, err)
					}
				}
				for _, p := range []string{ExporterProvenanceFile, filepath.Join("LOGS", "power", ExporterProvenanceFile)} {
					if b, err := os.ReadFile(filepath.Join(ws, p)); err != nil || string(b) != "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0\n" {
						t.Errorf("%s: %q, %v", p, b, err)
					}
				}
			},
		},
		{
			name:     "the cluster and its CPU power source from the runners.yaml record",
			env:      func(ws string) Env { return with(multinodeEnv(), "GITHUB_WORKSPACE", ws) },
			resolver: resolved("", ""),
			launch: &fakeLaunch{plan: &plan.Plan{Telemetry: &plan.Telemetry{}}, res: &runner.Result{JobID: 9},
				prof: &profile.Profile{Record: &runners.Resolved{Cluster: &runners.Cluster{ID: "gb300-nv",
					Slurm: runners.Slurm{SrtSlurm: &runners.SrtSlurm{PowerTelemetry: &runners.PowerTelemetry{CPUSource: "acpi"}}}}}}},
			check: func(t *testing.T, _ string, ev map[string]any, _ *fakeLaunch, ghEnv string) {
				if ev["cluster"] != "gb300-nv" || ghEnv != "POWER_EXPECTED_CPU_SOURCE=acpi\n" {
					t.Errorf("cluster %v, GITHUB_ENV %q", ev["cluster"], ghEnv)
				}
			},
		},
		{
			name:     "a row without power that fails in the job",
			env:      func(ws string) Env { return with(multinodeEnv(), "GITHUB_WORKSPACE", ws) },
			resolver: resolved("b200-nscale", "acpi"),
			launch: &fakeLaunch{plan: &plan.Plan{}, err: healthErr,
				res: &runner.Result{JobID: 4242, Outcome: rundir.Outcome{Phase: rundir.PhaseHealth, Class: "health_timeout", Message: "prefill_0 never healthy", Log: "/x/logs/prefill_0.log"}}},
			wantCode: exitcode.Health,
			check: func(t *testing.T, ws string, ev map[string]any, f *fakeLaunch, ghEnv string) {
				e := ev["error"].(map[string]any)
				if e["stage"] != "health" || e["type"] != "health_timeout" || e["message"] != "prefill_0 never healthy" || e["exit_code"] != 6.0 || e["evidence"] != "/x/logs/prefill_0.log" || e["retriable"] != false {
					t.Errorf("error %v", e)
				}
				if ghEnv != "POWER_EXPECTED_CPU_SOURCE=\n" {
					t.Errorf("GITHUB_ENV %q", ghEnv)
				}
				if len(f.got.Plan.Overrides) != 0 {
					t.Errorf("no eval asked, overrides %v", f.got.Plan.Overrides)
				}
				if _, err := os.Stat(filepath.Join(ws, PowerProducerStamp)); err == nil {
					t.Error("a power stamp without power")
				}
			},
		},
		{
			name: "a single-node point is staged under RESULT_FILENAME.json, its eval at its CONC",
			env: func(ws string) Env {
				return with(singleNodeEnv(), "GITHUB_WORKSPACE", ws, "RUN_EVAL", "true", "EVAL_CONC", "<unset>")
			},
			resolver: resolved("h200-dgxc", ""),
			launch: &fakeLaunch{plan: &plan.Plan{}, res: &runner.Result{JobID: 7},
				stage: func(ws string) {
					_ = os.WriteFile(filepath.Join(ws, "dsv4_8k1k_fp4_recipe-abc_sa-bench_isl_8192_osl_1024_conc4_gpus_8.json"), []byte(`{"x":1}`), 0o644)
				}},
			check: func(t *testing.T, ws string, ev map[string]any, f *fakeLaunch, ghEnv string) {
				b, err := os.ReadFile(filepath.Join(ws, "dsv4_8k1k_fp4_recipe-abc.json"))
				if err != nil || string(b) != `{"x":1}` {
					t.Errorf("single-node result: %q, %v", b, err)
				}
				if ev["launch_path"] != "srt-single" || ghEnv != "" || f.got.Plan.Conc != "4" || f.got.Plan.EvalConc != "4" {
					t.Errorf("launch path %v, GITHUB_ENV %q, conc %q, eval conc %q", ev["launch_path"], ghEnv, f.got.Plan.Conc, f.got.Plan.EvalConc)
				}
				if len(f.got.Plan.Overrides) != 2 || !strings.Contains(f.got.Plan.Overrides[0].String(), "single_node/srt_eval.sh") {
					t.Errorf("single-node eval %v", f.got.Plan.Overrides[0])
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "old.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			ghEnvPath := filepath.Join(dir, "github-env")
			env := tt.env(ws)
			env["GITHUB_ENV"] = ghEnvPath
			var stderr bytes.Buffer
			err := Run(t.Context(), RunOptions{IO: launch.IO{Stdout: &bytes.Buffer{}, Stderr: &stderr, Commit: "c0ffee"},
				Env: env, Resolver: tt.resolver, Launch: tt.launch.run, Now: clock(time.Second)})
			if got := exitcode.Of(err); err != nil && got != tt.wantCode || err == nil && tt.wantCode != 0 {
				t.Fatalf("Run: %v (code %d), want code %d", err, got, tt.wantCode)
			}
			ev := readEvent(t, ws)
			for _, k := range eventKeys {
				if _, ok := ev[k]; !ok {
					t.Errorf("%s lacks %q", EventFile, k)
				}
			}
			if len(ev) != len(eventKeys) || ev["schema_version"] != 1.0 || ev["runner"] != "gb300-nv_07" {
				t.Errorf("%s: %d keys, schema %v, runner %v", EventFile, len(ev), ev["schema_version"], ev["runner"])
			}
			if ev["started_at"] != "2026-12-06T04:00:00Z" || ev["duration_s"].(float64) <= 0 {
				t.Errorf("started_at %v duration %v", ev["started_at"], ev["duration_s"])
			}
			leftovers, _ := filepath.Glob(filepath.Join(ws, ".slurmbench-tmp-*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
			gh, _ := os.ReadFile(ghEnvPath)
			tt.check(t, ws, ev, tt.launch, string(gh))
		})
	}
}

// TestEventRecorder: the first failure wins, a failing exit with no
// recorded failure is ExitStatus, a success carries no error even after a
// failure was recorded, stages add up, and without a workspace nothing is
// written.
func TestEventRecorder(t *testing.T) {
	rec := BeginEvent(Env{"CONC_LIST": "4 x 8", "CONC": "16", "ISL": "-1"}, clock(500*time.Millisecond))
	rec.Stage("prepare")
	rec.Stage("run")
	rec.Stage("prepare")
	rec.Fail("", "First", "one", true, "")
	rec.Fail("", "Second", "two", false, "")
	ev := rec.Finish(7)
	if ev.Error == nil || ev.Error.Type != "First" || ev.Error.Stage != "prepare" || ev.Error.ExitCode != 7 || !ev.Error.Retriable {
		t.Errorf("error %+v", ev.Error)
	}
	if !slices.Equal(ev.ConcList, []int{4, 8}) || *ev.Conc != 16 || ev.ISL != nil {
		t.Errorf("conc_list %v conc %v isl %v", ev.ConcList, ev.Conc, ev.ISL)
	}
	if ev.Stages["prepare"] != 1.0 || ev.Stages["run"] != 0.5 {
		t.Errorf("stages %v", ev.Stages)
	}
	if ev, err := rec.Write(0); err != nil || ev.Error != nil || *ev.Outcome != OutcomeSuccess {
		t.Errorf("success: %+v, %v", ev, err)
	}
	quiet := BeginEvent(Env{}, nil)
	if ev := quiet.Finish(3); ev.Error.Type != "ExitStatus" || ev.Error.Message != "exited 3" || ev.Error.Stage != "prepare" {
		t.Errorf("no failure recorded: %+v", ev.Error)
	}
}

// TestRunnersResolver: the row's recipe must be in the workspace (exit 2
// naming the variable), and the plan is told the runner, the point's
// framework and model prefix (for the record's squash locations), the
// operator's profile and the recipe file with its selector.
func TestRunnersResolver(t *testing.T) {
	ws := t.TempDir()
	rel := "benchmarks/multi_node/srt-slurm-recipes/mock/a.yaml"
	if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, rel), []byte("name: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req, err := ParseRequest(with(multinodeEnv(), "GITHUB_WORKSPACE", ws, "SRT_RECIPE", rel+":override_x"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Runners{Profile: "/p.toml"}.Resolve(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var o launch.PlanOptions
	res.Plan(&o)
	if o.Profile != "/p.toml" || o.Runner != "gb300-nv_07" || o.Framework != "dynamo-sglang" || o.ModelPrefix != "dsv4" ||
		o.Recipe != filepath.Join(ws, rel)+":override_x" {
		t.Errorf("plan options %+v", o)
	}
	for _, tt := range []struct {
		env  []string
		name string
	}{
		{[]string{"SRT_RECIPE", "recipes/mock/missing.yaml"}, "SRT_RECIPE"},
		{[]string{"EVAL_ONLY", "true", "EVAL_SRT_RECIPE", "recipes/mock/eval.yaml"}, "EVAL_SRT_RECIPE"},
	} {
		req, err := ParseRequest(with(multinodeEnv(), append([]string{"GITHUB_WORKSPACE", ws}, tt.env...)...))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Runners{}.Resolve(t.Context(), req)
		if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("%v: %v, want exit 2 naming %s", tt.env, err, tt.name)
		}
	}
}
