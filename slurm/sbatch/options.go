package sbatch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Option is one sbatch long option, as Options renders it: "" Value for a
// bare flag.
type Option struct {
	Name, Value string
}

// Arg is the option as one argv element: --name or --name=value.
func (o Option) Arg() string {
	if o.Value == "" {
		return "--" + o.Name
	}
	return "--" + o.Name + "=" + o.Value
}

// reverseField is how one job-description field goes back to sbatch: the
// option and a function from the field's (JSON-decoded) value to the
// option's value.
type reverseField struct {
	option string
	value  func(any) (string, bool)
}

// Options is the inverse of Directives, over the whole job description
// slurmbench submits: each field as the sbatch option that sets it
// (Directives' table read backwards, plus the fields the plan sets: name,
// partition, nodes, time_limit, ...). "script" and "environment" are not
// options and are skipped: the caller gives them to sbatch as its input
// and its environment. A field no sbatch option sets, or a value the
// option cannot carry, is refused naming the field, never dropped.
func Options(desc map[string]any) ([]Option, error) {
	keys := make([]string, 0, len(desc))
	for k := range desc {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a map: the same description renders the same options
	var out []Option
	for _, k := range keys {
		v := desc[k]
		switch k {
		case "script", "environment":
			continue
		case "flags":
			opts, err := flagOptions(v)
			if err != nil {
				return nil, err
			}
			out = append(out, opts...)
			continue
		case "requeue":
			b, ok := v.(bool)
			if !ok {
				return nil, fieldError(k, v, "not true or false")
			}
			out = append(out, Option{Name: map[bool]string{true: "requeue", false: "no-requeue"}[b]})
			continue
		case "shared":
			if s, ok := oneString(v); !ok || s != "none" {
				return nil, fieldError(k, v, `only "none" (sbatch --exclusive) goes back to an sbatch option`)
			}
			out = append(out, Option{Name: "exclusive"})
			continue
		}
		r, ok := reverseFields[k]
		if !ok {
			return nil, fieldError(k, v, "no sbatch option sets this job-description field")
		}
		s, ok := r.value(v)
		if !ok {
			return nil, fieldError(k, v, "not a value sbatch --"+r.option+" takes")
		}
		out = append(out, Option{Name: r.option, Value: s})
	}
	return out, nil
}

func fieldError(field string, v any, why string) error {
	b, _ := json.Marshal(v)
	return fmt.Errorf("job description field %s = %s: %s", field, b, why)
}

// reverseFields: a field → the sbatch option that sets it, for every field
// of sbatchDirectives and the plan's own fields. Fields several options
// set (tres_per_node: --gpus-per-node and --gres) go back through the most
// general one.
var reverseFields = func() map[string]reverseField {
	m := map[string]reverseField{
		// The fields slurmbench's plan and submit set (plannedDirectives).
		"name":                      {"job-name", plainString},
		"comment":                   {"comment", plainString},
		"partition":                 {"partition", plainString},
		"account":                   {"account", plainString},
		"nodes":                     {"nodes", nodeCount},
		"current_working_directory": {"chdir", plainString},
		"standard_output":           {"output", plainString},
		"standard_error":            {"error", plainString},
		"standard_input":            {"input", plainString},
		"time_limit":                {"time", number},
		"tasks_per_node":            {"ntasks-per-node", number},
		"tasks":                     {"ntasks", number},
		"tres_per_node":             {"gres", gresList},
	}
	for opt, spec := range sbatchDirectives {
		if _, done := m[spec.field]; done || spec.field == "flags" || spec.field == "shared" || spec.field == "requeue" {
			continue
		}
		var f func(any) (string, bool)
		switch spec.kind {
		case dString:
			f = plainString
			switch opt {
			case "gpu-bind":
				f = trimmed("gres/gpu:")
			case "gpu-freq":
				f = trimmed("gpu:")
			case "wait-all-nodes":
				f = boolDigit
			}
		case dList, dUpperList:
			f = commaList
		case dInt, dNumber, dMinutes:
			f = number
		case dMemMB, dMemMBInt:
			f = megabytes
		case dTrue:
			f = flagTrue
		case dGresGPU:
			f = trimmed("gres/gpu:")
		case dGresGPUMem:
			f = func(v any) (string, bool) {
				s, ok := trimmed("gres/gpu:")(v)
				return s + "M", ok && s != ""
			}
		default:
			continue
		}
		m[spec.field] = reverseField{opt, f}
	}
	return m
}()

// unsafeValue: what an option value cannot hold on sbatch's command line or
// a #SBATCH line (a NUL or a line break).
func unsafeValue(s string) bool { return strings.ContainsAny(s, "\x00\n\r") }

func plainString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok && s != "" && !unsafeValue(s)
}

