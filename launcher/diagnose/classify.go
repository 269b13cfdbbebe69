// Package diagnose tells why an engine process failed, from the tail of its
// log: CUDA out of memory, CUDA graph capture, NCCL, a missing model, a
// port in use, a missing Python module. The job driver writes the result
// to outcome.json with a one-line hint, so a user reads "lower
// mem-fraction-static" instead of a raw 50-line log tail.
//
// Classify matches known error patterns, not the bare word "error": an
// INFO line with error_rate=0 is not an error. Lines that Python prints as
// traceback context (File "...", line N, and the source line under it) are
// skipped, so an engine's own `raise Exception("Capture cuda graph
// failed...")` source line does not count; the exception line that ends
// the traceback does.
package diagnose

import (
	"regexp"
	"strings"
)

// Class is a failure class, the "class" of outcome.json.
type Class string

// Classes recognised in logs, in the priority Classify gives them when
// several match (the more specific cause first: a CUDA graph capture that
// failed for lack of memory is an OOM).
const (
	// SetupFailed: a setup step of the process (the recipe's setup_script,
	// the Dynamo install) exited non-zero in its container, so its program
	// never started: `slurmbench exec` says which step
	// (job/driver.SetupError, printed as "slurmbench: setup step N (ARGV): ...").
	SetupFailed  Class = "setup_failed"
	CUDAOOM      Class = "cuda_oom"
	CUDAGraph    Class = "cuda_graph"
	NCCL         Class = "nccl"
	ModelMissing Class = "model_missing"
	PortInUse    Class = "port_in_use"
	PythonImport Class = "python_import"
	// ContainerRuntime: pyxis, enroot or the OCI runtime could not start
	// the container (the engine never ran); RuntimeLog has the runtime's
	// own log.
	ContainerRuntime Class = "container_runtime"
)

// Classes the driver assigns from what it observed, not from logs.
const (
	// HealthDeadline: the health gate's deadline passed with every process alive.
	HealthDeadline Class = "health_deadline"
	// ExitedBeforeHealthy: a process exited before the gate passed and its
	// log shows no recognised error.
	ExitedBeforeHealthy Class = "exited_before_healthy"
	// DiedAfterHealthy: a process exited after the gate passed.
	DiedAfterHealthy Class = "died_after_healthy"
	// BenchmarkInvalid: the benchmark ran but its result cannot be used.
	BenchmarkInvalid Class = "benchmark_invalid"
	// EvalFailed: the eval ran and missed its threshold, or failed.
	EvalFailed Class = "eval_failed"
	// Cancelled: the job was cancelled (scancel, time limit, a signal).
	Cancelled Class = "cancelled"
	// PrepareFailed: a step that runs before the workers (the model
	// pre-download) failed or outlasted its limit.
	PrepareFailed Class = "prepare_failed"
	// ImageImportFailed: importing the image into a node's own squash
	// cache, before anything started there, failed or outlasted its limit.
	ImageImportFailed Class = "image_import_failed"
	// HostSetupFailed: a node's host_setup commands, run on its bare host
	// before anything else of the job, failed or outlasted their limit.
	HostSetupFailed Class = "host_setup_failed"
	// PowerTelemetry: required power telemetry could not start or is not
	// publishable (docs/power.md).
	PowerTelemetry Class = "power_telemetry"
	// Unknown: nothing recognised.
	Unknown Class = "unknown"
)

// Classes the runner on the login node assigns when the driver could not
// write an outcome.
const (
	// Interrupted: slurmbench run or attach was interrupted and cancelled the job.
	Interrupted Class = "interrupted"
	// Allocation: the job ended without a driver outcome (never started,
	// or killed under the driver).
	Allocation Class = "allocation"
)

