// Package sbatch translates sbatch's long options, as a recipe's
// sbatch_directives or a profile's directives give them, into the
// slurmrestd job-description fields that carry them, and refuses, named,
// each option the job description cannot express (DirectiveError).
package sbatch
