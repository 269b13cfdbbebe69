package recipe

import "fmt"

// What slurmbench runs of srt-slurm 2.x's services: and post_eval (the
// fields are model_v2.go's): defaults, validation and the refusals of
// features it does not run yet.

// Service start phases (srtctl's SERVICE_STARTS), and the one a generic
// service takes by default.
const (
	StartInfra         = "infra"
	StartBeforeWorkers = "before_workers"
	StartAfterFrontend = "after_frontend"
)

// Service readiness defaults (srtctl's ServiceReadinessConfig).
const (
	DefaultReadinessTimeoutSeconds  = 120
	DefaultReadinessIntervalSeconds = 2
)

// InheritsDiscovery is inherit_discovery_env (default true).
func (s Service) InheritsDiscovery() bool {
	return s.InheritDiscoveryEnv == nil || *s.InheritDiscoveryEnv
}

// EffectiveCommand is command plus args.
func (s Service) EffectiveCommand() []string {
	return append(append([]string(nil), s.Command...), s.Args...)
}

// postEvalBuiltinEnv is srtctl's built-in list of variables forwarded from
// the orchestrator's environment into the eval (do_sweep._run_post_eval).
var postEvalBuiltinEnv = []string{"RUN_EVAL", "EVAL_ONLY", "IS_MULTINODE", "FRAMEWORK", "PRECISION", "MODEL_PREFIX",
	"RUNNER_TYPE", "RESULT_FILENAME", "SPEC_DECODING", "ISL", "OSL", "MODEL", "MODEL_PATH", "MAX_MODEL_LEN",
	"EVAL_MAX_MODEL_LEN", "PREFILL_TP", "PREFILL_EP", "PREFILL_DP_ATTN", "PREFILL_NUM_WORKERS", "DECODE_TP",
	"DECODE_EP", "DECODE_DP_ATTN", "DECODE_NUM_WORKERS"}

// Passenv is every variable the eval takes from the submitting
// environment when set: the built-in list, then passthrough_env, each once.
func (p *PostEval) Passenv() []string {
	out := append([]string(nil), postEvalBuiltinEnv...)
	seen := map[string]bool{}
	for _, n := range out {
		seen[n] = true
	}
	if p != nil {
		for _, n := range p.PassthroughEnv {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// checkV2Supported refuses, by field, the generic-service features
// slurmbench does not run yet beyond checkSupportedV2's (the reader's):
// a generic service in the infra phase, and service metrics (for
// Tachometer, which slurmbench does not run).
func (r *Recipe) checkV2Supported() error {
	for _, s := range r.Services {
		if !s.IsEnabled() || s.EffectiveType() != "generic" {
			continue
		}
		label := fmt.Sprintf("services[%s]", s.Name)
		uns := func(sub, what string) error {
			return &UnsupportedError{Error{File: r.Path, Line: s.Line, Field: label + sub, Msg: what + " is " + ErrUnsupported.Error()}}
		}
		switch {
		case s.EffectiveStart() == StartInfra:
			return uns(".start", "a generic service in the infra phase")
		case s.Metrics != nil:
			return uns(".metrics", "service metrics (Tachometer)")
		}
	}
	return nil
}
