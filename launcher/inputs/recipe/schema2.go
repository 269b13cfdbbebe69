package recipe

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// The schema-2 reader's side of this package: which `schema:` a document
// declares, the keys a schema-2 document may have (checked strictly before
// anything moves), and the call of package schema2, which normalizes the
// document on the YAML node tree into the v1-shaped one that the one
// decoder, validator and planner read. What v2 has and v1 lacks is decoded
// into the fields of model_v2.go.

// SupportedSchemas are the recipe layouts slurmbench reads.
var SupportedSchemas = []int{1, 2}

// v2Doc is the set of keys a schema-2 recipe may have, for strict key
// checking before normalization: the internal model (schema-2 fields
// included) plus the authoring vocabularies that normalization removes.
type v2Doc struct {
	Recipe `yaml:",inline"`
	Schema *Raw    `yaml:"schema"`
	Engine *Raw    `yaml:"engine"`
	Roles  v2Roles `yaml:"roles"`
}

// v2Roles is the roles: block; its keys are the only role names.
type v2Roles struct {
	Prefill *v2Role `yaml:"prefill"`
	Decode  *v2Role `yaml:"decode"`
	Agg     *v2Role `yaml:"agg"`
}

// v2Role is one role (roles.py _ROLE_SPEC_KEYS at v2.2.x).
type v2Role struct {
	Nodes     *Raw             `yaml:"nodes"`
	Workers   *int             `yaml:"workers"`
	GPUs      *int             `yaml:"gpus"`
	Env       EnvMap           `yaml:"env"`
	Args      map[string]Value `yaml:"args"`
	ExtraArgs []string         `yaml:"extra_args"`
	Engine    *Raw             `yaml:"engine"`
	KVEvents  *Raw             `yaml:"kv_events"`
	Sidecar   *bool            `yaml:"sidecar"`
	Critical  *bool            `yaml:"critical"`
}

// v2Engine is the mapping form of engine: the type plus engine-wide knobs,
// which srtctl merges into backend (the per-mode keys belong on roles).
// Its keys are checked with v2Doc's, before normalization.
type v2Engine struct {
	Type              string  `yaml:"type"`
	Connector         *string `yaml:"connector"`
	DPLaunchMode      string  `yaml:"dp_launch_mode"`
	KVEventsConfig    *Raw    `yaml:"kv_events_config"`
	PublishEvents     *bool   `yaml:"publish_events_and_metrics"`
	PublishMetrics    *bool   `yaml:"publish_metrics"`
	AllowPDColoc      *bool   `yaml:"allow_prefill_decode_colocation"`
	AllowPDColocX     *bool   `yaml:"allow_prefill_decode_colocation_across_nodes"`
	SequentialNode    *int    `yaml:"sequential_node_start"`
	NUMABind          *bool   `yaml:"numa_memory_bind"`
	ServedModelName   string  `yaml:"served_model_name"`
	SetVisibleDevices *bool   `yaml:"set_visible_devices"`
	GPUType           string  `yaml:"gpu_type"` // SGLang: accepted for compatibility, never read
}

// SchemaError is a `schema:` value slurmbench does not read.
type SchemaError struct{ Err Error }

func (e *SchemaError) Error() string { return e.Err.Error() }

// schemaVersion reads the top-level `schema:` key: 1 when absent.
func schemaVersion(path string, doc *yaml.Node) (int, error) {
	k, v := yamltree.KeyValue(doc, "schema")
	if v == nil {
		return 1, nil
	}
	v = deAlias(v)
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || (n != 1 && n != 2) {
		return 0, &SchemaError{Error{File: path, Line: k.Line, Field: "schema",
			Msg: fmt.Sprintf("%s is not a recipe schema slurmbench reads; supported: 1 (srt-slurm %s layout; also when schema is absent) and 2 (srt-slurm 2.x)", clip(v.Value), SrtctlRevision)}}
	}
	return n, nil
}

// schemaOfOverrideFile reads `schema` beside base: and inside it; srtctl
// carries the file-level key into every variant. The file-level key is
// removed so the override expansion does not warn about it.
func schemaOfOverrideFile(path string, doc *yaml.Node) (int, error) {
	top, err := schemaVersion(path, doc)
	if err != nil {
		return 0, err
	}
	topKey, _ := yamltree.KeyValue(doc, "schema")
	hasTop := topKey != nil
	yamltree.Delete(doc, "schema")
	inner, err := schemaVersion(path, deAlias(mapGet(doc, "base")))
	if err != nil {
		return 0, err
	}
	innerKey, _ := yamltree.KeyValue(deAlias(mapGet(doc, "base")), "schema")
	hasInner := innerKey != nil
	if hasTop && hasInner && top != inner {
		return 0, &SchemaError{Error{File: path, Line: innerKey.Line, Field: "base.schema", Msg: fmt.Sprintf("schema %d inside base: disagrees with the file's schema %d", inner, top)}}
	}
	if hasTop {
		return top, nil
	}
	return inner, nil
}

// normalizeV2 is schema2.Normalize with this package's key check of a
// schema-2 document, its errors turned into this package's error types.
func normalizeV2(path string, src *yaml.Node) (doc *yaml.Node, spelling schema2.Spelling, warnings []string, err error) {
	doc, spelling, warnings, err = schema2.Normalize(path, src, func(doc *yaml.Node) error { return checkV2Keys(path, doc) })
	var e *schema2.Error
	if !errors.As(err, &e) {
		return doc, spelling, warnings, err
	}
	re := e.Err
	switch e.Kind {
	case schema2.Unsupported:
		return nil, nil, nil, &UnsupportedError{re}
	case schema2.SrtctlRefuses:
		return nil, nil, nil, &SrtctlRefusalError{re}
	}
	return nil, nil, nil, &re
}

// checkV2Keys is the strict key check of a schema-2 document: v2Doc's keys,
// and v2Engine's in the mapping form of engine:.
func checkV2Keys(path string, doc *yaml.Node) error {
	if err := checkKeys(path, doc, reflect.TypeOf(v2Doc{}), "", 2); err != nil {
		return err
	}
	if e := deAlias(mapGet(doc, "engine")); e != nil && e.Kind == yaml.MappingNode {
		return checkKeys(path, e, reflect.TypeOf(v2Engine{}), "engine", 2)
	}
	return nil
}

// display is the field as the recipe spelled it (Spelling.Of).
func (r *Recipe) display(field string) string { return r.spelling.Of(field) }
