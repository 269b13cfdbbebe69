// Package fingerprint is InferenceX's recipe fingerprint: a SHA-256 of a
// matrix row's fields and the concrete recipe its job runs, with
// concurrency, the job name and what the launcher adds for a cluster left
// out, so one recipe keeps one fingerprint across its concurrencies and
// clusters (RECIPES.md § Recipe fingerprints).
//
// The definition is InferenceX's planner's, read in
// inferencex-e2e/infx/matrix/fingerprint.py@3e15e2b5 (its newest stored
// version; 3c5fea9f is the older one, without benchmark.env.CONC_LIST and
// with a single variant):
//
//   - the row is the generated matrix row minus conc, exp-name and
//     recipe-fingerprint (RowExcluded);
//   - each recipe is the bound variant the launcher submits, composed with
//     its shared block (and the telemetry block for power rows), bound
//     without a cluster, minus name, benchmark.concurrencies,
//     benchmark.env.CONC, benchmark.env.CONC_LIST and
//     telemetry.dcgm_exporter.port (RecipeExcluded);
//   - the digest is sha256 over json.dumps(value, sort_keys=True,
//     separators=(",", ":"), ensure_ascii=True) encoded as UTF-8, of
//     {"row": row, "recipe": [recipe, ...]} — or of the row alone when the
//     row names no srt-recipe.
//
// Canonical reproduces that serialization byte for byte for the values a
// YAML or JSON document decodes to; FromYAML decodes a YAML node with
// PyYAML's (YAML 1.1) scalar rules, so a recipe read here types its values
// as InferenceX's yaml.safe_load does before they are hashed.
package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/pyjson"
	"go.yaml.in/yaml/v3"
)

// RowExcluded are the row fields the fingerprint leaves out: one recipe
// serves every concurrency and experiment name.
var RowExcluded = []string{"conc", "exp-name", "recipe-fingerprint"}

// RecipeExcluded are the recipe paths the fingerprint leaves out: the job
// name (srtctl numbers zip variants by position), the point's
// concurrencies and the cluster's DCGM exporter port.
var RecipeExcluded = [][]string{
	{"name"},
	{"benchmark", "concurrencies"},
	{"benchmark", "env", "CONC"},
	{"benchmark", "env", "CONC_LIST"},
	{"telemetry", "dcgm_exporter", "port"},
}

// Row is the fingerprint of a row without an srt-slurm recipe: its fields
// alone.
func Row(row map[string]any) (string, error) {
	return digest(rowIdentity(row))
}

// Recipe is the fingerprint of row with the concrete recipes its job
// submits (decoded maps or *yaml.Node documents). A row that names no
// srt-recipe hashes its fields alone, whatever recipes are given; a row
// that names one needs at least one recipe.
func Recipe(row map[string]any, recipes ...any) (string, error) {
	if s, _ := row["srt-recipe"].(string); s == "" {
		return Row(row)
	}
	if len(recipes) == 0 {
		return "", fmt.Errorf("row names srt-recipe %v but no composed recipe was given", row["srt-recipe"])
	}
	list := make([]any, 0, len(recipes))
	for i, r := range recipes {
		if n, ok := r.(*yaml.Node); ok {
			v, err := FromYAML(n)
			if err != nil {
				return "", fmt.Errorf("recipe %d: %w", i, err)
			}
			r = v
		}
		m, ok := r.(map[string]any)
		if !ok {
			return "", fmt.Errorf("recipe %d is a %T, not a mapping", i, r)
		}
		for _, p := range RecipeExcluded {
			m = without(m, p)
		}
		list = append(list, m)
	}
	return digest(map[string]any{"row": rowIdentity(row), "recipe": list})
}

func rowIdentity(row map[string]any) map[string]any {
	out := make(map[string]any, len(row))
	for k, v := range row {
		out[k] = v
	}
	for _, k := range RowExcluded {
		delete(out, k)
	}
	return out
}

