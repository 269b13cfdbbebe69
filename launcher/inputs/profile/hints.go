package profile

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/slurmbench/slurmbench/internal/suggest"
)

// Error messages that help with a mistyped or misplaced profile: an
// unknown key names its file:line and the closest key of its table; a
// recipe given as the profile is named as such.

var (
	tomlTable = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.\-" ]+?)\s*\]\s*(#.*)?$`)
	tomlKey   = regexp.MustCompile(`^\s*([A-Za-z0-9_.\-"]+)\s*=`)
)

// unknownKeysError names each undecoded key with its line and, when one is
// close, the key meant.
func unknownKeysError(abs string, data []byte, keys []toml.Key) error {
	lines := keyLines(data)
	var msgs []string
	for _, k := range keys {
		name := k.String()
		msg := fmt.Sprintf("unknown key %s", name)
		if l := lines[name]; l > 0 {
			msg = fmt.Sprintf("line %d: %s", l, msg)
		}
		if s := closestKey(reflect.TypeOf(Profile{}), k); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", s)
		}
		msgs = append(msgs, msg)
	}
	sort.Strings(msgs)
	return fmt.Errorf("profile %s: %s", abs, strings.Join(msgs, "; "))
}

// keyLines maps each key's full dotted name to the line it is set on.
func keyLines(data []byte) map[string]int {
	out := map[string]int{}
	table := ""
	for i, line := range strings.Split(string(data), "\n") {
		if m := tomlTable.FindStringSubmatch(line); m != nil && !strings.HasPrefix(strings.TrimSpace(line), "[[") {
			table = strings.ReplaceAll(strings.ReplaceAll(m[1], `"`, ""), " ", "")
			if _, ok := out[table]; !ok {
				out[table] = i + 1
			}
			continue
		}
		if m := tomlKey.FindStringSubmatch(line); m != nil {
			key := strings.ReplaceAll(m[1], `"`, "")
			if table != "" {
				key = table + "." + key
			}
			if _, ok := out[key]; !ok {
				out[key] = i + 1
			}
		}
	}
	return out
}

// closestKey is the known key nearest to k within k's table ("" for none
// close enough): "slurm.parition" gives "slurm.partition".
func closestKey(t reflect.Type, k toml.Key) string {
	for _, part := range k[:len(k)-1] {
		f, ok := tomlField(t, part)
		if !ok {
			return ""
		}
		t = f
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	last := k[len(k)-1]
	best, bestDist := "", max(2, len(last)/3)+1
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		if d := suggest.Distance(last, name); d < bestDist {
			best, bestDist = name, d
		}
	}
	if best == "" {
		return ""
	}
	return strings.Join(append(append([]string{}, k[:len(k)-1]...), best), ".")
}

// tomlField is the type of the field tagged name in struct t.
func tomlField(t reflect.Type, name string) (reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); n == name {
			return t.Field(i).Type, true
		}
	}
	return nil, false
}

// LooksLikeRecipe says whether a file that does not parse as a profile is
// a recipe (YAML): a .yaml/.yml name, or top-level "name:" and "model:" or
// "resources:" lines.
func LooksLikeRecipe(path string, data []byte) bool {
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yaml" || ext == ".yml" {
		return true
	}
	text := "\n" + string(data)
	return strings.Contains(text, "\nname:") && (strings.Contains(text, "\nmodel:") || strings.Contains(text, "\nresources:"))
}

// LooksLikeProfile says whether a file given as a recipe is a profile
// (TOML): a .toml name, or a [slurm] table.
func LooksLikeProfile(path string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return true
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "[slurm]" {
			return true
		}
	}
	return false
}