func trimmed(prefix string) func(any) (string, bool) {
	return func(v any) (string, bool) {
		s, ok := plainString(v)
		if !ok || !strings.HasPrefix(s, prefix) {
			return "", false
		}
		return strings.TrimPrefix(s, prefix), true
	}
}

func boolDigit(v any) (string, bool) {
	b, ok := v.(bool)
	return map[bool]string{true: "1", false: "0"}[b], ok
}

func flagTrue(v any) (string, bool) {
	b, ok := v.(bool)
	return "", ok && b
}

// number reads a whole number, bare or as slurmrestd's {set, infinite,
// number}; an infinite or unset one has no sbatch spelling here.
func number(v any) (string, bool) {
	if m, ok := v.(map[string]any); ok {
		if set, _ := m["set"].(bool); !set {
			return "", false
		}
		if inf, _ := m["infinite"].(bool); inf {
			return "", false
		}
		v = m["number"]
	}
	switch n := v.(type) {
	case float64:
		if n < 0 || n != float64(int64(n)) {
			return "", false
		}
		return strconv.FormatInt(int64(n), 10), true
	case int:
		return strconv.Itoa(n), n >= 0
	case int64:
		return strconv.FormatInt(n, 10), n >= 0
	case json.Number:
		i, err := n.Int64()
		return strconv.FormatInt(i, 10), err == nil && i >= 0
	}
	return "", false
}

func megabytes(v any) (string, bool) {
	s, ok := number(v)
	return s + "M", ok
}

// nodeCount is "3" or "2-3" (a string in the job description) or a number.
func nodeCount(v any) (string, bool) {
	if s, ok := plainString(v); ok {
		return s, !strings.ContainsAny(s, " \t")
	}
	return number(v)
}

func commaList(v any) (string, bool) {
	var parts []string
	switch l := v.(type) {
	case []any:
		for _, e := range l {
			s, ok := plainString(e)
			if !ok || strings.Contains(s, ",") {
				return "", false
			}
			parts = append(parts, s)
		}
	case []string:
		parts = l
	case string:
		return plainString(l)
	default:
		return "", false
	}
	return strings.Join(parts, ","), len(parts) > 0
}

// gresList turns "gres/gpu:4,gres/nic:1" back into --gres's "gpu:4,nic:1".
func gresList(v any) (string, bool) {
	s, ok := plainString(v)
	if !ok {
		return "", false
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if !strings.HasPrefix(p, "gres/") || len(p) == len("gres/") {
			return "", false
		}
		parts[i] = strings.TrimPrefix(p, "gres/")
	}
	return strings.Join(parts, ","), true
}

func oneString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []any:
		if len(x) == 1 {
			s, ok := x[0].(string)
			return s, ok
		}
	case []string:
		if len(x) == 1 {
			return x[0], true
		}
	}
	return "", false
}

// jobFlagOptions: the job flags Directives sets, as their options.
var jobFlagOptions = map[string]Option{
	"GRES_BINDING_ENFORCED":      {"gres-flags", "enforce-binding"},
	"GRES_BINDING_DISABLED":      {"gres-flags", "disable-binding"},
	"KILL_INVALID_DEPENDENCY":    {"kill-on-invalid-dep", "yes"},
	"NO_KILL_INVALID_DEPENDENCY": {"kill-on-invalid-dep", "no"},
	"SPREAD_JOB":                 {"spread-job", ""},
}

func flagOptions(v any) ([]Option, error) {
	var flags []string
	switch l := v.(type) {
	case []string:
		flags = l
	case []any:
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fieldError("flags", v, "not a list of flag names")
			}
			flags = append(flags, s)
		}
	default:
		return nil, fieldError("flags", v, "not a list of flag names")
	}
	var out []Option
	for _, f := range flags {
		o, ok := jobFlagOptions[f]
		if !ok {
			return nil, fieldError("flags", v, "no sbatch option sets job flag "+f)
		}
		out = append(out, o)
	}
	return out, nil
}
