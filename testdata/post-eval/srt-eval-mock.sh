#!/usr/bin/env bash
# A stand-in for InferenceX's benchmarks/multi_node/srt_eval.sh, for the
# post_eval end-to-end test (slurmbench testdata). Same contract, bash
# alone: arguments ENDPOINT INFMAX_WORKSPACE; the workflow's variables
# (IS_MULTINODE MODEL_NAME EVAL_CONC PREFILL_TP PREFILL_EP PREFILL_DP_ATTN
# DECODE_DP_ATTN) must be set; it asks the endpoint EVAL_LIMIT chat
# questions and writes an lm-eval-shaped results file and meta_env.json to
# ${EVAL_RESULTS_DIR:-/logs/eval_results} (the stand-in enroot cannot mount
# /logs, so the test names the host directory through passthrough_env).
set -euo pipefail

if [[ $# -ne 2 || -z "$1" || -z "$2" ]]; then
	echo "Usage: $0 endpoint infmax_workspace" >&2
	exit 1
fi
endpoint=$1 workspace=$2
for v in IS_MULTINODE MODEL_NAME EVAL_CONC PREFILL_TP PREFILL_EP PREFILL_DP_ATTN DECODE_DP_ATTN; do
	[[ -n "${!v:-}" ]] || { echo "ERROR: $v is not set" >&2; exit 1; }
done
hostport=${endpoint#http://}
host=${hostport%%:*} port=${hostport##*:}
out=${EVAL_RESULTS_DIR:-/logs/eval_results}
mkdir -p "$out"
n=${EVAL_LIMIT:-4} ok=0
for ((i = 0; i < n; i++)); do
	body=$(printf '{"model":"%s","messages":[{"role":"user","content":"1+1?"}],"max_tokens":4}' "$MODEL_NAME")
	exec 3<>"/dev/tcp/$host/$port"
	printf 'POST /v1/chat/completions HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
		"$host" "${#body}" "$body" >&3
	IFS= read -r status <&3 || status=""
	cat <&3 > /dev/null || :
	exec 3<&-
	[[ $status == *" 200"* ]] && ok=$((ok + 1))
done
score=$(awk -v a="$ok" -v b="$n" 'BEGIN { printf "%.4f", a / b }')
cat > "$out/results_$(date +%Y-%m-%dT%H-%M-%S).json" <<JSON
{"results": {"gsm8k": {"exact_match,strict-match": $score, "exact_match_stderr,strict-match": 0.0,
 "exact_match,flexible-extract": $score, "exact_match_stderr,flexible-extract": 0.0}},
 "n-samples": {"gsm8k": {"original": $n, "effective": $n}}}
JSON
printf '{"model_name": "%s", "eval_conc": "%s", "eval_suite": "%s", "is_multinode": "%s", "workspace": "%s", "unlisted": "%s"}\n' \
	"$MODEL_NAME" "$EVAL_CONC" "${EVAL_SUITE:-}" "$IS_MULTINODE" "$workspace" "${EVAL_UNLISTED:-}" > "$out/meta_env.json"
echo "stand-in eval: $ok of $n answered at $endpoint"
