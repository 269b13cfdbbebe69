#!/usr/bin/env bash
# A stand-in for InferenceX's benchmarks/multi_node/srt_fixed_sequence.sh,
# for the custom-benchmark end-to-end test (slurmbench testdata). Same
# contract: the workflow's MODEL ISL OSL CONC_LIST PREFILL_NUM_WORKERS
# PREFILL_TP DECODE_NUM_WORKERS DECODE_TP and srtctl's SRT_FRONTEND_HOST/PORT
# must be set; one fixed-sequence point per concurrency, written as
# ${SRT_LOGS_DIR:-/logs}/sa-bench_isl_<ISL>_osl_<OSL>/results_concurrency_<C>_gpus_<T>_ctx_<P>_gen_<D>.json
# (the stand-in enroot cannot mount /logs, so the test names the host
# directory). The image has no benchmark_serving.py: the client is
# slurmbench's native SA-Bench client, `$SLURMBENCH bench --url`, with the
# script's prompt and warmup counts.
set -euo pipefail
for v in MODEL ISL OSL SRT_FRONTEND_HOST SRT_FRONTEND_PORT CONC_LIST PREFILL_NUM_WORKERS PREFILL_TP \
	DECODE_NUM_WORKERS DECODE_TP SLURMBENCH; do
	[[ -n "${!v:-}" ]] || { echo "ERROR: $v is not set" >&2; exit 1; }
done
logs=${SRT_LOGS_DIR:-/logs}
ctx=$((PREFILL_NUM_WORKERS * PREFILL_TP))
gen=$((DECODE_NUM_WORKERS * DECODE_TP))
for concurrency in $CONC_LIST; do
	num_prompts=$((concurrency * 10 < 16 ? 16 : concurrency * 10))
	env -u RESULT_FILENAME "$SLURMBENCH" bench --url "http://${SRT_FRONTEND_HOST}:${SRT_FRONTEND_PORT}" --model "$MODEL" \
		--isl "$ISL" --osl "$OSL" --conc "$concurrency" --num-prompts "$num_prompts" --warmups "$((concurrency * 2))" \
		--range-ratio 1.0 --out "$logs" --overwrite --gpus "$((ctx + gen))" --prefill-gpus "$ctx" --decode-gpus "$gen"
done
