package sbatch

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DirectiveError is an sbatch directive the job description cannot carry,
// named.
type DirectiveError struct {
	Directive string // the sbatch long option, without "--"
	Value     string
	Reason    string
	// Unknown is an option with no translation (a typo, or one sbatch has
	// that this table lacks).
	Unknown bool
}

func (e *DirectiveError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("sbatch directive %q is not supported: not an sbatch option slurmbench translates to a slurmrestd job field", e.Directive)
	}
	if e.Value == "" {
		return fmt.Sprintf("sbatch directive %q: %s", e.Directive, e.Reason)
	}
	return fmt.Sprintf("sbatch directive %q = %q: %s", e.Directive, e.Value, e.Reason)
}

// setNumber is slurmrestd's optional number ({set, infinite, number}).
func setNumber(n int64) map[string]any {
	return map[string]any{"set": true, "infinite": false, "number": n}
}

// directiveKind says how an sbatch option's value becomes a job field.
type directiveKind int

const (
	dString         directiveKind = iota // the value as is
	dList                                // comma-separated → array of strings
	dUpperList                           // comma-separated → array of upper-case flags
	dInt                                 // whole number
	dNumber                              // whole number as {set, number}
	dMemMB                               // memory size (K/M/G/T suffix, MB default) as {set, number}
	dMemMBInt                            // memory size as a plain number of MB
	dMinutes                             // minutes, or [D-]HH:MM[:SS] / MM:SS as Slurm reads a time
	dTrue                                // a flag: sets the field true
	dFalse                               // a flag: sets the field false
	dGresGPU                             // count → "gres/gpu:N" (the TRES string)
	dGresGPUMem                          // memory per GPU → "gres/gpu:MB"
	dGres                                // "gpu:8" or "gpu:h100:8" → "gres/gpu:8", comma-separated
	dConst                               // a fixed value (Directive.constVal)
	dGresFlags                           // enforce-binding / disable-binding → job flag
	dKillInvalidDep                      // yes / no → job flag
)

type directiveSpec struct {
	field    string
	kind     directiveKind
	constVal any
}

// sbatchDirectives maps sbatch's long options to slurmrestd v0.0.41/42
// job description (job_desc_msg) fields.
var sbatchDirectives = map[string]directiveSpec{
	"account":             {"account", dString, nil},
	"array":               {"array", dString, nil},
	"clusters":            {"clusters", dString, nil},
	"cluster-constraint":  {"cluster_constraint", dString, nil},
	"constraint":          {"constraints", dString, nil},
	"container":           {"container", dString, nil},
	"contiguous":          {"contiguous", dTrue, nil},
	"core-spec":           {"core_specification", dInt, nil},
	"cpu-freq":            {"cpu_frequency", dString, nil},
	"cpus-per-gpu":        {"cpus_per_tres", dGresGPU, nil},
	"cpus-per-task":       {"cpus_per_task", dInt, nil},
	"dependency":          {"dependency", dString, nil},
	"distribution":        {"distribution", dString, nil},
	"exclude":             {"excluded_nodes", dList, nil},
	"exclusive":           {"shared", dConst, "none"},
	"gpu-bind":            {"tres_bind", dString, nil}, // prefixed "gres/gpu:" below
	"gpu-freq":            {"tres_freq", dString, nil}, // prefixed "gpu:" below
	"gpus":                {"tres_per_job", dGresGPU, nil},
	"gpus-per-node":       {"tres_per_node", dGresGPU, nil},
	"gpus-per-socket":     {"tres_per_socket", dGresGPU, nil},
	"gpus-per-task":       {"tres_per_task", dGresGPU, nil},
	"gres":                {"tres_per_node", dGres, nil},
	"gres-flags":          {"flags", dGresFlags, nil},
	"kill-on-invalid-dep": {"flags", dKillInvalidDep, nil},
	"spread-job":          {"flags", dConst, []string{"SPREAD_JOB"}},
	"hold":                {"hold", dTrue, nil},
	"licenses":            {"licenses", dString, nil},
	"mail-type":           {"mail_type", dUpperList, nil},
	"mail-user":           {"mail_user", dString, nil},
	"mcs-label":           {"mcs_label", dString, nil},
	"mem":                 {"memory_per_node", dMemMB, nil},
	"mem-per-cpu":         {"memory_per_cpu", dMemMB, nil},
	"mem-per-gpu":         {"memory_per_tres", dGresGPUMem, nil},
	"mincpus":             {"minimum_cpus_per_node", dInt, nil},
	"network":             {"network", dString, nil},
	"nice":                {"nice", dInt, nil},
	"no-requeue":          {"requeue", dFalse, nil},
	"nodelist":            {"required_nodes", dList, nil},
	"ntasks-per-gpu":      {"ntasks_per_tres", dInt, nil},
	"overcommit":          {"overcommit", dTrue, nil},
	"prefer":              {"prefer", dString, nil},
	"priority":            {"priority", dNumber, nil},
	"qos":                 {"qos", dString, nil},
	"reboot":              {"reboot", dTrue, nil},
	"requeue":             {"requeue", dTrue, nil},
	"reservation":         {"reservation", dString, nil},
	"segment":             {"segment_size", dInt, nil},
	"sockets-per-node":    {"sockets_per_node", dInt, nil},
	"thread-spec":         {"thread_specification", dInt, nil},
	"threads-per-core":    {"threads_per_core", dInt, nil},
	"time-min":            {"time_minimum", dMinutes, nil},
	"tmp":                 {"temporary_disk_per_node", dMemMBInt, nil},
	"wait-all-nodes":      {"wait_all_nodes", dString, nil}, // 0 or 1, checked below
	"wckey":               {"wckey", dString, nil},
}

