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
// Three rules shape the code:
//   - A query that fails is an error, never a job state.
//   - A submit is never retried blindly: after an ambiguous failure the job is
//     looked up by its unique submit key before anything is sent again.
//   - A token never appears in an error or a log line.
package slurm
