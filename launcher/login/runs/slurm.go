package runs

import (
	"context"
	"errors"

	"github.com/slurmbench/slurmbench/slurm"
)

// SlurmJobState asks slurmrestd (or accounting) about a job. A job neither
// knows is not ended: that answer also comes from a slurmrestd without
// accounting, a hiccup (errno 2017 for a live job), or another cluster's
// profile over a shared runs_dir, and a run removed on it may be a live
// job's. Such a run is kept, with the answer as its state.
func SlurmJobState(client *slurm.Client) JobState {
	return func(ctx context.Context, id string) (string, bool, error) {
		jid, err := slurm.ParseJobID(id)
		if err != nil {
			return "", false, err
		}
		j, err := client.LookupJob(ctx, jid)
		if errors.Is(err, slurm.ErrUnknownFinalState) {
			return "not known to this profile's Slurm (not confirmed ended: remove the directory by hand if you know it ended)", false, nil
		}
		if err != nil {
			return "", false, err
		}
		return j.State.String(), j.Terminal(), nil
	}
}
