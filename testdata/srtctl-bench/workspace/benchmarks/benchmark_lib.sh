# Stand-in for InferenceX's benchmarks/benchmark_lib.sh in the end-to-end
# test of srtctl-bench lm-eval: run_eval leaves the files InferenceX's
# lm-eval run leaves in the working directory, recording what it was
# given; append_lm_eval_summary says it ran.
run_eval() {
	printf '{"args": "%s", "model_name": "%s", "concurrent": "%s", "tp": "%s"}\n' "$*" "$MODEL_NAME" "$EVAL_CONCURRENT_REQUESTS" "$TP" >meta_env.json
	printf '{"results": {"gsm8k": {"exact_match": 0.5}}}\n' >results_e2e.json
	printf '{"doc_id": 0}\n' >samples_e2e.jsonl
}
append_lm_eval_summary() {
	echo "summary stand-in: CONC=$CONC EP_SIZE=$EP_SIZE"
}
