// Package gsm8k runs the GSM8K accuracy eval the way InferenceX runs it with
// lm-evaluation-harness, and writes what InferenceX's tools read afterwards.
//
// Two ways to run it:
//
//   - lm-eval in the engine container: LMEvalStep.Argv is InferenceX's
//     `python3 -m lm_eval --model local-chat-completions --apply_chat_template
//     ...` command, with MaxOutputTokens and
//     EvalContextLength for its gen_kwargs; InstallArgvs pins the commit.
//   - natively: Run sends the same requests from Go and scores them the same
//     way, then Report.Write stores lm-eval's results_<date>.json,
//     samples_gsm8k_<date>.jsonl and meta_env.json.
//
// What "the same" covers, each pinned by a test against Python output:
//
//   - Prompt: InferenceXTask's doc_to_text, five shots joined as lm-eval's
//     ContextSampler.get_context does ("<text> <answer>\n\n" each) into one
//     user message ending with the question (Task.FewshotAsMultiturn switches
//     to user/assistant turns).
//   - Shots: one random.Random(1234) for the task, the i-th
//     .sample(train, 5) for document i (PyRandom reproduces CPython's
//     MT19937, seeding, getrandbits, _randbelow and both sample branches).
//   - Request: messages, model, max_tokens, temperature 0, the first four
//     stop strings, seed 1234, top_p 1 (LocalChatCompletion._create_payload);
//     content, else reasoning_content, is the answer (InferenceX's patch).
//   - Scoring: strict-match and flexible-extract regex filters (last match,
//     first non-empty group), exact_match after regexes_to_ignore (Python's
//     trailing "$" included) and lower-casing; mean and mean_stderr summed
//     left to right in document order.
//
// Thresholds (embedded thresholds.yaml) gate every exact_match metric as
// validate_scores.py does. MakeAnswerKey writes answer keys for
// mockengine with an exact, chosen accuracy.
package gsm8k
