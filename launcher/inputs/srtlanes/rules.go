package srtlanes

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Source names the table a lane's value came from, for render's sources
// and error messages.
const Source = "InferenceX's lanes.py SRT_LANES"

// PathOf is the path a request takes on cluster (policy.py@3b798abf,
// launch_path): a multi-node request that NATIVE_SRT_LANES matches runs
// the cluster's srt-native lane, any other multi-node request srt-multi,
// and a single-node one srt-single.
func (t Table) PathOf(cluster string, r Request) Path {
	if !r.MultiNode {
		return SrtSingle
	}
	for _, m := range t.Native[cluster] {
		if m.Matches(r) {
			return SrtNative
		}
	}
	return SrtMulti
}

// Of is the lane r runs on cluster and its path; the lane is nil for a
// single-node request (InferenceX's single-node path has none) and for a
// cluster whose path has no row. InferenceX refuses the latter ("cluster
// %r has no %s srt-slurm lane", lanes.py srt_lane); slurmbench runs it with
// no lane differences, so an operator's own cluster or the test cluster
// needs no row here.
func (t Table) Of(cluster string, r Request) (*Lane, Path) {
	p := t.PathOf(cluster, r)
	if p == SrtSingle {
		return nil, p
	}
	l, ok := t.Lanes[Key{cluster, p}]
	if !ok {
		return nil, p
	}
	l.Cluster, l.Path = cluster, p
	return &l, p
}

// RefusedError is a request the lane does not run: Message is
// InferenceX's text of the refusal (lanes.py check_request).
type RefusedError struct {
	Cluster   string
	Path      Path
	Framework string
	Message   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("cluster %s, %s lane (%s), FRAMEWORK=%s: %s", e.Cluster, e.Path, Source, e.Framework, e.Message)
}

// Check refuses a request the lane does not run, before any setup
// (lanes.py check_request): a FRAMEWORK outside the lane's frameworks,
// then the first reject that matches.
func (l *Lane) Check(r Request) error {
	if l == nil {
		return nil
	}
	if l.Frameworks != nil && !slices.Contains(l.Frameworks, r.Framework) {
		supported := slices.Clone(l.Frameworks)
		slices.Sort(supported)
		return &RefusedError{Cluster: l.Cluster, Path: l.Path, Framework: r.Framework,
			Message: fmt.Sprintf("Unsupported framework: %s. Supported frameworks are: %s", r.Framework, strings.Join(supported, ", "))}
	}
	for _, rj := range l.Rejects {
		if rj.When.Matches(r) {
			return &RefusedError{Cluster: l.Cluster, Path: l.Path, Framework: r.Framework,
				Message: fmt.Sprintf("%s (FRAMEWORK=%s)", rj.Message, r.Framework)}
		}
	}
	return nil
}

// SetupScript is the setup script the lane runs for r's framework in place
// of the recipe's setup_script ("" : the recipe's own). InferenceX passes
// it as srtctl apply --setup-script (drivers/srt/submit.py@43c3fcfc,
// multinode_arguments), which srtctl hands the job as SRTCTL_SETUP_SCRIPT
// and its do_sweep puts in the config's setup_script
// (replace(config, setup_script=...)).
func (l *Lane) SetupScript(r Request) string {
	if l == nil {
		return ""
	}
	return l.SetupScripts[r.Framework]
}

// MountsFor are the lane's mounts whose When matches r, in the table's
// order (drivers/srt/config.py@eacb6075, lane_mounts).
func (l *Lane) MountsFor(r Request) []Mount {
	if l == nil {
		return nil
	}
	var out []Mount
	for _, m := range l.Mounts {
		if m.When.Matches(r) {
			out = append(out, m)
		}
	}
	return out
}

// OnSharedRunRoot says whether InferenceX puts r's srt-slurm checkout (and
// the workspace copy the job reads) on the record's shared-run-root
// (drivers/srt/__init__.py, stored id 70893068357: shared = any match).
func (l *Lane) OnSharedRunRoot(r Request) bool {
	if l == nil {
		return false
	}
	for _, m := range l.SharedRunRoot {
		if m.Matches(r) {
			return true
		}
	}
	return false
}

// ResultDir is where the AgentX client of r's lane writes.
func (l *Lane) ResultDir() string {
	if l == nil || l.AgenticResultDir == "" {
		return DefaultAgenticResultDir
	}
	return l.AgenticResultDir
}

// EvalEdits are the recipe edits of an eval run on a lane
// (drivers/srt/recipe.py, stored id 71018834999, eval_overrides).
type EvalEdits struct {
	// StripForcedAcceptance: the staged TRT-LLM recipes lose every line
	// naming ForcedAcceptanceMarker (real verification).
	StripForcedAcceptance bool
	// Sets are "key=value" --set edits; Unsets --unset keys; in order.
	Sets, Unsets []string
}

