package yamldoc

import (
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Strict key checking: yaml.v3's KnownFields does not know schema
// versions, nor name a key by the field path a recipe author reads, so the
// reader checks the node tree against the Go type before decoding it.

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// DecodesItself reports a type whose pointer is a yaml.Unmarshaler: it
// reads its node as it likes, so its keys are not checked.
func DecodesItself(t reflect.Type) bool { return reflect.PointerTo(t).Implements(unmarshalerType) }

// CheckKeys checks that every key of the tree n is one the Go type t reads
// as schema version `schema` reads it (a field tagged `schema:"2"` is a key
// only a schema-2 document may write, unknown to v1), through merge keys,
// maps and lists; a type that decodes itself (yaml.Unmarshaler) keeps its
// keys as written and is not looked into. The first key t does not read is
// an *yamltree.Error at its line and dotted field (below field), its message
// unknown's for the struct, parent field and key.
func CheckKeys(path string, n *yaml.Node, t reflect.Type, field string, schema int, unknown func(t reflect.Type, field, key string) string) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if DecodesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the wrong type
		}
		fields, open := Fields(t, schema)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				for _, m := range yamltree.MergeSources(v) {
					if err := CheckKeys(path, m, t, field, schema, unknown); err != nil {
						return err
					}
				}
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				if open {
					continue
				}
				return &yamltree.Error{File: path, Line: k.Line, Field: yamltree.JoinField(field, k.Value), Msg: unknown(t, field, k.Value)}
			}
			if err := CheckKeys(path, v, ft, yamltree.JoinField(field, k.Value), schema, unknown); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if err := CheckKeys(path, n.Content[i+1], t.Elem(), yamltree.JoinField(field, n.Content[i].Value), schema, unknown); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				if err := CheckKeys(path, c, t.Elem(), field, schema, unknown); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Fields maps the YAML keys struct t reads, as schema version schema
// reads it (below 2, fields tagged `schema:"2"` are left out), to their
// types; open is true when an inline map or node catches every other key.
func Fields(t reflect.Type, schema int) (fields map[string]reflect.Type, open bool) {
	fields = map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" || schema < 2 && f.Tag.Get("schema") == "2" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && !DecodesItself(ft) {
				inner, innerOpen := Fields(ft, schema)
				for k, v := range inner {
					fields[k] = v
				}
				open = open || innerOpen
			} else {
				open = true
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields, open
}
