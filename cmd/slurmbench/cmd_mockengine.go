package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/mockengine"
)

// mockEnv names the environment variable that can set a mock-engine flag,
// so the driver can configure faults per process through the container env.
func mockEnv(flag string) []string {
	return []string{"SLURMBENCH_MOCK_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))}
}

// lineList collects log lines from a repeatable flag without splitting on
// commas (urfave's slice flags do, and engine errors contain commas); a
// value (or the environment variable) may hold several lines.
type lineList struct{ lines []string }

func (l *lineList) Set(v string) error {
	l.lines = append(l.lines, strings.Split(strings.TrimRight(v, "\n"), "\n")...)
	return nil
}

func (l *lineList) String() string { return strings.Join(l.lines, "\n") }

func mockEngineCommand() *cli.Command {
	var (
		o         mockengine.CommandOptions
		failLines lineList
	)
	modes := make([]string, len(mockengine.Modes))
	for i, m := range mockengine.Modes {
		modes[i] = string(m)
	}
	return &cli.Command{
		Name:      "mock-engine",
		Usage:     "run a fake OpenAI/Dynamo inference engine (for tests without GPUs)",
		UsageText: "slurmbench mock-engine --listen HOST:PORT --mode " + strings.Join(modes, "|") + " [options]",
		Description: `Serves /v1/completions, /v1/chat/completions (SSE streaming with usage) and
/v1/models with a configurable time to first token and inter-token latency.
In frontend mode /health lists registered workers like Dynamo's frontend and
/v1/* is forwarded to decode workers; prefill/decode/agg workers register with
--frontend. Faults (exit before healthy with given log lines, exit some time
after healthy, exit or hang after N requests, hang) exercise the job driver's
failure diagnosis.
Every flag can also be set through SLURMBENCH_MOCK_<FLAG> (e.g.
SLURMBENCH_MOCK_FAIL_EXIT_CODE); SLURMBENCH_MOCK_FAIL_LOG_LINE may hold
several lines separated by newlines. Stops gracefully on SIGINT/SIGTERM.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "`HOST:PORT` to serve on", Required: true, EnvVars: mockEnv("listen"), Destination: &o.Listen},
			&cli.StringFlag{Name: "mode", Usage: strings.Join(modes, ", "), Value: string(mockengine.ModeStandalone), EnvVars: mockEnv("mode"), Destination: &o.Mode},
			&cli.StringFlag{Name: "model", Usage: "served model name", Value: mockengine.DefaultModel, EnvVars: mockEnv("model"), Destination: &o.Model},
			&cli.BoolFlag{Name: "any-model", Usage: "accept requests for any model name", EnvVars: mockEnv("any-model"), Destination: &o.AnyModel},
			&cli.GenericFlag{Name: "ttft", Usage: "time to first token", EnvVars: mockEnv("ttft"), Value: duration.Var(&o.TTFT, 0, duration.Range{})},
			&cli.GenericFlag{Name: "itl", Usage: "inter-token latency", EnvVars: mockEnv("itl"), Value: duration.Var(&o.ITL, 0, duration.Range{})},
			&cli.GenericFlag{Name: "startup-delay", Usage: "simulated model load time before healthy", EnvVars: mockEnv("startup-delay"), Value: duration.Var(&o.StartupDelay, 0, duration.Range{})},
			&cli.IntFlag{Name: "default-max-tokens", Usage: "tokens to generate when a request has no max_tokens", Value: mockengine.DefaultMaxTokens, EnvVars: mockEnv("default-max-tokens"), Destination: &o.DefaultMaxTokens},
			&cli.IntFlag{Name: "eos-after", Usage: "stop requests without ignore_eos after `N` tokens (0: generate max_tokens)", EnvVars: mockEnv("eos-after"), Destination: &o.EOSAfter},
			&cli.StringFlag{Name: "answer-key", Usage: "gsm8k answer key `FILE` (JSONL of {\"question\", \"completion\"})", EnvVars: mockEnv("answer-key"), Destination: &o.AnswerKeyFile},
			&cli.StringFlag{Name: "default-answer", Usage: "completion for questions missing from the answer key", Value: mockengine.DefaultAnswer, EnvVars: mockEnv("default-answer"), Destination: &o.DefaultAnswer},
			&cli.BoolFlag{Name: "frontend-generates", Usage: "frontend: answer /v1/* itself (own --ttft/--itl) instead of forwarding to decode workers", EnvVars: mockEnv("frontend-generates"), Destination: &o.FrontendGenerates},
			&cli.StringFlag{Name: "frontend", Usage: "frontend `URL` a worker registers with", EnvVars: mockEnv("frontend"), Destination: &o.FrontendURL},
			&cli.StringFlag{Name: "advertise", Usage: "`URL` the frontend uses to reach this worker (default http://<listen>, hostname if listening on all addresses)", EnvVars: mockEnv("advertise"), Destination: &o.AdvertiseURL},
			&cli.StringFlag{Name: "namespace", Usage: "Dynamo namespace", Value: mockengine.DefaultNamespace, EnvVars: mockEnv("namespace"), Destination: &o.Namespace},
			&cli.GenericFlag{Name: "heartbeat", Usage: "worker re-registration interval", EnvVars: mockEnv("heartbeat"), Value: duration.Var(&o.HeartbeatInterval, mockengine.DefaultHeartbeatInterval, duration.Range{})},
			&cli.GenericFlag{Name: "worker-ttl", Usage: "frontend: drop a worker silent for this long", EnvVars: mockEnv("worker-ttl"), Value: duration.Var(&o.WorkerTTL, mockengine.DefaultWorkerTTL, duration.Range{})},
			&cli.DurationFlag{Name: "stats-interval", Usage: "log an sglang-style decode-batch line this often while busy (negative: never)", EnvVars: mockEnv("stats-interval"), Value: mockengine.DefaultStatsInterval, Destination: &o.StatsInterval},

			&cli.StringFlag{Name: "fail-before-healthy-after", Usage: "fault: print the fail log lines and exit this `DURATION` after start, before healthy", EnvVars: mockEnv("fail-before-healthy-after"), Destination: &o.FailBeforeHealthyAfter},
			&cli.GenericFlag{Name: "fail-log-line", Usage: "fault: a `LINE` to print when a fault exits (repeatable; newlines split lines)", EnvVars: mockEnv("fail-log-line"), Value: &failLines},
			&cli.StringFlag{Name: "fail-log-file", Usage: "fault: print this `FILE`'s lines when a fault exits (after --fail-log-line)", EnvVars: mockEnv("fail-log-file"), Destination: &o.FailLogFile},
			&cli.IntFlag{Name: "fail-exit-code", Usage: "fault: exit code of every fault that exits (0 allowed)", Value: mockengine.DefaultFailExitCode, EnvVars: mockEnv("fail-exit-code"), Destination: &o.FailExitCode},
			&cli.IntFlag{Name: "exit-after-requests", Usage: "fault: serve `N` generation requests, then exit with --fail-exit-code", EnvVars: mockEnv("exit-after-requests"), Destination: &o.Faults.ExitAfterRequests},
			&cli.GenericFlag{Name: "exit-after", Usage: "fault: exit with --fail-exit-code this `DURATION` after becoming healthy", EnvVars: mockEnv("exit-after"), Value: duration.Var(&o.Faults.ExitAfter, 0, duration.Range{})},
			&cli.BoolFlag{Name: "hang", Usage: "fault: never become healthy and answer nothing, but stay alive", EnvVars: mockEnv("hang"), Destination: &o.Faults.Hang},
			&cli.IntFlag{Name: "hang-after-requests", Usage: "fault: serve `N` generation requests, then answer nothing", EnvVars: mockEnv("hang-after-requests"), Destination: &o.Faults.HangAfterRequests},
		},
		Action: func(c *cli.Context) error {
			o.Log, o.FailLogLines = c.App.ErrWriter, failLines.lines
			return mockengine.RunCommand(c.Context, o)
		},
	}
}
