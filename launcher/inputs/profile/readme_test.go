package profile

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestREADMEKeyTable keeps the profile-key table (docs/profile.md, moved
// there from the README) and the
// Profile struct in step: every TOML key is a row with its type, and every
// row is a key. A key added to the struct fails here until it is documented.
func TestREADMEKeyTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "profile.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "# Cluster profiles\n")
	if !ok {
		t.Fatal(`docs/profile.md has no "# Cluster profiles" heading`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_.]+)` \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		if _, dup := documented[m[1]]; dup {
			t.Errorf("docs/profile.md: key %s has two rows", m[1])
		}
		documented[m[1]] = strings.TrimSpace(m[2])
		if req := strings.TrimSpace(m[4]); req == "" {
			t.Errorf("docs/profile.md: key %s says nothing about being required", m[1])
		}
	}
	keys := map[string]string{}
	tomlKeys(reflect.TypeOf(Profile{}), "", keys)
	if len(keys) < 30 {
		t.Fatalf("found %d profile keys by reflection; the walk is broken", len(keys))
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		got, ok := documented[k]
		switch {
		case !ok:
			t.Errorf("docs/profile.md lacks %s (%s): add a row with type, default and whether it is required", k, keys[k])
		case got != keys[k]:
			t.Errorf("docs/profile.md: %s is documented as %s, the struct says %s", k, got, keys[k])
		}
	}
	for k := range documented {
		if _, ok := keys[k]; !ok {
			t.Errorf("docs/profile.md documents %s, which the profile does not have", k)
		}
	}
}

// tomlKeys collects dotted TOML keys with their README type names.
func tomlKeys(typ reflect.Type, prefix string, out map[string]string) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			tomlKeys(f.Type, prefix+tag+".", out)
			continue
		}
		out[prefix+tag] = typeName(f.Type)
	}
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer: // an optional value: unset is its default
		return typeName(t.Elem())
	case reflect.Slice:
		return "[" + typeName(t.Elem()) + "]"
	case reflect.Map:
		return "{" + typeName(t.Key()) + " = " + typeName(t.Elem()) + "}"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "int"
	case reflect.Bool:
		return "bool"
	case reflect.Float64:
		return "float"
	}
	return t.String()
}