// without returns m minus the key at path, copying only the mappings on
// the way (the caller's map is never changed); a path through a non-map
// leaves m as it is.
func without(m map[string]any, path []string) map[string]any {
	v, ok := m[path[0]]
	if !ok {
		return m
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	if len(path) == 1 {
		delete(out, path[0])
		return out
	}
	sub, ok := v.(map[string]any)
	if !ok {
		return m
	}
	out[path[0]] = without(sub, path[1:])
	return out
}

func digest(v any) (string, error) {
	b, err := Canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical is v as Python's json.dumps(v, sort_keys=True,
// separators=(",", ":"), ensure_ascii=True) writes it. Maps must have
// string keys; NaN and infinities are written NaN, Infinity and -Infinity,
// as Python's allow_nan default does.
func Canonical(v any) ([]byte, error) {
	v, err := plain(v)
	if err != nil {
		return nil, err
	}
	return pyjson.AppendSorted(nil, v, pyjson.Compact)
}

// plain replaces every YAML node inside v with the value PyYAML reads
// from it (FromYAML), so what is hashed is plain maps, lists and scalars.
func plain(v any) (any, error) {
	switch x := v.(type) {
	case *yaml.Node:
		return FromYAML(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			p, err := plain(e)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p, err := plain(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = p
		}
		return out, nil
	}
	return v, nil
}

// PyYAML's implicit resolvers (yaml/resolver.py, YAML 1.1), the ones that
// differ from YAML 1.2's: a float needs a dot (1e5 is a string), an
// exponent needs its sign, 0o is not octal, 1:30 is sexagesimal.
var (
	pyBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	pyInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	pyFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	pyNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	pyTime  = regexp.MustCompile(`^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?`)
)

// FromYAML decodes n as PyYAML's safe_load would: plain scalars typed by
// YAML 1.1's rules, quoted ones strings, the last of repeated keys kept,
// merge keys (<<) applied. A timestamp is an error: json.dumps cannot
// write the datetime PyYAML makes of it.
func FromYAML(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return FromYAML(n.Content[0])
	case yaml.AliasNode:
		return FromYAML(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := FromYAML(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		var merged []map[string]any
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, vn := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && k.Style == 0 {
				ms, err := mergeSources(vn)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", k.Line, err)
				}
				merged = append(merged, ms...)
				continue
			}
			kv, err := scalar(k)
			if err != nil {
				return nil, err
			}
			key, ok := kv.(string)
			if !ok {
				return nil, fmt.Errorf("line %d: key %q is not a string (json.dumps with sort_keys would not write it as one)", k.Line, k.Value)
			}
			v, err := FromYAML(vn)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			out[key] = v
		}
		// Explicit keys win over merged ones; earlier merge sources win
		// over later ones.
		for i := len(merged) - 1; i >= 0; i-- {
			for k, v := range merged[i] {
				if _, own := out[k]; !own {
					out[k] = v
				}
			}
		}
		return out, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// Normalize rewrites the plain scalar values under n (not mapping keys)
// to the tag and canonical text PyYAML's safe_load gives them, and keeps
// only the last of a mapping's repeated keys, so that decoding n with
// yaml.v3 afterwards reads what InferenceX reads: yes/no/on/off become
// booleans, 1:30 the integer 90, 0o17 and 1e5 strings. A scalar PyYAML
// cannot type (a timestamp) is left as it is.
func Normalize(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			Normalize(c)
		}
	case yaml.MappingNode:
		// PyYAML keeps the last of repeated keys (at the first one's
		// place); yaml.v3 refuses to decode them.
		at := map[string]int{}
		var content []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Value != "<<" {
				if j, dup := at[k.Value]; dup {
					content[j+1] = v
					continue
				}
				at[k.Value] = len(content)
			}
			content = append(content, k, v)
		}
		n.Content = content
		for i := 1; i < len(n.Content); i += 2 {
			Normalize(n.Content[i])
		}
	case yaml.ScalarNode:
		if n.Style != 0 {
			return
		}
		v, err := scalar(n)
		if err != nil {
			return
		}
		switch x := v.(type) {
		case nil:
			n.Tag, n.Value = "!!null", "null"
		case bool:
			n.Tag, n.Value = "!!bool", strconv.FormatBool(x)
		case int:
			n.Tag, n.Value = "!!int", strconv.Itoa(x)
		case float64:
			n.Tag = "!!float"
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				n.Value = strconv.FormatFloat(x, 'g', -1, 64)
			}
		case string:
			n.Tag = "!!str"
		}
	}
}

