// Package slurm is a narrow, tolerant client for slurmrestd: the calls a
// benchmark launcher needs (ping, submit, get, list, cancel, nodes,
// partitions, accounting) and nothing else.
//
// It is written against what real slurmrestd servers send, not against a
// generated schema: unknown fields are ignored, job_state may be a string or
// an array, numbers may be bare or {"set","infinite","number"} objects, and
// job ids may be numbers or strings. The API version (v0.0.40..v0.0.44) is
// chosen at run time from what the server serves, unless pinned.
//
// Four rules shape the code:
//   - A query that fails is an error, never a job state; only a terminal
//     state, or a job gone from both slurmctld and accounting on every poll
//     for WaitOptions.GoneWindow (2 minutes), ends a Wait. Any failed poll
//     (408, 429, 5xx, slurmctld's communication errors, a "not found"
//     accounting cannot confirm) is retried with a growing gap, and
//     reported, until the caller's context ends.
//   - A submit is never retried blindly: after an ambiguous failure the job is
//     looked up by its unique submit key until it can no longer appear
//     (the attempt's start + RequestTimeout + SubmitLookupWindow: 60 s by
//     default) before anything is sent again; a submit that gives up
//     cancels whatever it finds under its key.
//   - A token never appears in an error or a log line, and is never sent
//     anywhere but the configured URL: redirects to another host or from
//     https to http are refused, and the environment's proxy is used only
//     when asked (Config.UseEnvProxy).
package slurm
