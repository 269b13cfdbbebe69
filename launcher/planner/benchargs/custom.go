package benchargs

import (
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// interpreters run their first operand as the script.
var interpreters = map[string]bool{"bash": true, "sh": true, "python": true, "python3": true}

// Script names the script argv runs and, when it lies outside the
// workspace and every mount, why it may be missing.
func Script(argv, mounts []string, ws string) (string, string) {
	script := argv[0]
	if interpreters[path.Base(argv[0])] {
		script = ""
		for _, a := range argv[1:] {
			if !strings.HasPrefix(a, "-") {
				script = a
				break
			}
		}
		if script == "" {
			return "", ""
		}
	}
	if !strings.Contains(script, "/") {
		return script, "" // a program on the container's PATH
	}
	if !path.IsAbs(script) {
		return script, "relative path: resolved against the container's working directory, which slurmbench does not set"
	}
	if host, ok := HostPath(script, mounts); ok {
		if strings.HasPrefix(script, plan.WorkspaceMount+"/") && ws != "" {
			if _, err := os.Stat(host); err != nil {
				return script, "not in the workspace " + ws + " (" + err.Error() + ")"
			}
		}
		return script, ""
	}
	return script, "outside the workspace (" + plan.WorkspaceMount + ") and every mount: it must exist in the image"
}

// HostPath maps a container path to the host path of the mount holding it.
func HostPath(p string, mounts []string) (string, bool) {
	best, host := "", ""
	for _, m := range mounts {
		parts := strings.Split(m, ":")
		if len(parts) < 2 {
			continue
		}
		h, c := parts[0], parts[1]
		if (p == c || strings.HasPrefix(p, strings.TrimSuffix(c, "/")+"/")) && len(c) > len(best) {
			best, host = c, filepath.Join(h, strings.TrimPrefix(p, c))
		}
	}
	return host, best != ""
}

// CustomConcurrencies are the concurrencies a custom workload is asked
// for, as agentic_srt.sh and srt_fixed_sequence.sh read them,
// ${CONC_LIST:-$CONC}: the step's own environment (benchmark.env, the
// recipe's) first, then --conc / CONC_LIST, then the step's CONC, then the
// submitting environment's CONC. fromFlag reports that --conc gave them (so
// the step's environment must carry them). nil when none is readable: not
// a list of positive numbers, slurmbench does not guess.
func CustomConcurrencies(env map[string]string, flag []int, envConc string) (concs []int, fromFlag bool) {
	parse := func(list string) []int {
		var out []int
		for _, f := range strings.Fields(list) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				return nil
			}
			out = append(out, n)
		}
		return out
	}
	switch {
	case env["CONC_LIST"] != "":
		return parse(env["CONC_LIST"]), false
	case len(flag) > 0:
		return append([]int(nil), flag...), true
	case env["CONC"] != "":
		return parse(env["CONC"]), false
	}
	return parse(envConc), false
}