var hints = map[Class]string{
	CUDAOOM:             "lower mem-fraction-static (sglang) / gpu-memory-utilization (vllm), or max-running-requests / cuda-graph-max-bs",
	CUDAGraph:           "disable-cuda-graph or lower cuda-graph-max-bs; check the engine/torch versions of the image",
	NCCL:                "check NCCL_* env, network interfaces (NCCL_SOCKET_IFNAME) and that all ranks started",
	ModelMissing:        "model path not mounted or wrong alias: check [models] in the profile",
	PortInUse:           "another process holds the port: a leftover step from an earlier job on this node",
	PythonImport:        "the image lacks a module the engine needs: check the container image and the dynamo install",
	SetupFailed:         "a setup step failed in the container before the program started: read the process's log above first_error (a setup_script runs from /configs: paths.configs, which a workflow run stages from srt-slurm's configs/ with the recipe mirror's over it; the image must have bash)",
	ContainerRuntime:    "the container runtime could not start the container: read its log (runtime_log): a missing or unreadable squash file or bundle, /dev/fuse or user namespaces on the node, a mount source that does not exist, an image without /bin/sh (enroot), or a bundle the OCI runtime refuses (oci.conf)",
	HealthDeadline:      "workers did not register in time: raise health_check.max_attempts or read the worker logs",
	ExitedBeforeHealthy: "the process exited before the frontend was healthy without a known error: read its exit code and log tail",
	DiedAfterHealthy:    "a process died after the health gate passed: read its log tail (a crash under load, or killed by the OOM killer)",
	BenchmarkInvalid:    "the benchmark result cannot be used (failed requests or missing metrics): read the benchmark log, then the engine logs",
	PrepareFailed:       "the model pre-download before the workers failed: read logs/model_download.log (HF_TOKEN for a gated model, network or proxy access from the node, HF_HOME's mount in profile [container] mounts)",
	ImageImportFailed:   "importing the image into a node's own squash cache failed: read logs/import_image_<node>.log (enroot on the node, registry access and credentials from the node, space in the node-local paths.squash_dir)",
	HostSetupFailed:     "a node's host_setup commands failed or timed out on its bare host: read logs/host_setup_<node>.log (commands run as the job's user: anything privileged needs passwordless sudo -n; a prompt hangs until timeout_seconds)",
	PowerTelemetry:      "the DCGM exporters did not report every GPU or stalled: read logs/telemetry_*.out and power/manifest.json reason_codes, or set telemetry.required: false",
	Unknown:             "no known error pattern: read the first error line and the log tail",
}

// Hint is a one-line suggestion for c; unknown classes get Unknown's.
func (c Class) Hint() string {
	if h, ok := hints[c]; ok {
		return h
	}
	return hints[Unknown]
}

// Diagnosis is what Classify found.
type Diagnosis struct {
	Class      Class  `json:"class"`
	FirstError string `json:"first_error"` // the line that decided the class, trimmed; "" if none
	Hint       string `json:"hint"`
	Line       int    `json:"line"` // 1-based index of FirstError in the lines; 0 if none
}

// With returns d reclassified as c, with c's hint and d's first error
// line kept: the driver turns an Unknown from the logs into
// ExitedBeforeHealthy or DiedAfterHealthy from what it saw.
func (d Diagnosis) With(c Class) Diagnosis {
	d.Class, d.Hint = c, c.Hint()
	return d
}

