package planner

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// postEval plans srt-slurm 2.x's post_eval.command: the recipe's own eval
// (InferenceX's srt_eval.sh) in place of the built-in one, run when
// RUN_EVAL (after the benchmark) or EVAL_ONLY (instead of it) asks for an
// eval, as srtctl's _run_post_eval runs it: in the engine container on the
// head node, {endpoint} the frontend's URL and {infmax_workspace} the
// workspace mount, with MODEL_NAME (the served model name), EVAL_CONC, and
// the built-in list of workflow variables plus post_eval.passthrough_env
// taken from the submitting environment when set. Its artifacts are what
// it copies to /logs/eval_results, which the workflow stages.
func (b *builder) postEval(e plan.Eval) error {
	pl, pe := b.plan, b.r.PostEval
	e.Client = ""
	e.DataDir = ""
	e.ResultDir = filepath.Join(pl.Layout.Logs, "eval_results")
	// srtctl: EVAL_CONC from the workflow, else the largest benchmark
	// concurrency; neither leaves it unset.
	if e.Concurrency <= 0 {
		concs := b.r.Benchmark.Concurrencies.Values
		if len(b.in.Concurrencies) > 0 {
			concs = b.in.Concurrencies
		}
		if len(concs) > 0 {
			e.Concurrency = slices.Max(concs)
		}
	}
	ws := b.workspace()
	repl := strings.NewReplacer("{endpoint}", b.frontendURL(), "{infmax_workspace}", plan.WorkspaceMount)
	for _, a := range pe.Command {
		e.Command = append(e.Command, repl.Replace(a))
	}
	if ws == "" && slices.ContainsFunc(e.Command, func(a string) bool { return strings.Contains(a, plan.WorkspaceMount) }) {
		return b.fail("post_eval.command", "%s runs from %s, the InferenceX checkout: set paths.workspace in profile %s (or --workspace / GITHUB_WORKSPACE)",
			plan.QuoteArgv(e.Command), plan.WorkspaceMount, b.p.Path)
	}
	if plan.IsShellString(e.Command) {
		return b.fail("post_eval.command", "%s hands a string to a shell; put the commands in a script and run that", plan.QuoteArgv(e.Command))
	}
	e.Passenv = pe.Passenv()
	env := map[string]string{"MODEL_NAME": pl.Model.ServedName}
	switch {
	case len(b.in.Eval.Concurrencies) > 1:
		// The recipe's script batches a list itself (InferenceX's run_eval
		// loops over EVAL_CONCURRENT_REQUESTS), so it gets the list whole.
		e.Concurrencies = slices.Clone(b.in.Eval.Concurrencies)
		e.Concurrency = e.Concurrencies[0]
		env["EVAL_CONC"] = joinInts(e.Concurrencies, " ")
	case e.Concurrency > 0:
		env["EVAL_CONC"] = strconv.Itoa(e.Concurrency)
	}
	for k, v := range b.p.Env.Set {
		env[k] = v // the cluster's fixed variables, as for every container step
	}
	pl.Eval = e
	b.add(plan.Process{Name: "eval", Role: plan.RoleEval, Nodes: []int{b.headNode}, Container: true, Mounts: b.mounts(),
		Env: env, Passenv: e.Passenv, Argv: e.Command, Log: b.logPath("eval"), Critical: true, Srun: plan.SrunOptions{Extra: b.srunExtra()}})
	return nil
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, sep)
}
