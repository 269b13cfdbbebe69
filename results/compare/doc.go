// Package compare holds "slurmbench results compare": LoadResultSet reads
// a run's logs or a staged directory, Compare builds the baseline-versus-
// candidate table (throughput per GPU, latencies, gsm8k, energy from a
// publishable power package), and Gate holds it to --fail-on rules.
package compare
