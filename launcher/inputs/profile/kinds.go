package profile

import (
	"fmt"
	"strings"
)

// The closed sets of names a profile, a flag or a plan may use. Each is
// checked once, where its text is parsed (TOML, JSON or a flag, through
// UnmarshalText or Parse*): code holding a typed value does not check again.
// The empty value means "not set" and takes the default of whoever reads it.

// Runtime is how processes are put into their container.
type Runtime string

const (
	RuntimePyxis  Runtime = "pyxis"  // srun --container-image (NVIDIA pyxis plugin)
	RuntimeEnroot Runtime = "enroot" // srun ... enroot start <squash> (no plugin needed)
	RuntimeNone   Runtime = "none"   // processes run on the host
	// RuntimeOCI is Slurm's own container support: srun --container=BUNDLE,
	// the bundle unpacked from the image with skopeo and umoci, started by
	// whatever OCI runtime (crun, runc) the site's oci.conf names.
	RuntimeOCI Runtime = "oci"
)

// BenchClient is the program that sends the benchmark's requests.
type BenchClient string

const (
	BenchNative  BenchClient = "native"   // slurmbench's built-in Go client
	BenchSABench BenchClient = "sa-bench" // benchmark_serving.py in the engine container
)

// EvalClient is the program that runs the gsm8k eval.
type EvalClient string

const (
	EvalNative EvalClient = "native"  // slurmbench's built-in Go eval
	EvalLMEval EvalClient = "lm-eval" // lm-evaluation-harness in the engine container
)

// ParseRuntime checks s against the runtimes ("" stays unset).
func ParseRuntime(s string) (Runtime, error) {
	return oneOf(s, RuntimePyxis, RuntimeEnroot, RuntimeOCI, RuntimeNone)
}

// ParseBenchClient checks s against the benchmark clients ("" stays unset).
func ParseBenchClient(s string) (BenchClient, error) {
	return oneOf(s, BenchNative, BenchSABench)
}

// ParseEvalClient checks s against the eval clients ("" stays unset).
func ParseEvalClient(s string) (EvalClient, error) {
	return oneOf(s, EvalNative, EvalLMEval)
}

// UnmarshalText validates a runtime read from TOML or JSON.
func (r *Runtime) UnmarshalText(b []byte) (err error) {
	*r, err = ParseRuntime(string(b))
	return err
}

// UnmarshalText validates a benchmark client read from TOML or JSON.
func (c *BenchClient) UnmarshalText(b []byte) (err error) {
	*c, err = ParseBenchClient(string(b))
	return err
}

// UnmarshalText validates an eval client read from TOML or JSON.
func (c *EvalClient) UnmarshalText(b []byte) (err error) {
	*c, err = ParseEvalClient(string(b))
	return err
}

func oneOf[T ~string](s string, valid ...T) (T, error) {
	if s == "" {
		return "", nil
	}
	names := make([]string, len(valid))
	for i, v := range valid {
		if string(v) == s {
			return v, nil
		}
		names[i] = string(v)
	}
	return "", fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
}
