// Package results names, checks, aggregates, stages and compares the result
// files of a benchmark run, so the numbers a lab reads at the end can be
// trusted (docs/run-directory.md).
//
// After the SA-Bench step, a run's results flow through:
//
//	Collect     every requested concurrency present and valid, else *IncompleteError
//	Stage       copy each result as its StagedName (bounded to NAME_MAX) plus extras
//	Aggregate   per-GPU numbers and ms→s transforms, written by WriteAggregate
//	CopyTree    the logs directory as LOGS/, structure kept, never nested twice
//	BundleDir   multinode_server_logs.tar.gz of the logs directory
//	BuildManifest / WriteManifest   sha256 and size of every artifact, plus Provenance
//
// Every file is written through package atomicfile: temp file, fsync,
// rename, and never silently over a different existing file.
//
// Package results/compare builds the baseline-versus-candidate table of
// "slurmbench results compare" from them.
package results