// plannedDirectives are sbatch options whose job fields slurmbench's plan
// sets itself: a recipe sets them through its own fields instead.
var plannedDirectives = map[string]string{
	"job-name": "name (the recipe's name)", "nodes": "the node count the topology needs",
	"ntasks": "one task per node (the in-job driver)", "ntasks-per-node": "one task per node (the in-job driver)",
	"output": "the run directory's batch log", "error": "the run directory's batch log",
	"chdir": "the run directory", "time": "slurm.time_limit", "partition": "slurm.partition",
	"comment": "", // joined with the run tag by the caller
}

// unexpressible are sbatch options slurmrestd's job description has no
// field for (they act in sbatch itself, or name a field v0.0.41 dropped),
// and the two whose field takes a value slurmbench does not compute
// ("not translated").
var unexpressible = map[string]string{
	"wait":             "sbatch --wait blocks the sbatch command; slurmbench waits on the job itself",
	"parsable":         "an sbatch output format, not part of the job",
	"test-only":        "sbatch's dry run, not part of the job",
	"export":           "the job's environment is set by slurmbench (profile [env])",
	"export-file":      "the job's environment is set by slurmbench (profile [env])",
	"get-user-env":     "the job's environment is set by slurmbench (profile [env])",
	"cores-per-socket": "the v0.0.41/42 job description has no cores-per-socket field",
	"hint":             "sbatch turns --hint into several CPU-binding options; the job description takes no hint",
	"propagate":        "the v0.0.41/42 job description has no propagate field",
	"uid":              "slurmrestd submits as the authenticated user",
	"begin":            "not translated: the job description's begin_time is a UNIX time and slurmbench does not evaluate sbatch's time expressions (now+…, dates, midnight)",
	"deadline":         "not translated: the job description's deadline is a UNIX time and slurmbench does not evaluate sbatch's time expressions",
	"gid":              "slurmrestd submits as the authenticated user",
}

// Directives translates sbatch long options (as a recipe's
// sbatch_directives or a profile's directives give them: option → value,
// "" for a bare flag) into job-description fields. Options the plan sets
// itself are skipped ("comment") or refused; anything the job description
// cannot express is refused, every such option named.
func Directives(d map[string]string) (map[string]any, error) {
	if len(d) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]any{}
	var errs []error
	for _, k := range keys {
		v := strings.TrimSpace(d[k])
		fail := func(reason string) { errs = append(errs, &DirectiveError{Directive: k, Value: v, Reason: reason}) }
		if k == "comment" {
			continue
		}
		if why, ok := plannedDirectives[k]; ok {
			fail("set by slurmbench's plan (" + why + ")")
			continue
		}
		if why, ok := unexpressible[k]; ok {
			if strings.HasPrefix(why, "not translated") {
				fail(why)
			} else {
				fail("slurmrestd cannot express it: " + why)
			}
			continue
		}
		spec, ok := sbatchDirectives[k]
		if !ok {
			errs = append(errs, &DirectiveError{Directive: k, Value: v, Unknown: true})
			continue
		}
		val, err := directiveValue(k, spec, v)
		if err != nil {
			fail(err.Error())
			continue
		}
		if flags, ok := val.([]string); ok && spec.field == "flags" {
			prev, _ := out["flags"].([]string)
			out["flags"] = append(prev, flags...)
			continue
		}
		if prev, dup := out[spec.field]; dup {
			fail(fmt.Sprintf("sets %s, which another directive already set to %v", spec.field, prev))
			continue
		}
		out[spec.field] = val
	}
	return out, errors.Join(errs...)
}

