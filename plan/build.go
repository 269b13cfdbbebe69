package plan

func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// WorkspaceMount is where the InferenceX checkout appears in containers.
const WorkspaceMount = "/infmax-workspace"
