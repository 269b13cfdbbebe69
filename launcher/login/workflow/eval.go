package workflow

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// MultinodeEvalCommand is the post_eval.command InferenceX sets on every
// multi-node job (inferencex-e2e/infx/launch/drivers/srt/submit.py@43c3fcfc,
// MULTINODE_EVAL_COMMAND): srt_eval.sh from the workspace mount against
// the frontend, with the model at /model and the hub online.
var MultinodeEvalCommand = []string{
	"env", "HF_HUB_OFFLINE=0", "HF_DATASETS_OFFLINE=0", "TRANSFORMERS_OFFLINE=0", "MODEL_PATH=/model",
	"bash", "{infmax_workspace}/benchmarks/multi_node/srt_eval.sh", "{endpoint}", "{infmax_workspace}",
}

// SingleNodeEvalCommand is a single-node point's (SINGLE_NODE_EVAL_COMMAND
// there): srt_eval.sh of single_node/, which writes its exit code.
var SingleNodeEvalCommand = []string{
	"bash", "{infmax_workspace}/benchmarks/single_node/srt_eval.sh", "{endpoint}", "/logs/infx-eval-exit-code",
}

// workloadEnv are the name patterns whose variables the eval step gets
// passed: WORKLOAD_ENV of the newest stored submit.py
// (inferencex-e2e/infx/launch/drivers/srt/submit.py, stored id
// 70212982679), which builds on both earlier ones — the env-prefixed
// MULTINODE_EVAL_COMMAND of submit.py@43c3fcfc and the SWEBENCH_*/MODAL_*
// names of stored id 70919105824 — and adds the attention-DP sizes.
var workloadEnv = []string{
	"EVAL_*", "SWEBENCH_*", "AIPERF_*", "AGENTIC_*",
	"MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET",
	"TP", "EP_SIZE", "DP_ATTENTION", "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "CONC",
	"ATTN_DP_SIZE", "PREFILL_ATTN_DP_SIZE", "DECODE_ATTN_DP_SIZE",
	"IS_AGENTIC", "SCENARIO_TYPE",
	"OPENAI_API_KEY", "REQUIRE_POWER", "ENABLE_AGENTX_POWER", "VLLM_ENGINE_READY_TIMEOUT_S",
	"SGLANG_TORCH_PROFILER_DIR", "VLLM_TORCH_PROFILER_DIR",
}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// PassthroughNames are the variables of env the eval step is passed, as
// submit.py's eval_args picks them: set to a non-empty value, a valid
// shell name, matching one of WORKLOAD_ENV's patterns; sorted.
func PassthroughNames(env Env) []string {
	names := []string{}
	for name, value := range env {
		if value == "" || !shellName.MatchString(name) {
			continue
		}
		for _, pat := range workloadEnv {
			if ok, _ := path.Match(pat, name); ok {
				names = append(names, name)
				break
			}
		}
	}
	sort.Strings(names)
	return names
}

// EvalOverrides are the --set edits that make the job's eval InferenceX's
// (submit.py's eval_args): post_eval.command and post_eval.passthrough_env.
func EvalOverrides(env Env, command []string) ([]recipe.Override, error) {
	cmd, err := json.Marshal(command)
	if err != nil {
		return nil, err
	}
	names, err := json.Marshal(PassthroughNames(env))
	if err != nil {
		return nil, err
	}
	var out []recipe.Override
	for _, arg := range []string{"post_eval.command=" + string(cmd), "post_eval.passthrough_env=" + string(names)} {
		o, err := recipe.ParseSet(arg)
		if err != nil {
			return nil, fmt.Errorf("the eval's --set %s: %w", arg, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// attentionDPNames are the variables a multi-node submission also sets in
// the benchmark's environment when the workflow gives them
// (submit.py stored id 70212982679, multinode_arguments: `--set
// benchmark.env.<NAME>=<json string>` for each one set and non-empty).
var attentionDPNames = []string{"ATTN_DP_SIZE", "PREFILL_ATTN_DP_SIZE", "DECODE_ATTN_DP_SIZE"}

// AttentionDPOverrides are a multi-node job's --set edits of
// benchmark.env for the attention-DP sizes env sets, in InferenceX's
// order, each value as a JSON string (it stays a string in the recipe,
// as json.dumps of the variable's text gives it).
func AttentionDPOverrides(env Env) ([]recipe.Override, error) {
	var out []recipe.Override
	for _, name := range attentionDPNames {
		v := env.get(name)
		if v == "" {
			continue
		}
		quoted, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		arg := "benchmark.env." + name + "=" + string(quoted)
		o, err := recipe.ParseSet(arg)
		if err != nil {
			return nil, fmt.Errorf("%s: the --set %s: %w", name, arg, err)
		}
		out = append(out, o)
	}
	return out, nil
}
