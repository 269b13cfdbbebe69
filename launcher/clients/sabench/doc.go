// Package sabench is the SA-Bench step: the serving benchmark InferenceX
// runs at every concurrency of a point.
//
// Two clients produce the same result file:
//
//   - the native client, Run: a Go port of benchmark_serving.py's random
//     dataset run with the openai-completions request function. It needs no
//     Python and no tokenizer (prompts are token-id arrays), draws the same
//     lengths as the Python tool for the same seed, and computes TTFT, TPOT,
//     ITL and E2E latency statistics bit for bit like numpy;
//   - the official benchmark_serving.py inside the engine container, whose
//     command ContainerArgv builds.
//
// Either result passes through results.ValidateSABench, the validity gate, and is kept
// (marked) with results.WriteSABench.
package sabench
