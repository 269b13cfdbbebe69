package plan

import (
	"fmt"
	"regexp"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// RoleService is a recipe's own `services:` process (srt-slurm 2.x's
// generic service): started in its Start phase, gated on its Ready probe.
const RoleService Role = "service"

// Service start phases as the driver runs them (srtctl's SERVICE_STARTS):
// before_workers once infra is ready and before any worker starts;
// after_frontend once the health gate passed, before the benchmark.
const (
	StartBeforeWorkers = recipe.StartBeforeWorkers
	StartAfterFrontend = recipe.StartAfterFrontend
)

// describeService is the human plan's line on a service's criticality and
// readiness.
func describeService(proc Process) string {
	crit := "not critical"
	if proc.Critical {
		crit = "critical"
	}
	r := proc.Ready
	switch {
	case r == nil:
		return crit + ", started when launched (no readiness probe)"
	case r.Pattern != "":
		return fmt.Sprintf("%s, ready when its log matches /%s/ (timeout %ds, every %ds)", crit, r.Pattern, r.TimeoutSeconds, r.IntervalSeconds)
	case r.Path != "":
		return fmt.Sprintf("%s, ready when GET :%d%s returns %d (timeout %ds)", crit, r.Port, r.Path, r.Status, r.TimeoutSeconds)
	default:
		return fmt.Sprintf("%s, ready when tcp/%d accepts (timeout %ds)", crit, r.Port, r.TimeoutSeconds)
	}
}

// validateServices checks the service processes' start phase and probe.
func (p *Plan) validateServices(add func(format string, args ...any)) {
	for _, proc := range p.Processes {
		if proc.Role != RoleService {
			continue
		}
		if proc.Start != StartBeforeWorkers && proc.Start != StartAfterFrontend {
			add("process %q: start %q is not before_workers or after_frontend", proc.Name, proc.Start)
		}
		if r := proc.Ready; r != nil {
			if r.Pattern != "" {
				if _, err := regexp.Compile(r.Pattern); err != nil {
					add("process %q: readiness pattern: %v", proc.Name, err)
				}
			} else if r.Port < 1 || r.Port > 65535 {
				add("process %q: readiness port %d", proc.Name, r.Port)
			}
			if r.TimeoutSeconds <= 0 || r.IntervalSeconds <= 0 {
				add("process %q: readiness timeout %ds, interval %ds: both must be positive", proc.Name, r.TimeoutSeconds, r.IntervalSeconds)
			}
		}
	}
}
