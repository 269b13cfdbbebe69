package submit

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// JobView shows the job run would submit for plan, for a person: the
// request (nodes, GRES, partition, account, time, exclusive, the sbatch
// directives and the job-description fields they become) and the batch
// script. It builds the job description exactly as run does, so a
// directive slurmbench cannot send is an error here too.
func JobView(pl *plan.Plan) (string, error) {
	spec, err := JobSpec(pl, nil)
	if err != nil {
		return "", err
	}
	script, err := BatchScript(pl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	row := func(k, format string, args ...any) { fmt.Fprintf(&b, "  %-11s %s\n", k, fmt.Sprintf(format, args...)) }
	b.WriteString("\nSlurm job (submitted through slurmrestd)\n")
	row("name", "%s", spec.Name)
	row("nodes", "%s, %d task per node", spec.Nodes, spec.TasksPerNode)
	gres := "none"
	if spec.GPUsPerNode > 0 {
		gres = fmt.Sprintf("gres/gpu:%d per node (tres_per_node)", spec.GPUsPerNode)
	}
	row("GRES", "%s", gres)
	row("partition", "%s", spec.Partition)
	account := spec.Account
	if account == "" {
		account = "- (your default account)"
	}
	row("account", "%s", account)
	row("time limit", "%d min", pl.Slurm.TimeLimitMinutes)
	exclusive := "no"
	if spec.Exclusive {
		exclusive = "yes (whole nodes)"
	}
	row("exclusive", "%s", exclusive)
	if len(pl.Slurm.Directives) > 0 {
		var ds []string
		for _, k := range profile.SortedKeys(pl.Slurm.Directives) {
			d := "--" + k
			if v := pl.Slurm.Directives[k]; v != "" {
				d += "=" + v
			}
			ds = append(ds, d)
		}
		row("directives", "%s", strings.Join(ds, " "))
		var fields []string
		for k, v := range spec.Extra {
			j, _ := json.Marshal(v)
			fields = append(fields, k+"="+string(j))
		}
		sort.Strings(fields)
		row("", "→ job description %s", strings.Join(fields, " "))
	}
	row("work dir", "%s", spec.WorkDir)
	row("output", "%s (stdout and stderr)", spec.StdOut)
	row("comment", "%s", spec.Comment)
	env := "PATH"
	if len(pl.EnvPassthrough) > 0 {
		env += ", " + strings.Join(pl.EnvPassthrough, ", ") + " (values from the submitting environment)"
	}
	for _, p := range pl.EnvPassthroughPrefixes {
		env += ", every " + p + "* variable (env.passthrough_prefixes)"
	}
	row("environment", "%s", env)
	b.WriteString("  batch script:\n")
	for _, line := range strings.Split(strings.TrimSuffix(script, "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	return b.String(), nil
}
