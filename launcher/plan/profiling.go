package plan

// Profiling is srtctl's profiling block as the plan runs it (srtctl's
// ProfilingConfig and worker_stage): nsys wraps each worker's program, the
// torch profiler writes where SGLANG_TORCH_PROFILER_DIR says, each worker
// gets its phase's steps in its environment, and around an sa-bench run the
// driver asks every worker leader to start and stop profiling (what srtctl's
// sa-bench script does through its lib/profiling.sh). Everything lands
// under Dir, which the run stages and the summary lists.
type Profiling struct {
	Type string `json:"type"` // nsys, nsys-time or torch
	// Dir is the host directory of the profiles (<logs>/profiles; /logs/profiles
	// in the containers), one subdirectory per mode.
	Dir string `json:"dir"`
	// Trigger lists the start_profile requests the driver sends before the
	// benchmark and the stop_profile requests after it; empty when the
	// capture is time based (nsys-time) or the benchmark's own script
	// sends them.
	Trigger []ProfileTrigger `json:"trigger,omitempty"`
}

// ProfileTrigger is one worker leader's start/stop profiling request.
type ProfileTrigger struct {
	Role Role `json:"role"`
	// URL is the leader's base URL ({ip:N} filled by the driver); StartPath
	// and StopPath are Dynamo's /engine/… or SGLang's own.
	URL       string `json:"url"`
	StartPath string `json:"start_path"`
	StopPath  string `json:"stop_path"`
	// Body is the start request's JSON (output_dir, start_step, num_steps,
	// activities), as lib/profiling.sh builds it.
	Body string `json:"body"`
}
