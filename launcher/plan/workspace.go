package plan

// WorkspaceMount is where the InferenceX checkout appears in containers.
const WorkspaceMount = "/infmax-workspace"
