// Package mockengine is a fake LLM inference engine for testing slurmbench
// without GPUs: an OpenAI-compatible server with configurable latency, a
// Dynamo-like frontend whose /health lists registered worker instances,
// workers that register with it, and injectable faults. `slurmbench
// mock-engine` runs it as a process; StartTest runs it inside a test.
//
// # API
//
// POST /v1/completions takes prompt as a string, a list of strings, a list
// of token ids or a list of token-id lists (one choice per prompt, times n);
// POST /v1/chat/completions takes messages (string or text-part content).
// Both honour max_tokens (chat: max_completion_tokens wins), ignore_eos,
// stream and stream_options.include_usage, accept temperature, seed and
// stop, and ignore other fields. A request naming another model than
// Options.Model gets 404 unless Options.AnyModel; an empty model is accepted.
// Without max_tokens, DefaultMaxTokens (16) apply.
//
// Streaming answers are SSE: each "data: {...}\n\n" chunk carries exactly one
// token of one choice ("text" for completions, "delta.content" for chat, the
// first chat delta also carries role "assistant"); the last token's chunk
// carries finish_reason ("length" or "stop"); with include_usage a final
// chunk has empty choices and usage {prompt_tokens, completion_tokens,
// total_tokens}; then "data: [DONE]". Non-streaming answers carry usage.
// Every token chunk ends with one more member, "mock_sent_unix_ns"
// (SentStampKey): the Unix time in nanoseconds at which the mock wrote it
// to the socket, so a client on the same host can tell the latency it adds
// from the mock's own (OpenAI clients ignore unknown members).
//
// Timing: token i (0-based) of a request is due at arrival + TTFT + i×ITL,
// computed from the arrival time so that late wake-ups never accumulate; a
// non-streaming answer is sent when its last token is due. Each request waits
// on one reusable timer, and chunks are written and flushed only before a
// wait, so a server behind schedule sends the overdue chunks in one write
// (stamped with the time of that write).
//
// Token counting: prompt_tokens is exact for token-id prompts (one per id);
// for text it is ApproxTokens, one token per 4 bytes of UTF-8 rounded up
// (chat: the sum over all messages' contents). completion_tokens is the
// number of chunks sent.
//
// What is generated: without an answer key, every token is " tok", and a
// request generates max_tokens tokens (Options.EOSAfter, when set and
// smaller, stops requests without ignore_eos early with finish_reason
// "stop"). With ignore_eos a request always gets exactly max_tokens tokens.
//
// # Answer key (gsm8k)
//
// An answer key is a JSONL file, one object per line (blank lines skipped):
//
//	{"question": "<exact gsm8k question text>", "completion": "<text to return>"}
//
// For each request the mock takes the prompt text (chat: the content of the
// LAST user message; completions: the prompt string), finds the LAST
// "Question:", takes the text after it up to the next "\nAnswer:" (or the
// end), trims whitespace and looks it up exactly. When that misses, the
// text's trailing lines are dropped one at a time and looked up again, so
// templates that put instructions between the question and "Answer:"
// (InferenceX's gsm8k task does) still match. A hit returns the
// completion; a miss (or a prompt without "Question:", or token ids) returns
// Options.DefaultAnswer ("I don't know."). The text is cut at the first stop
// string, then split into whitespace-led words, one token (chunk) each.
// Without ignore_eos the whole text is returned even when max_tokens is
// smaller, so a score never depends on the client's max_tokens; with
// ignore_eos the count is exactly max_tokens (truncated, or padded with " tok").
//
// # Modes and health
//
// standalone: GET /health answers 200 with an empty body once loaded (503
// while loading), like sglang and vLLM; GET /v1/models lists Options.Model.
//
// prefill, decode, agg: workers. They serve /v1/* themselves, answer GET
// /health like Dynamo's system status server, and register with the frontend
// at Options.FrontendURL (POST /internal/mock/register with a Registration,
// again every HeartbeatInterval; POST /internal/mock/deregister on graceful
// shutdown). They register under the Dynamo components "prefill", "decode"
// and "backend".
//
// frontend: GET /health is Dynamo's frontend health (FrontendHealth): 200
// with "status" "healthy" and an "instances" list of every live worker's
// endpoints, or "unhealthy" with an empty list — the shape srt-slurm's
// check_dynamo_health parses (see Instance). GET /workers answers in the
// sglang router's shape (RouterWorkers). GET /v1/models lists the workers'
// models. POST /v1/* is forwarded, round robin, to live decode (or agg)
// workers (503 while there is none); prefill workers only count for health.
// With Options.FrontendGenerates the frontend answers itself instead, with
// its own TTFT and ITL, still 503 without a decode worker. A worker whose heartbeat
// is older than WorkerTTL (default 3s) disappears.
//
// # Faults
//
// See Faults: exit before healthy after printing given lines, exit some
// time after healthy, exit after N requests (each with any exit code, 0
// included), hang from the start, hang after N requests. Fault lines are printed verbatim; ordinary log lines carry a
// timestamp. Serve returns *ExitError when a fault makes the engine exit; the
// library never calls os.Exit.
package mockengine