// HeadFrontendSet is the --set real verification adds for HeadFrontend's
// requests.
const HeadFrontendSet = "frontend.placement.node=head"

// EvalEdits are r's: on an eval-only run RealVerification matches, the
// forced acceptance stripped and, where HeadFrontend matches too, the
// frontend on the head node; on any eval run (RUN_EVAL or EVAL_ONLY), the
// lane's EvalUnsets.
func (l *Lane) EvalEdits(r Request) EvalEdits {
	var e EvalEdits
	if l == nil {
		return e
	}
	if r.EvalOnly && l.RealVerification != nil && l.RealVerification.Matches(r) {
		e.StripForcedAcceptance = true
		if l.HeadFrontend != nil && l.HeadFrontend.Matches(r) {
			e.Sets = append(e.Sets, HeadFrontendSet)
		}
	}
	if r.RunEval || r.EvalOnly {
		e.Unsets = append(e.Unsets, l.EvalUnsets...)
	}
	return e
}

// ForcedAcceptanceMarker is the variable whose lines real verification
// drops (recipe.py, FORCED_ACCEPTANCE_MARKER).
const ForcedAcceptanceMarker = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"

// trtllmRecipes is the pattern, over the path in the checkout
// ("recipes/<path under the multi-node mirror>"), of the recipes real
// verification edits (recipe.py strip_forced_acceptance; fnmatch's *
// crosses '/').
const trtllmRecipes = "recipes/*/trtllm/*"

// IsTRTLLMRecipe says whether the recipe at rel, its path under the
// multi-node recipe mirror, is one strip_forced_acceptance edits.
func IsTRTLLMRecipe(rel string) bool {
	return FnmatchCase(trtllmRecipes, "recipes/"+strings.TrimPrefix(rel, "/"))
}

// StripForcedAcceptance is text without its lines that name
// ForcedAcceptanceMarker (each line with its ending, as the text edit
// keeps them).
func StripForcedAcceptance(text []byte) []byte {
	var out []byte
	for rest := text; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		if !bytes.Contains(line, []byte(ForcedAcceptanceMarker)) {
			out = append(out, line...)
		}
	}
	return out
}

// TimeLimit is a job's time limit and the rule that gave it.
type TimeLimit struct {
	Value string // Slurm's form: "H:MM:SS", or minutes
	From  string
}

// Record is what of the cluster's srt-slurm record the time limit reads:
// default-time-limit ("" unset) and single-node-time-limit (minutes, 0 unset).
type Record struct {
	DefaultTimeLimit    string
	SingleNodeTimeLimit int
}

// JobTimeLimit is srtctl's default_time_limit for r's job on cluster
// (lanes.py srt_time_limit; the single-node bump is policy.py's
// salloc_time_limit): the record's fixed default-time-limit wins; a
// single-node job then takes single-node-time-limit, else the bump or
// SALLOC_TIME_LIMIT; a multi-node job its lane's long limit where LongTime
// matches, else the lane's limit, else SALLOC_TIME_LIMIT. A multi-node
// request without a lane (a cluster with no row) takes SALLOC_TIME_LIMIT,
// as a row with no limits gives it. ok is false when nothing gives one
// (InferenceX then fails for want of SALLOC_TIME_LIMIT; the caller keeps
// its own default).
func (t Table) JobTimeLimit(cluster string, l *Lane, r Request, rec Record) (TimeLimit, bool) {
	if rec.DefaultTimeLimit != "" {
		return TimeLimit{rec.DefaultTimeLimit, "srt-slurm.default-time-limit"}, true
	}
	minutes, from := r.SallocTimeLimit, "SALLOC_TIME_LIMIT (the workflow's, minutes)"
	switch {
	case !r.MultiNode && rec.SingleNodeTimeLimit > 0:
		minutes, from = rec.SingleNodeTimeLimit, "srt-slurm.single-node-time-limit"
	case !r.MultiNode:
		if b, ok := t.Bumps[cluster]; ok && b.When.Matches(r) && !r.EvalOnly && r.Conc >= b.MinConc {
			minutes, from = b.Minutes, fmt.Sprintf("InferenceX's SALLOC_TIME_BUMPS[%s] (minutes; CONC >= %d)", cluster, b.MinConc)
		}
	case l != nil && l.LongTime != nil && l.LongTimeLimit != "" && l.LongTime.Matches(r):
		return TimeLimit{l.LongTimeLimit, Source + " long_time_limit"}, true
	case l != nil && l.TimeLimit != "":
		return TimeLimit{l.TimeLimit, Source + " time_limit"}, true
	}
	if minutes <= 0 {
		return TimeLimit{}, false
	}
	return TimeLimit{strconv.Itoa(minutes), from}, true
}