func directiveValue(k string, spec directiveSpec, v string) (any, error) {
	whole := func() (int64, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("not a whole number")
		}
		return n, nil
	}
	needValue := spec.kind != dTrue && spec.kind != dFalse && spec.kind != dConst
	if needValue && v == "" {
		return nil, fmt.Errorf("needs a value")
	}
	switch spec.kind {
	case dString:
		switch k {
		case "gpu-bind":
			return "gres/gpu:" + v, nil
		case "gpu-freq":
			return "gpu:" + v, nil
		case "wait-all-nodes":
			if v != "0" && v != "1" {
				return nil, fmt.Errorf("want 0 or 1")
			}
			return v == "1", nil
		}
		return v, nil
	case dList:
		return strings.Split(v, ","), nil
	case dUpperList:
		parts := strings.Split(strings.ToUpper(v), ",")
		if len(parts) == 1 && parts[0] == "ALL" {
			parts = []string{"BEGIN", "END", "FAIL", "INVALID_DEPENDENCY", "REQUEUE", "STAGE_OUT"} // sbatch's ALL
		}
		return parts, nil
	case dInt:
		return whole()
	case dNumber:
		n, err := whole()
		if err != nil {
			return nil, err
		}
		return setNumber(n), nil
	case dMemMB, dMemMBInt:
		mb, err := MemoryMB(v)
		if err != nil {
			return nil, err
		}
		if spec.kind == dMemMBInt {
			return mb, nil
		}
		return setNumber(mb), nil
	case dMinutes:
		m, err := timeMinutes(v)
		if err != nil {
			return nil, err
		}
		return setNumber(m), nil
	case dTrue:
		return true, nil
	case dFalse:
		return false, nil
	case dConst:
		return spec.constVal, nil
	case dGresGPU:
		if _, err := whole(); err != nil {
			return nil, err
		}
		return "gres/gpu:" + v, nil
	case dGresGPUMem:
		mb, err := MemoryMB(v)
		if err != nil {
			return nil, err
		}
		return "gres/gpu:" + strconv.FormatInt(mb, 10), nil
	case dGresFlags:
		switch v {
		case "enforce-binding":
			return []string{"GRES_BINDING_ENFORCED"}, nil
		case "disable-binding":
			return []string{"GRES_BINDING_DISABLED"}, nil
		}
		return nil, fmt.Errorf("want enforce-binding or disable-binding (the job flags the job description has)")
	case dKillInvalidDep:
		switch v {
		case "yes":
			return []string{"KILL_INVALID_DEPENDENCY"}, nil
		case "no":
			return []string{"NO_KILL_INVALID_DEPENDENCY"}, nil
		}
		return nil, fmt.Errorf("want yes or no")
	case dGres:
		parts := strings.Split(v, ",")
		for i, p := range parts {
			if p == "" || strings.ContainsAny(p, " \t") {
				return nil, fmt.Errorf("%q is not a gres (name[:type]:count)", p)
			}
			parts[i] = "gres/" + strings.TrimPrefix(p, "gres/")
		}
		return strings.Join(parts, ","), nil
	}
	return nil, fmt.Errorf("no translation")
}

// MemoryMB reads a Slurm memory size: a number with an optional K, M, G
// or T suffix (M when none), in megabytes.
func MemoryMB(v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult, div := int64(1), int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'K', 'k':
			div, v = 1024, v[:n-1]
		case 'M', 'm':
			v = v[:n-1]
		case 'G', 'g':
			mult, v = 1024, v[:n-1]
		case 'T', 't':
			mult, v = 1024*1024, v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a memory size (a number with K, M, G or T)")
	}
	return (n*mult + div - 1) / div, nil
}

// timeMinutes reads a Slurm time as minutes: M, M:S, H:M:S, D-H, D-H:M,
// D-H:M:S (seconds round up, as Slurm does).
func timeMinutes(v string) (int64, error) {
	bad := fmt.Errorf("not a Slurm time (minutes, MM:SS, HH:MM:SS or D-HH[:MM[:SS]])")
	days := int64(0)
	rest := v
	if d, r, ok := strings.Cut(v, "-"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 {
			return 0, bad
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	nums := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return 0, bad
		}
		nums[i] = n
	}
	var h, m, s int64
	switch {
	case days > 0 || strings.Contains(v, "-"):
		switch len(nums) {
		case 1:
			h = nums[0]
		case 2:
			h, m = nums[0], nums[1]
		case 3:
			h, m, s = nums[0], nums[1], nums[2]
		default:
			return 0, bad
		}
	default:
		switch len(nums) {
		case 1:
			m = nums[0]
		case 2:
			m, s = nums[0], nums[1]
		case 3:
			h, m, s = nums[0], nums[1], nums[2]
		default:
			return 0, bad
		}
	}
	return days*24*60 + h*60 + m + (s+59)/60, nil
}
