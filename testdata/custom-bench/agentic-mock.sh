#!/usr/bin/env bash
# A stand-in for InferenceX's benchmarks/multi_node/agentic_srt.sh, for the
# custom-benchmark end-to-end test (slurmbench testdata). It honours the
# same contract with bash alone: for each concurrency of ${CONC_LIST:-$CONC}
# it sends that many chat requests to the frontend srtctl's environment
# names (SRT_FRONTEND_HOST/PORT), writes its artifacts under
# $RESULT_DIR/conc_<C>/ and the aggregated
# ${RESULT_FILENAME}_conc<C>.json (with num_requests_successful) into
# ${AGENTIC_OUTPUT_DIR:-$INFMAX_CONTAINER_WORKSPACE}.
set -euo pipefail

: "${RESULT_FILENAME:?}" "${RESULT_DIR:?}" "${SRT_FRONTEND_HOST:?}" "${SRT_FRONTEND_PORT:?}" "${MODEL:?}"
out_dir="${AGENTIC_OUTPUT_DIR:-${INFMAX_CONTAINER_WORKSPACE:?}}"
read -r -a concs <<< "${CONC_LIST:-${CONC:?}}"

request() {
	local body status
	body=$(printf '{"model":"%s","messages":[{"role":"user","content":"hello"}],"max_tokens":4}' "$MODEL")
	exec 3<>"/dev/tcp/$SRT_FRONTEND_HOST/$SRT_FRONTEND_PORT"
	printf 'POST /v1/chat/completions HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
		"$SRT_FRONTEND_HOST" "${#body}" "$body" >&3
	IFS= read -r status <&3 || status="no response"
	cat <&3 > /dev/null || :
	exec 3<&-
	printf '%s\n' "${status%$'\r'}"
}

for c in "${concs[@]}"; do
	dir="$RESULT_DIR/conc_$c"
	mkdir -p "$dir/aiperf_artifacts"
	ok=0
	for ((i = 0; i < c; i++)); do
		status=$(request)
		printf '%s\n' "$status" >> "$dir/benchmark.log"
		[[ $status == *" 200"* ]] && ok=$((ok + 1))
	done
	printf '{"num_requests_successful": %d, "num_requests_failed": %d, "concurrency": %d}\n' \
		"$ok" $((c - ok)) "$c" > "$dir/aiperf_artifacts/profile_export_aiperf.json"
	cp "$dir/aiperf_artifacts/profile_export_aiperf.json" "$out_dir/${RESULT_FILENAME}_conc$c.json"
	echo "agentic stand-in: c$c: $ok of $c requests succeeded"
done
