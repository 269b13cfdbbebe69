package runners

import (
	"fmt"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// decoder walks the YAML node tree as InferenceX's Pydantic records read
// the same file: every mapping checked against its record's keys, every
// scalar against its field's type. It keeps the first error; once one is
// set every helper returns zero values, so callers read straight through.
type decoder struct {
	file string
	home string // what '~' in a host path expands to
	err  *yamltree.Error
	// lines collects each set field's line for the cluster being read.
	lines map[string]int
}

func (d *decoder) failf(n *yaml.Node, field, format string, args ...any) {
	if d.err != nil {
		return
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	d.err = &yamltree.Error{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) ok() bool { return d.err == nil }

// failRecord refuses the record at field (mapping n) as a whole, at the
// line of its key when it has one.
func (d *decoder) failRecord(n *yaml.Node, field, format string, args ...any) {
	if !d.ok() {
		return
	}
	d.failf(n, field, format, args...)
	if l, ok := d.lines[field]; ok {
		d.err.Line = l
	}
}

// key is one field of a record: its alias (the YAML spelling) and its
// Python name, which the records also accept (populate_by_name=True).
type key struct {
	alias, name string
	set         func(v *yaml.Node, field string)
}

// record reads mapping n as a record with the given keys; an unknown key
// is refused (extra="forbid"). It returns the keys that were set, by alias.
func (d *decoder) record(n *yaml.Node, field string, keys []key) map[string]bool {
	set := map[string]bool{}
	spelled := map[string]*yaml.Node{}
	d.pairs(n, field, func(k, v *yaml.Node) {
		i := slices.IndexFunc(keys, func(c key) bool { return c.alias == k.Value || c.name != "" && c.name == k.Value })
		if i < 0 {
			known := make([]string, len(keys))
			for j, c := range keys {
				known[j] = c.alias
			}
			d.failf(k, yamltree.JoinField(field, k.Value), "unknown key (InferenceX's records forbid extra keys; %s takes %s)", orTop(field), strings.Join(known, ", "))
			return
		}
		c := keys[i]
		if prev, twice := spelled[c.alias]; twice {
			d.failf(k, yamltree.JoinField(field, c.alias), "set twice, as %q (line %d) and %q", prev.Value, prev.Line, k.Value)
			return
		}
		spelled[c.alias] = k
		set[c.alias] = true
		f := yamltree.JoinField(field, c.alias)
		if d.lines != nil {
			d.lines[f] = k.Line
		}
		c.set(v, f)
	})
	return set
}

func orTop(field string) string {
	if field == "" {
		return "the file"
	}
	return field
}

// require refuses a record that lacks a required key.
func (d *decoder) require(n *yaml.Node, field string, set map[string]bool, names ...string) {
	for _, name := range names {
		if !set[name] {
			d.failRecord(n, field, "%s: required", name)
			return
		}
	}
}

// pairs calls each for every key of mapping n, after refusing a key set
// twice (PyYAML would keep the last silently) and a merge key.
func (d *decoder) pairs(n *yaml.Node, field string, each func(k, v *yaml.Node)) {
	n = yamltree.DeAlias(n)
	if !d.ok() {
		return
	}
	if n == nil || n.Kind != yaml.MappingNode {
		d.failf(n, field, "must be a mapping, got %s", kindOf(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content) && d.ok(); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.failf(k, field, "a key must be a string, got %s", kindOf(k))
			return
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			d.failf(k, field, "YAML merge keys (<<) are not read in runners.yaml: write the keys out")
			return
		}
		if first, twice := seen[k.Value]; twice {
			d.failf(k, yamltree.JoinField(field, k.Value), "key set twice (lines %d and %d): PyYAML would silently keep the last; remove one", first, k.Line)
			return
		}
		seen[k.Value] = k.Line
		each(k, v)
	}
}

func kindOf(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Tag == "!!null":
		return "null"
	default:
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
}

// yaml11 are the plain scalars PyYAML (YAML 1.1, what InferenceX loads
// runners.yaml with) reads as something other than a string, where
// yaml.v3 (YAML 1.2) reads a string: sexagesimal numbers (4:00:00),
// yes/no/on/off, dates.
var yaml11 = regexp.MustCompile(`^(?:[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*)$`)

// str is a Pydantic str field: a string, never a number, bool or null.
func (d *decoder) str(n *yaml.Node, field string) string {
	n = yamltree.DeAlias(n)
	if !d.ok() {
		return ""
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		d.failf(n, field, "must be a string, got %s", kindOf(n))
		return ""
	}
	if n.Tag != "!!str" {
		d.failf(n, field, "must be a string, got %s (quote it)", kindOf(n))
		return ""
	}
	if n.Style == 0 && yaml11.MatchString(n.Value) {
		d.failf(n, field, "%q is not a string to InferenceX's YAML 1.1 loader (a number, bool or date there): quote it", n.Value)
		return ""
	}
	return n.Value
}

// nonEmpty is a str with min_length=1.
func (d *decoder) nonEmpty(n *yaml.Node, field string) string {
	s := d.str(n, field)
	if d.ok() && s == "" {
		d.failf(n, field, "must not be empty")
	}
	return s
}

var digits = regexp.MustCompile(`^\s*[-+]?[0-9]+\s*$`)

// integer is a Pydantic int field in lax mode: a YAML int (underscores
// and 0x/0o/0b as YAML 1.1 reads them), a float with no fraction, or a
// string of digits. Bools are refused.
func (d *decoder) integer(n *yaml.Node, field string) int {
	n = yamltree.DeAlias(n)
	if !d.ok() {
		return 0
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		d.failf(n, field, "must be an integer, got %s", kindOf(n))
		return 0
	}
	var v int64
	var err error
	switch {
	case n.Tag == "!!int":
		v, err = strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	case n.Tag == "!!float":
		f, ferr := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		err = ferr
		if ferr == nil && (f != float64(int64(f)) || f > 1<<53 || f < -(1<<53)) {
			err = fmt.Errorf("has a fraction")
		}
		v = int64(f)
	case n.Tag == "!!str" && digits.MatchString(n.Value):
		v, err = strconv.ParseInt(strings.TrimSpace(n.Value), 10, 64)
	default:
		err = fmt.Errorf("not an integer")
	}
	if err != nil || v != int64(int(v)) {
		d.failf(n, field, "must be an integer, got %s", kindOf(n))
		return 0
	}
	return int(v)
}

// positive is an int with gt=0.
func (d *decoder) positive(n *yaml.Node, field string) int {
	v := d.integer(n, field)
	if d.ok() && v <= 0 {
		d.failf(n, field, "must be greater than 0, got %d", v)
	}
	return v
}

// port is an int with ge=1, le=65535.
func (d *decoder) port(n *yaml.Node, field string) int {
	v := d.integer(n, field)
	if d.ok() && (v < 1 || v > 65535) {
		d.failf(n, field, "must be a port in 1..65535, got %d", v)
	}
	return v
}

// boolean is a Pydantic bool in lax mode: a YAML bool, 0/1, or one of the
// strings Pydantic reads as one.
func (d *decoder) boolean(n *yaml.Node, field string) bool {
	n = yamltree.DeAlias(n)
	if !d.ok() {
		return false
	}
	if n != nil && n.Kind == yaml.ScalarNode {
		switch {
		case n.Tag == "!!bool":
			var b bool
			if n.Decode(&b) == nil {
				return b
			}
		case n.Tag == "!!int" && (n.Value == "0" || n.Value == "1"):
			return n.Value == "1"
		case n.Tag == "!!str":
			switch strings.ToLower(n.Value) {
			case "1", "on", "t", "true", "y", "yes":
				return true
			case "0", "off", "f", "false", "n", "no":
				return false
			}
		}
	}
	d.failf(n, field, "must be true or false, got %s", kindOf(n))
	return false
}

// literal is a str restricted to the given values.
func (d *decoder) literal(n *yaml.Node, field string, values ...string) string {
	s := d.str(n, field)
	if d.ok() && !slices.Contains(values, s) {
		d.failf(n, field, "%q is not one of %s", s, strings.Join(values, ", "))
	}
	return s
}

// strings reads a list of strings (a Pydantic tuple[str, ...]).
func (d *decoder) strings(n *yaml.Node, field string, each func(v *yaml.Node, field, s string)) []string {
	n = yamltree.DeAlias(n)
	if !d.ok() {
		return nil
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		d.failf(n, field, "must be a list, got %s", kindOf(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		s := d.str(c, f)
		if each != nil && d.ok() {
			each(c, f, s)
		}
		out = append(out, s)
	}
	return out
}

// longOptions is a list of LongOption: "--name[=value]" only, so options
// can also be rendered as srtctl mappings.
func (d *decoder) longOptions(n *yaml.Node, field string) []string {
	return d.strings(n, field, func(v *yaml.Node, f, s string) {
		if !strings.HasPrefix(s, "--") || len(s) == 2 {
			d.failf(v, f, "expected a long option such as --container-remap-root, got %q", s)
		}
	})
}

// strMap is a Pydantic dict[str, str].
func (d *decoder) strMap(n *yaml.Node, field string) map[string]string {
	out := map[string]string{}
	d.pairs(n, field, func(k, v *yaml.Node) {
		f := yamltree.JoinField(field, k.Value)
		if d.lines != nil {
			d.lines[f] = k.Line
		}
		out[k.Value] = d.str(v, f)
	})
	return out
}

// hostPath is a HostPath: '~' expanded to the runner's home, then
// absolute, as pathlib sees it (no '..' is resolved).
func (d *decoder) hostPath(n *yaml.Node, field string) string {
	s := d.str(n, field)
	if !d.ok() {
		return ""
	}
	p, err := expandUser(s, d.home)
	if err != nil {
		d.failf(n, field, "%v", err)
		return ""
	}
	if !strings.HasPrefix(p, "/") {
		d.failf(n, field, "cluster path must be absolute: %s", s)
		return ""
	}
	return cleanPosix(p)
}

// expandUser expands a leading ~ or ~user as pathlib's expanduser does.
func expandUser(p, home string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	dir := home
	if name != "" {
		u, err := user.Lookup(name)
		if err != nil {
			return "", fmt.Errorf("%q: no user %q to expand ~%s", p, name, name)
		}
		dir = u.HomeDir
	}
	if dir == "" {
		return "", fmt.Errorf("%q: no home directory to expand ~ (HOME is not set)", p)
	}
	if rest == "" {
		return dir, nil
	}
	return dir + "/" + rest, nil
}

// cleanPosix drops repeated and trailing slashes and "." parts, as
// pathlib.Path does; ".." stays, as it does there.
func cleanPosix(p string) string {
	parts := strings.Split(p, "/")
	kept := parts[:0]
	for _, s := range parts {
		if s != "" && s != "." {
			kept = append(kept, s)
		}
	}
	return "/" + strings.Join(kept, "/")
}

// relativeInside reports whether p is a relative path without "..".
func relativeInside(p string) bool {
	if strings.HasPrefix(p, "/") {
		return false
	}
	return !slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}
