package plan

// WorkspaceMount is where the InferenceX checkout appears in containers.
const WorkspaceMount = "/infmax-workspace"

// ConfigsMount is where a profile's paths.configs appears in containers:
// srtctl mounts its checkout's configs/ there, and recipes name their
// setup scripts and preamble files under it.
const ConfigsMount = "/configs"
