// Package workflow is slurmbench's side of InferenceX's benchmark
// workflow: `slurmbench run` and `slurmbench cleanup` run where the
// workflow ran `python -m infx.launch run|cleanup` (in inferencex-e2e/,
// everything in the environment), take the same environment, and leave
// what the workflow's later steps read: results under point_filename's
// names, LOGS/, multinode_server_logs.tar.gz, the eval files and
// meta_env.json, the power receipts, job_event.json (always, atomically),
// the producer stamps and POWER_EXPECTED_CPU_SOURCE in $GITHUB_ENV
// (docs/inferencex.md).
//
// ParseRequest reads the environment into one Request, Run resolves the
// runner's cluster and the row's recipe through a Resolver and hands the
// point to the login node's run (launch.Run), Cleanup cancels the
// runner's jobs and never fails the step.
package workflow