func mergeSources(n *yaml.Node) ([]map[string]any, error) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	var nodes []*yaml.Node
	switch n.Kind {
	case yaml.MappingNode:
		nodes = []*yaml.Node{n}
	case yaml.SequenceNode:
		nodes = n.Content
	default:
		return nil, fmt.Errorf("<< takes a mapping or a list of mappings")
	}
	var out []map[string]any
	for _, c := range nodes {
		v, err := FromYAML(c)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("<< takes a mapping or a list of mappings")
		}
		out = append(out, m)
	}
	return out, nil
}

func scalar(n *yaml.Node) (any, error) {
	s := n.Value
	explicit := n.Style&yaml.TaggedStyle != 0
	if n.Style&^yaml.TaggedStyle != 0 && !explicit {
		return s, nil // quoted or block: a string
	}
	tag := n.Tag
	if !explicit && tag == "!!str" {
		// A plain scalar yaml.v3 tagged !!str although YAML 1.2 reads its
		// text as something else was built as a string on purpose (a
		// binder writing "8192" into an env): it stays one.
		probe := yaml.Node{Kind: yaml.ScalarNode, Value: s}
		if probe.ShortTag() != "!!str" {
			return s, nil
		}
	}
	if !explicit {
		switch {
		case pyNull.MatchString(s):
			tag = "!!null"
		case pyBool.MatchString(s):
			tag = "!!bool"
		case pyInt.MatchString(s):
			tag = "!!int"
		case pyFloat.MatchString(s):
			tag = "!!float"
		case pyTime.MatchString(s):
			tag = "!!timestamp"
		default:
			tag = "!!str"
		}
	}
	switch tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return true, nil
		case "no", "false", "off":
			return false, nil
		}
	case "!!int":
		return pyIntValue(s)
	case "!!float":
		return pyFloatValue(s)
	case "!!str":
		return s, nil
	case "!!timestamp":
		return nil, fmt.Errorf("line %d: %q is a timestamp, which json.dumps cannot write", n.Line, s)
	}
	return nil, fmt.Errorf("line %d: %q: unsupported tag %s", n.Line, s, tag)
}

func pyIntValue(s string) (any, error) {
	s = strings.ReplaceAll(s, "_", "")
	sign := int64(1)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	var v int64
	var err error
	switch {
	case s == "0":
	case strings.HasPrefix(s, "0b"):
		v, err = strconv.ParseInt(s[2:], 2, 64)
	case strings.HasPrefix(s, "0x"):
		v, err = strconv.ParseInt(s[2:], 16, 64)
	case strings.HasPrefix(s, "0"):
		v, err = strconv.ParseInt(s[1:], 8, 64)
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, perr := strconv.ParseInt(part, 10, 64)
			if perr != nil {
				return nil, perr
			}
			v = v*60 + d
		}
	default:
		v, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil {
		return nil, fmt.Errorf("integer %q: %w", s, err)
	}
	return int(sign * v), nil
}

func pyFloatValue(s string) (any, error) {
	s = strings.ReplaceAll(s, "_", "")
	switch strings.ToLower(strings.TrimPrefix(s, "+")) {
	case ".inf":
		return math.Inf(1), nil
	case "-.inf":
		return math.Inf(-1), nil
	case ".nan":
		return math.NaN(), nil
	}
	if strings.Contains(s, ":") {
		sign := 1.0
		if s[0] == '-' || s[0] == '+' {
			if s[0] == '-' {
				sign = -1
			}
			s = s[1:]
		}
		v := 0.0
		for _, part := range strings.Split(s, ":") {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return nil, err
			}
			v = v*60 + d
		}
		return sign * v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("float %q: %w", s, err)
	}
	return f, nil
}