// patterns are the log signatures of each class, in priority order.
var patterns = []struct {
	class Class
	res   []*regexp.Regexp
}{
	// First: the program never ran, whatever the setup step's own output
	// says (a pip error in a setup script is not the image's missing
	// module). The shim's line (exitcode.Report of job/driver.SetupError),
	// behind srun's label when there is one.
	{SetupFailed, res(`(^|\s)slurmbench: setup step \d+ \(`)},
	{CUDAOOM, res(
		`OutOfMemoryError`, // torch.OutOfMemoryError, torch.cuda.OutOfMemoryError
		`CUDA out of memory`,
		`CUDA error: out of memory`,
		`cudaErrorMemoryAllocation`,
		`CUBLAS_STATUS_ALLOC_FAILED`,
	)},
	{CUDAGraph, res(
		`(?i)capture cuda graph failed`,
		`(?i)cuda ?graph capture.*(fail|error)`,
		`(?i)(fail|error).*cuda ?graph capture`,
		`operation not permitted when stream is capturing`,
		`cudaErrorStreamCapture`,
	)},
	{NCCL, res(
		`NCCL error`,
		`NCCL WARN`,
		`\bnccl(Internal|System|UnhandledCuda|Remote)Error\b`,
		`ncclInvalidUsage`,
		`(?i)watchdog caught collective operation timeout`,
		`Some NCCL operations have failed or timed out`,
		`NCCL communicator was aborted`,
		`DistBackendError`,
		// Error-level c10d lines ("[E ProcessGroupNCCL.cpp:...]", glog style
		// "[E1203 10:00:00.1 123 ProcessGroupNCCL.cpp:...]"); torch's warnings
		// "[W ProcessGroupNCCL.cpp...]" are printed by healthy runs too.
		`\[E[0-9]*[^\]]*ProcessGroupNCCL`,
		`ProcessGroupNCCL.*(Watchdog|[Tt]imed out|[Tt]imeout)`,
	)},
	{ModelMissing, res(
		`No such file or directory.*(/model|config\.json)`,
		`(/model|config\.json).*No such file or directory`,
		`is not a local folder and is not a valid model identifier`,
		`Repository Not Found`,
		`does not appear to have a file named config\.json`,
		`HFValidationError`,
		`Can't load the configuration of '`,
		`Can't load tokenizer for '`,
		`We couldn't connect to 'https://huggingface\.co'`,
	)},
	{PortInUse, res(
		`(?i)address already in use`,
		`EADDRINUSE`,
		`(?i)\bport\b.* already in use`,
	)},
	{PythonImport, res(
		`\b(ModuleNotFoundError|ImportError): `,
		`\bAttributeError: .*has no attribute`,
	)},
	// pyxis's errors in slurmstepd's stderr (NVIDIA/pyxis@v0.24.0:
	// pyxis_slurmstepd.c, enroot.c) and enroot's own when a step runs
	// `enroot start` (NVIDIA/enroot@v4.1.2: "[ERROR] " from common::err, and
	// its C helpers' err(3) lines "enroot-<helper>: failed to ...").
	{ContainerRuntime, res(
		`pyxis: container start failed`,
		`pyxis: failed to (create|import|start|get|attach|read|set)`,
		`pyxis: child \d+ failed with error code`,
		`pyxis: couldn't `,
		`spank: required plugin spank_pyxis\.so: .* failed`,
		`\benroot-[a-z0-9]+: failed to `,
		`^\[ERROR\] (Failed to mount|No such file or directory|Could not|Invalid|Command not found|File already exists|URL )`,
		`fuse: device not found`,
	)},
}

// enrootLogStart is the line after which pyxis prints enroot's log, each
// line prefixed by "pyxis:     " (NVIDIA/pyxis@v0.24.0 enroot.c memfd_print_log).
var (
	enrootLogStart = regexp.MustCompile(`pyxis: printing (enroot|importer) log file:`)
	pyxisLogLine   = regexp.MustCompile(`pyxis:  +(\S.*)$`)
	enrootOwnLine  = regexp.MustCompile(`^\[(ERROR|WARN|INFO)\] |^enroot-[a-z0-9]+: `)
)

// maxRuntimeLog bounds RuntimeLog.
const maxRuntimeLog = 30

// RuntimeLog returns enroot's own log from a step's output: the lines pyxis
// printed after "printing enroot log file:" (without pyxis's prefix), or,
// for a step that ran `enroot start` itself, enroot's [ERROR]/[WARN]/[INFO]
// lines and its helpers' messages. At most the last 30; nil when none.
func RuntimeLog(lines []string) []string {
	var out []string
	inPyxis := false
	for _, l := range lines {
		switch {
		case enrootLogStart.MatchString(l):
			inPyxis = true
			continue
		case inPyxis:
			if m := pyxisLogLine.FindStringSubmatch(l); m != nil {
				out = append(out, strings.TrimRight(m[1], " \t\r"))
				continue
			}
			inPyxis = false
		}
		if enrootOwnLine.MatchString(l) {
			out = append(out, strings.TrimRight(l, " \t\r"))
		}
	}
	if len(out) > maxRuntimeLog {
		out = out[len(out)-maxRuntimeLog:]
	}
	return out
}

