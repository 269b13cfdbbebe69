package recipe

import (
	"strings"

	"github.com/slurmbench/slurmbench/inputs/profile"
)

// yamlHint turns a YAML parser message into what went wrong when the cause
// is a common one: a tab in the indentation (YAML forbids tabs; the parser
// says "found character that cannot start any token"), or a cluster
// profile (TOML) given as the recipe.
func yamlHint(path string, data []byte, line int, msg string) string {
	if profile.LooksLikeProfile(path, data) {
		return "this looks like a cluster profile (TOML), not a recipe (YAML): did you swap --profile (-p) and --recipe (-r)?"
	}
	if strings.Contains(msg, "tab character") {
		return "tabs are not allowed in YAML: indent with spaces (" + msg + ")"
	}
	lines := strings.Split(string(data), "\n")
	if strings.Contains(msg, "cannot start any token") && line >= 1 && line <= len(lines) && strings.Contains(lines[line-1], "\t") {
		return "tabs are not allowed in YAML: indent with spaces (" + msg + ")"
	}
	return msg
}
