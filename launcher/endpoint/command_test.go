package endpoint

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/job/steps"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// TestCommandsChooseOneMode: with --url a plan's flags are refused by
// name; without it the plan's step runs (and refuses its own missing
// flags); a negative --warmups is refused before anything is measured.
func TestCommandsChooseOneMode(t *testing.T) {
	quiet := launch.IO{Stdout: io.Discard, Stderr: io.Discard}
	warm := -1
	for _, tt := range []struct {
		name      string
		bench     BenchCommandOptions
		eval      EvalCommandOptions
		want      string
		benchOnly bool
	}{
		{"url and plan",
			BenchCommandOptions{URL: BenchOptions{IO: quiet, URLBench: steps.URLBench{URL: "http://h:1"}}, Step: steps.BenchCommandOptions{PlanFile: "p.json"}},
			EvalCommandOptions{URL: EvalOptions{IO: quiet, URLEval: steps.URLEval{URL: "http://h:1"}}, Step: steps.EvalCommandOptions{PlanFile: "p.json"}},
			"--url and --plan: give a plan (--plan, --frontend) or a URL, not both", false},
		{"url and frontend",
			BenchCommandOptions{URL: BenchOptions{IO: quiet, URLBench: steps.URLBench{URL: "http://h:1"}}, Step: steps.BenchCommandOptions{BenchOptions: steps.BenchOptions{Frontend: "http://h:2"}}},
			EvalCommandOptions{URL: EvalOptions{IO: quiet, URLEval: steps.URLEval{URL: "http://h:1"}}, Step: steps.EvalCommandOptions{EvalOptions: steps.EvalOptions{Frontend: "http://h:2"}}},
			"--url and --frontend", false},
		{"no url: the plan's step",
			BenchCommandOptions{URL: BenchOptions{IO: quiet}},
			EvalCommandOptions{URL: EvalOptions{IO: quiet}},
			"--plan is required", false},
		{"negative warmups",
			BenchCommandOptions{URL: BenchOptions{IO: quiet, Conc: "8", Warmups: &warm, URLBench: steps.URLBench{URL: "http://h:1"}}},
			EvalCommandOptions{}, "--warmups -1: must not be negative", true},
	} {
		err := BenchCommand(context.Background(), tt.bench)
		if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("bench %s: %v (exit %d), want exit 2 with %q", tt.name, err, exitcode.Of(err), tt.want)
		}
		if tt.benchOnly {
			continue
		}
		err = EvalCommand(context.Background(), tt.eval)
		if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("eval %s: %v (exit %d), want exit 2 with %q", tt.name, err, exitcode.Of(err), tt.want)
		}
	}
}
