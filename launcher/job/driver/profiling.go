package driver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// profileRequestTimeout bounds one start/stop profiling request (curl in
// srtctl's lib/profiling.sh has none; a hung worker must not hold the run).
const profileRequestTimeout = 30 * time.Second

// profilesTriggered reports whether the driver sends the profiling
// requests itself: the plan lists them and the benchmark is sa-bench,
// whose srtctl script sends them (lib/profiling.sh) and which slurmbench's
// clients replace. srtctl's sglang-bench and trace-replay send their own,
// and so does `slurmbench srtctl-bench` for them (launcher/job/srtctlbench).
func profilesTriggered(pl *plan.Plan) bool {
	return pl.Profiling != nil && len(pl.Profiling.Trigger) > 0 && pl.Benchmark.Type == "sa-bench"
}

// startProfiles asks each worker leader to start profiling, as
// start_all_profiling does: a failure is logged, never fatal (the
// script only warns).
func (d *driver) startProfiles(ctx context.Context) {
	for _, tr := range d.plan.Profiling.Trigger {
		d.profileRequest(ctx, tr, tr.StartPath, tr.Body)
	}
}

// stopProfiles is stop_all_profiling: an empty JSON body to each leader.
func (d *driver) stopProfiles(ctx context.Context) {
	for _, tr := range d.plan.Profiling.Trigger {
		d.profileRequest(ctx, tr, tr.StopPath, "{}")
	}
}

func (d *driver) profileRequest(ctx context.Context, tr plan.ProfileTrigger, path, body string) {
	err := func() error {
		base, err := d.alloc.Fill(tr.URL)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, profileRequestTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.opts.HTTPClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
		}
		d.logf("profiling: %s%s (%s) accepted", base, path, tr.Role)
		return nil
	}()
	if err != nil {
		d.logf("profiling: %s%s (%s): %v (the run goes on without it, as srtctl's script does)", tr.URL, path, tr.Role, err)
	}
}

// makeProfileDirs creates the profile directory of every worker mode before
// the workers start, as srtctl's worker stage does: nsys does not create
// the directory of its -o file.
func makeProfileDirs(pl *plan.Plan) error {
	if pl.Profiling == nil {
		return nil
	}
	for _, p := range pl.Processes {
		mode := ""
		switch p.Role {
		case plan.RolePrefill, plan.RoleDecode:
			mode = string(p.Role)
		case plan.RoleAgg:
			mode = "agg"
		default:
			continue
		}
		if err := os.MkdirAll(filepath.Join(pl.Profiling.Dir, mode), 0o755); err != nil {
			return fmt.Errorf("profiling: creating the %s profile directory: %w", mode, err)
		}
	}
	return nil
}
