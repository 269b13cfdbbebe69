package matrix

import (
	"context"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// Run is `slurmbench matrix`: build the matrix, then print it (--plan) or
// run it.
func Run(ctx context.Context, o Options) error {
	m, err := Build(ctx, o)
	if err != nil {
		return err
	}
	if o.PlanOnly {
		if o.JSON {
			return launch.WriteJSON(o.Stdout, m.JSON())
		}
		return PrintPlan(o.Stdout, m)
	}
	if n := m.Unplanned(); n > 0 {
		_ = PrintPlan(o.Stderr, m)
		return exitcode.Errorf(exitcode.Config, "%d of %d points cannot be planned (listed above): nothing submitted", n, len(m.Points))
	}
	return execute(ctx, o, m)
}