// errorToken marks a line as an error when no pattern matched: Python
// exceptions and tracebacks, log levels ERROR/CRITICAL/FATAL in level
// position, "fatal:", and Slurm's or the container runtime's "error:".
var errorToken = regexp.MustCompile(`[A-Za-z]Error:|Exception|Traceback \(most recent call last\)|(^|[\s\])])(ERROR|CRITICAL|FATAL)([\s:\]]|$)|\bfatal:|(^|\b(srun|slurmstepd|pyxis|enroot)[^ ]*: )error: `)

// frame is a traceback frame line; the line after it is source code.
var frame = regexp.MustCompile(`File ".*", line \d+`)

const tracebackHeader = "Traceback (most recent call last):"

func res(exprs ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		out[i] = regexp.MustCompile(e)
	}
	return out
}

// Classify finds why a process failed from its log lines (oldest first,
// as Tail returns them). The class is the highest-priority class whose
// pattern any line matches, and FirstError the first line matching that
// class. Without a match, the class is Unknown and FirstError the first
// line that looks like an error (for a traceback, the exception line that
// ends it), or "" when there is none.
func Classify(lines []string) Diagnosis {
	context := tracebackContext(lines)
	first := make(map[Class]int, len(patterns))
	for i, l := range lines {
		if context[i] {
			continue
		}
		for _, p := range patterns {
			if _, seen := first[p.class]; seen {
				continue
			}
			for _, re := range p.res {
				if re.MatchString(l) {
					first[p.class] = i
					break
				}
			}
		}
	}
	for _, p := range patterns {
		if i, ok := first[p.class]; ok {
			return diagnosis(p.class, lines, i)
		}
	}
	for i, l := range lines {
		if context[i] || !errorToken.MatchString(l) {
			continue
		}
		if strings.Contains(l, tracebackHeader) {
			if j := exceptionLine(lines, context, i); j >= 0 {
				i = j
			}
		}
		return diagnosis(Unknown, lines, i)
	}
	return Diagnosis{Class: Unknown, Hint: Unknown.Hint()}
}

func diagnosis(c Class, lines []string, i int) Diagnosis {
	return Diagnosis{Class: c, FirstError: strings.TrimSpace(lines[i]), Hint: c.Hint(), Line: i + 1}
}

// tracebackContext marks the lines Python prints as traceback context:
// frame lines, the source lines indented under each, and, in an
// unprefixed traceback, every indented line up to the exception line.
// Loggers that prefix every line (vLLM's "ERROR 06-01 12:00:00 [core.py:1]")
// are handled by comparing indentation after the frame line's prefix.
func tracebackContext(lines []string) []bool {
	ctx := make([]bool, len(lines))
	inTraceback := false
	framePrefix, frameIndent := "", -1 // of the last frame line; -1: none just before
	for i, l := range lines {
		if loc := frame.FindStringIndex(l); loc != nil {
			ctx[i] = true
			framePrefix = strings.TrimRight(l[:loc[0]], " \t")
			frameIndent = loc[0] - len(framePrefix)
			continue
		}
		switch {
		case frameIndent >= 0 && strings.HasPrefix(l, framePrefix) && indent(l[len(framePrefix):]) > frameIndent:
			ctx[i] = true // source under the frame; frames without source have none
			continue
		case inTraceback && indent(l) > 0:
			ctx[i] = true // more source, carets (^^^^)
		case strings.Contains(l, tracebackHeader):
			inTraceback = true
		case inTraceback && strings.TrimSpace(l) != "":
			inTraceback = false // the exception line ends the traceback
		}
		frameIndent = -1
	}
	return ctx
}

func indent(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t"))
}

// exceptionLine is the index of the exception line ending the traceback
// whose header is at h, or -1.
func exceptionLine(lines []string, context []bool, h int) int {
	for j := h + 1; j < len(lines); j++ {
		if context[j] || strings.TrimSpace(lines[j]) == "" {
			continue
		}
		if strings.Contains(lines[j], tracebackHeader) {
			return -1
		}
		return j
	}
	return -1
}
