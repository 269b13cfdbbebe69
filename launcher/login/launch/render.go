package launch

import (
	"context"
	"io"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
)

// RenderOptions are `render`'s: the plan's inputs and how much to show.
type RenderOptions struct {
	IO
	Plan  PlanOptions
	Brief bool // only the node map, the ports and the job
}

// Render is `render`: the plan (as JSON, or for people, whole or brief)
// and the Slurm job run would submit. The job description is built as run
// builds it, so a directive it cannot send fails here (exit 2) before
// anything is shown.
func Render(ctx context.Context, o RenderOptions) error {
	pl, prof, err := Plan(ctx, o.Plan)
	if err != nil {
		return err
	}
	job, err := submit.JobView(pl)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "profile %s: %w", pl.Profile.Path, err)
	}
	if o.JSON {
		b, err := pl.JSON()
		if err != nil {
			return err
		}
		_, err = o.Stdout.Write(b)
		return err
	}
	write := pl.WriteHuman
	if o.Brief {
		write = pl.WriteBrief
	}
	if err := write(o.Stdout); err != nil {
		return err
	}
	if _, err = io.WriteString(o.Stdout, job+TransportNote(prof)+BinaryNote(prof, "")); err != nil {
		return err
	}
	return WriteSources(o.Stdout, prof)
}

// TransportNote is the line that says how the job would be submitted:
// slurmrestd or Slurm's commands, and why (profile.Profile.SlurmTransport).
func TransportNote(prof *profile.Profile) string {
	t, err := prof.SlurmTransport()
	if err != nil {
		return "Transport: none: " + err.Error() + "\n"
	}
	return "Transport: " + t.Name + " (" + t.Why + ")\n"
}
