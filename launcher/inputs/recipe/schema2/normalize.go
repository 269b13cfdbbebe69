// Package schema2 normalizes a recipe in srt-slurm 2.x's layout. srt-slurm
// 2.x (research/srt-slurm-2) writes recipes as `schema: 2` with new
// vocabularies — engine:, roles:, placement:, services:, dynamo.source —
// and normalizes them, before validation, into the internal fields the v1
// layout fills (core/roles.py expand_engine and expand_roles,
// services/normalize.py expand_services). This package does the same on
// the YAML node tree, so every moved value keeps its line: the result is a
// v1-shaped document that package recipe's one decoder, validator and
// planner read, and a v2 recipe cannot plan differently from its v1
// equivalent. What v2 has and v1 lacks stays in the document for the
// reader's model (recipe's model_v2.go) to decode.
//
// Where srt-slurm versions differ, the rules follow the v2.2.x-era files
// InferenceX pins (roles.py@08b968dd: role keys nodes, workers, gpus, env,
// args, extra_args, engine, kv_events, sidecar, critical) and take from the
// later ones only their stricter load rule (config.py require_current_schema
// @020fbc6c): a v1-only key under `schema: 2` is an error, so an internal
// field cannot be reached by two spellings.
//
// The package knows YAML nodes only, not the recipe model: the reader
// passes in its strict key check and turns this package's *Error into its
// own error types by Kind.
package schema2

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// NotSupported ends the message of a valid srt-slurm 2.x feature
// slurmbench does not run yet; package recipe's ErrUnsupported says it too.
const NotSupported = "not supported by slurmbench yet"

// Kind is which of the reader's errors an *Error is.
type Kind int

const (
	// Invalid is a malformed schema-2 value.
	Invalid Kind = iota
	// Unsupported is valid srt-slurm 2.x that slurmbench does not run.
	Unsupported
	// SrtctlRefuses is a key upstream srt-slurm refuses too (only the
	// SemiAnalysisAI fork reads it).
	SrtctlRefuses
)

// Error is a schema-2 value the normalizer refuses, at the line and under
// the field the user wrote, and which of the reader's errors it is.
type Error struct {
	Kind Kind
	Err  yamltree.Error
}

func (e *Error) Error() string { return e.Err.Error() }

// roleModes maps a role to its mode in backend env / engine-config keys.
var roleModes = []struct{ role, mode string }{{"prefill", "prefill"}, {"decode", "decode"}, {"agg", "aggregated"}}

// engineConfigKeys is roles.py ENGINE_CONFIG_KEY with slurmbench's mock engine.
var engineConfigKeys = map[string]string{"sglang": "sglang_config", "vllm": "vllm_config", "trtllm": "trtllm_config", "mock": "mock_config"}

// v2LegacyKeys are the v1-only spellings (config.py LEGACY_SECTION_KEYS);
// under schema 2 each is refused, naming what replaced it.
var v2LegacyKeys = map[string]map[string]string{
	"resources": {
		"prefill_nodes": "roles.prefill.nodes", "prefill_workers": "roles.prefill.workers", "gpus_per_prefill": "roles.prefill.gpus", "prefill_critical": "roles.prefill.critical",
		"decode_nodes": "roles.decode.nodes", "decode_workers": "roles.decode.workers", "gpus_per_decode": "roles.decode.gpus", "decode_critical": "roles.decode.critical",
		"agg_nodes": "roles.agg.nodes", "agg_workers": "roles.agg.workers", "gpus_per_agg": "roles.agg.gpus", "agg_critical": "roles.agg.critical",
	},
	"frontend":  {"orchestrator_placement": "frontend.placement.node", "dedicated_node": "frontend.placement.node: dedicated"},
	"benchmark": {"client_placement": "benchmark.placement.node", "client_dedicated_node": "benchmark.placement.node: dedicated"},
	"dynamo":    {"version": "dynamo.source.pypi", "hash": "dynamo.source.rev", "wheel": "dynamo.source.wheel", "cargo_patches": "dynamo.source.patches"},
}

// Normalize turns a schema-2 document into the internal (v1-shaped) one;
// src is left as it was. spelling maps each internal field it set to the
// key the user wrote. checkKeys is the reader's strict check of the keys a
// schema-2 document may have (the model is the reader's, not this
// package's); it runs on the flattened document after the legacy and
// fork-only keys are handled and before anything moves, and its error is
// returned as it is. Every other error is an *Error.
func Normalize(path string, src *yaml.Node, checkKeys func(doc *yaml.Node) error) (doc *yaml.Node, spelling Spelling, warnings []string, err error) {
	doc = flatten(src)
	deleteKey(doc, "schema")
	n := &v2Normalizer{path: path, doc: doc, spelling: Spelling{}}
	if err := n.checkLegacy(); err != nil {
		return nil, nil, nil, err
	}
	if err := n.refuseForkOnly(); err != nil {
		return nil, nil, nil, err
	}
	// srt-slurm's own keys that slurmbench does not run, by name (Keys).
	if err := n.refuseByName(); err != nil {
		return nil, nil, nil, err
	}
	if err := checkKeys(doc); err != nil {
		return nil, nil, nil, err
	}
	for _, step := range []func() error{n.engine, n.roles, n.services, n.frontend, n.benchmark, n.dynamo, n.telemetry} {
		if err := step(); err != nil {
			return nil, nil, nil, err
		}
	}
	return doc, n.spelling, n.warnings, nil
}

type v2Normalizer struct {
	path       string
	doc        *yaml.Node
	spelling   Spelling
	engineType string
	warnings   []string
}

func (n *v2Normalizer) errAt(line int, field, format string, args ...any) error {
	return &Error{Kind: Invalid, Err: yamltree.Error{File: n.path, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}}
}

// checkLegacy handles v1-only keys under schema 2 as srt-slurm v2.2.x
// does (docs/legacy-v1.md@17c4ece9: "every field below still loads"; the
// sample's v2.2.1 tree writes benchmark.client_placement under schema 2):
// each loads, with a warning naming its 2.x spelling, except where roles:
// expands into the same field (roles.py _legacy_targets_present), which is
// an error naming both lines.
func (n *v2Normalizer) checkLegacy() error {
	rolesKey, roles := mapKeyValue(n.doc, "roles")
	roles = deAlias(roles)
	roleLine := func(role, key string) (int, string) {
		if rk, _ := mapKeyValue(deAlias(mapGet(roles, role)), key); rk != nil {
			return rk.Line, "roles." + role + "." + key
		}
		return rolesKey.Line, "roles:"
	}
	collide := func(k *yaml.Node, field string, line int, what string) error {
		return n.errAt(k.Line, field, "cannot be combined with %s (line %d): roles: expands into %s; write it in one place", what, line, field)
	}
	if roles != nil {
		if res := deAlias(mapGet(n.doc, "resources")); res != nil {
			for _, rm := range roleModes {
				for key, rkey := range map[string]string{rm.role + "_nodes": "nodes", rm.role + "_workers": "workers", "gpus_per_" + rm.role: "gpus", rm.role + "_critical": "critical"} {
					if k, _ := mapKeyValue(res, key); k != nil {
						line, what := roleLine(rm.role, rkey)
						return collide(k, "resources."+key, line, what)
					}
				}
			}
		}
		if be := deAlias(mapGet(n.doc, "backend")); be != nil {
			for _, rm := range roleModes {
				for key, rkey := range map[string]string{rm.mode + "_environment": "env", rm.mode + "_extra_args": "extra_args"} {
					if k, _ := mapKeyValue(be, key); k != nil {
						line, what := roleLine(rm.role, rkey)
						return collide(k, "backend."+key, line, what)
					}
				}
			}
			for _, cfg := range []string{"sglang_config", "vllm_config", "trtllm_config", "mock_config", "mocker_config"} {
				if k, v := mapKeyValue(be, cfg); k != nil && len(deAlias(v).Content) > 0 {
					return collide(k, "backend."+cfg, rolesKey.Line, "roles: (its args)")
				}
			}
			if k, _ := mapKeyValue(be, "kv_events_config"); k != nil {
				for _, rm := range roleModes {
					if rk, _ := mapKeyValue(deAlias(mapGet(roles, rm.role)), "kv_events"); rk != nil {
						return collide(k, "backend.kv_events_config", rk.Line, "roles."+rm.role+".kv_events")
					}
				}
			}
		}
	}
	for _, top := range []struct{ key, instead string }{
		{"backend", "engine: and roles.<role>.args / env / extra_args / kv_events"},
		{"infra", "services: entries of type etcd and nats"},
	} {
		if k, _ := mapKeyValue(n.doc, top.key); k != nil {
			n.legacy(k, top.key, top.instead)
		}
	}
	for _, section := range []string{"resources", "frontend", "benchmark", "dynamo"} {
		block := deAlias(mapGet(n.doc, section))
		if block == nil || block.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(block.Content); i += 2 {
			if k := block.Content[i]; v2LegacyKeys[section][k.Value] != "" {
				n.legacy(k, section+"."+k.Value, v2LegacyKeys[section][k.Value])
			}
		}
	}
	return nil
}

func (n *v2Normalizer) legacy(k *yaml.Node, field, instead string) {
	n.warnings = append(n.warnings, fmt.Sprintf("%s:%d: %s: the v1 spelling under schema 2; srt-slurm v2.2 still loads it (slurmbench does too) and later versions refuse it: write %s", n.path, k.Line, field, instead))
}

// forkOnlyEngineKeys are engine: knobs only the SemiAnalysisAI fork of
// srt-slurm reads: TileRT's launch settings (upstream's TileRTBackend has
// type and served_model_name only, docs/schema-reference.md) and vLLM's
// set_cuda_visible_devices (upstream spells its knob set_visible_devices).
// Upstream's schema refuses a recipe that sets one.
var forkOnlyEngineKeys = map[string]bool{
	"prefill_container": true, "model_profile": true, "weight_model_type": true, "weights_dir": true,
	"max_seq_len": true, "kv_cache_dtype": true, "prefill_kv_cache_dtype": true, "transport": true,
	"with_mtp": true, "speculative_tokens": true, "set_cuda_visible_devices": true,
}

// refuseForkOnly names the first engine knob only the SemiAnalysisAI fork of
// srt-slurm has (upstream refuses the recipe as an unknown field).
func (n *v2Normalizer) refuseForkOnly() error {
	e := deAlias(mapGet(n.doc, "engine"))
	if e == nil || e.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(e.Content); i += 2 {
		if k := e.Content[i]; forkOnlyEngineKeys[k.Value] {
			return &Error{Kind: SrtctlRefuses, Err: yamltree.Error{File: n.path, Line: k.Line, Field: "engine." + k.Value, Msg: "srt-slurm 2.x refuses it too: its engine schema has no such field; only the SemiAnalysisAI fork of srt-slurm reads it, and slurmbench reproduces upstream"}}

		}
	}
	return nil
}

// engine maps engine: (and roles.<role>.engine) onto backend (expand_engine).
func (n *v2Normalizer) engine() error {
	ek, ev := mapKeyValue(n.doc, "engine")
	backend := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	typeLine, typeField := 0, "engine"
	if ev != nil {
		ev = deAlias(ev)
		switch ev.Kind {
		case yaml.ScalarNode:
			if ev.Tag == "!!null" || ev.Value == "" {
				return n.errAt(ek.Line, "engine", "empty; write the engine type (sglang, vllm, trtllm, mock) or a mapping with type:")
			}
			setKey(backend, "type", ek.Line, ev)
			typeLine, typeField = ek.Line, "engine"
		case yaml.MappingNode:
			for i := 0; i+1 < len(ev.Content); i += 2 {
				k := ev.Content[i]
				switch k.Value {
				case "gpu_type": // SGLangBackend: accepted, never read
					continue
				case "set_visible_devices":
					if b, _ := yamltree.Bool(ev.Content[i+1]); b {
						return &Error{Kind: Unsupported, Err: yamltree.Error{File: n.path, Line: k.Line, Field: "engine.set_visible_devices", Msg: "vLLM's CUDA_VISIBLE_DEVICES mask instead of --device-ids is " + NotSupported}}

					}
					continue
				}
				setKey(backend, k.Value, k.Line, ev.Content[i+1])
				n.spelling["backend."+k.Value] = "engine." + k.Value
				if k.Value == "type" {
					typeLine, typeField = k.Line, "engine.type"
				}
			}
		default:
			return n.errAt(ek.Line, "engine", "want the engine type or a mapping with type:, got a list")
		}
	}
	// roles.<role>.engine: every role must agree, and with engine.type.
	roleEngine, roleLine, roleField := "", 0, ""
	if roles := deAlias(mapGet(n.doc, "roles")); roles != nil {
		for _, rm := range roleModes {
			spec := deAlias(mapGet(roles, rm.role))
			k, v := mapKeyValue(spec, "engine")
			if v == nil {
				continue
			}
			v = deAlias(v)
			t := v.Value
			if v.Kind == yaml.MappingNode {
				if tv := deAlias(mapGet(v, "type")); tv != nil {
					t = tv.Value
				}
				if len(v.Content) > 2 || t == "" {
					return &Error{Kind: Unsupported, Err: yamltree.Error{File: n.path, Line: k.Line, Field: "roles." + rm.role + ".engine", Msg: "engine options per role are " + NotSupported + "; set them on the top-level engine:"}}
				}
			}
			if roleEngine != "" && t != roleEngine {
				return n.errAt(k.Line, "roles."+rm.role+".engine", "%q differs from %s %q (line %d): every role must use the same engine", t, roleField, roleEngine, roleLine)
			}
			roleEngine, roleLine, roleField = t, k.Line, "roles."+rm.role+".engine"
			deleteKey(spec, "engine")
		}
	}
	if roleEngine != "" {
		if tv := deAlias(mapGet(backend, "type")); tv != nil && tv.Value != roleEngine {
			return n.errAt(roleLine, roleField, "%q conflicts with %s %q (line %d)", roleEngine, typeField, tv.Value, typeLine)
		}
		if mapGet(backend, "type") == nil {
			setKey(backend, "type", roleLine, scalar(roleEngine, roleLine))
			typeLine, typeField = roleLine, roleField
		}
	}
	deleteKey(n.doc, "engine")
	tv := deAlias(mapGet(backend, "type"))
	if tv == nil {
		// v2.2 still loads a v1 backend: block; roles: then read its type.
		if bt := deAlias(mapGet(deAlias(mapGet(n.doc, "backend")), "type")); bt != nil {
			n.engineType = bt.Value
			return nil
		}
		if mapGet(n.doc, "roles") != nil {
			k, _ := mapKeyValue(n.doc, "roles")
			return n.errAt(k.Line, "engine", "required: a schema 2 recipe names its engine with engine: (or roles.<role>.engine on every role)")
		}
		return nil
	}
	n.engineType = tv.Value
	n.spelling["backend.type"] = typeField
	line := typeLine
	if ek != nil {
		line = ek.Line
	}
	existing := deAlias(mapGet(n.doc, "backend"))
	if existing == nil || existing.Kind != yaml.MappingNode {
		setKey(n.doc, "backend", line, backend)
		return nil
	}
	// expand_engine: backend may coexist only where it agrees.
	for i := 0; i+1 < len(backend.Content); i += 2 {
		k, v := backend.Content[i], backend.Content[i+1]
		if bk, bv := mapKeyValue(existing, k.Value); bv != nil && yamltree.PyStr(bv) != yamltree.PyStr(v) {
			return n.errAt(k.Line, n.spelling.Of("backend."+k.Value), "conflicts with backend.%s (line %d); set it in one place", k.Value, bk.Line)
		}
		setKey(existing, k.Value, k.Line, v)
	}
	return nil
}

// roles expands roles: into resources.* and backend.* (expand_roles).
func (n *v2Normalizer) roles() error {
	rk, roles := mapKeyValue(n.doc, "roles")
	if roles == nil {
		return nil
	}
	roles = deAlias(roles)
	if roles.Kind != yaml.MappingNode {
		return n.errAt(rk.Line, "roles", "must be a mapping of prefill, decode and agg")
	}
	resources := getOrCreateMap(n.doc, "resources", rk.Line)
	backend := getOrCreateMap(n.doc, "backend", rk.Line)
	cfgKey := engineConfigKeys[n.engineType]
	if cfgKey == "" {
		cfgKey = "sglang_config" // roles.py's fallback; validation refuses the engine type
	}
	var colocate bool
	var kvEvents *yaml.Node
	for _, rm := range roleModes {
		sk, spec := mapKeyValue(roles, rm.role)
		if spec == nil {
			continue
		}
		spec = deAlias(spec)
		prefix := "roles." + rm.role
		if spec.Kind != yaml.MappingNode {
			return n.errAt(sk.Line, prefix, "must be a mapping (nodes, workers, gpus, env, args, ...)")
		}
		for i := 0; i+1 < len(spec.Content); i += 2 {
			k, v := spec.Content[i], deAlias(spec.Content[i+1])
			field := prefix + "." + k.Value
			set := func(block *yaml.Node, blockName, key string, val *yaml.Node) {
				setKey(block, key, k.Line, val)
				n.spelling[blockName+"."+key] = field
			}
			switch k.Value {
			case "nodes":
				val, err := n.roleNodes(rm.role, k, v)
				if err != nil {
					return err
				}
				colocate = colocate || val.Value == "0"
				set(resources, "resources", rm.role+"_nodes", val)
			case "workers":
				set(resources, "resources", rm.role+"_workers", v)
			case "gpus":
				set(resources, "resources", "gpus_per_"+rm.role, v)
			case "env":
				set(backend, "backend", rm.mode+"_environment", v)
			case "args":
				cfg := getOrCreateMap(backend, cfgKey, k.Line)
				set(cfg, "backend."+cfgKey, rm.mode, v)
			case "extra_args":
				set(backend, "backend", rm.mode+"_extra_args", v)
			case "kv_events":
				if kvEvents == nil {
					kvEvents = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: k.Line}
				}
				setKey(kvEvents, rm.mode, k.Line, v)
				n.spelling["backend.kv_events_config."+rm.mode] = field
			case "sidecar":
				if b, _ := yamltree.Bool(v); b {
					return &Error{Kind: Unsupported, Err: yamltree.Error{File: n.path, Line: k.Line, Field: field, Msg: "the native Dynamo sidecar mode is " + NotSupported}}
				}
			case "critical":
				if b, ok := yamltree.Bool(v); ok && !b {
					return &Error{Kind: Unsupported, Err: yamltree.Error{File: n.path, Line: k.Line, Field: field, Msg: "non-critical workers (a worker exit that does not fail the run) are " + NotSupported}}
				}
			}
		}
	}
	if kvEvents != nil {
		if existing := deAlias(mapGet(backend, "kv_events_config")); existing != nil {
			if existing.Kind != yaml.MappingNode {
				return n.errAt(kvEvents.Line, "roles.*.kv_events", "cannot be combined with a boolean engine.kv_events_config (line %d)", existing.Line)
			}
			for i := 0; i+1 < len(kvEvents.Content); i += 2 {
				setKey(existing, kvEvents.Content[i].Value, kvEvents.Content[i].Line, kvEvents.Content[i+1])
			}
		} else {
			setKey(backend, "kv_events_config", kvEvents.Line, kvEvents)
		}
	}
	if colocate {
		for _, role := range []string{"prefill", "decode"} {
			if mapGet(deAlias(mapGet(roles, role)), "gpus") == nil {
				k, _ := mapKeyValue(deAlias(mapGet(roles, "decode")), "nodes")
				return n.errAt(k.Line, "roles.decode.nodes", "colocate requires an explicit gpus: on both prefill and decode (missing on %s)", role)
			}
		}
	}
	deleteKey(n.doc, "roles")
	return nil
}

// roleNodes is roles.py _expand_nodes: a positive integer, or "colocate"
// on decode, which becomes the v1 sentinel 0.
func (n *v2Normalizer) roleNodes(role string, k, v *yaml.Node) (*yaml.Node, error) {
	field := "roles." + role + ".nodes"
	if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
		if strings.EqualFold(strings.TrimSpace(v.Value), "colocate") {
			if role != "decode" {
				return nil, n.errAt(k.Line, field, "only the decode role can colocate (on the prefill nodes)")
			}
			return scalar("0", v.Line), nil
		}
		return nil, n.errAt(k.Line, field, "must be a positive integer or 'colocate', got %s", clip(v.Value))
	}
	i, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil {
		return nil, n.errAt(k.Line, field, "must be a positive integer or 'colocate', got %s", clip(yamltree.PyStr(v)))
	}
	switch {
	case i == 0 && role == "decode":
		return nil, n.errAt(k.Line, field, "0 is not accepted; write nodes: colocate to share the prefill nodes")
	case i < 1:
		return nil, n.errAt(k.Line, field, "must be at least 1, got %d", i)
	}
	return v, nil
}

// services maps declared etcd / nats / mooncake-master entries onto infra.*
// and backend.mooncake_kv_store (services/normalize.py expand_services);
// every entry also stays in services:, decoded into Recipe.Services.
func (n *v2Normalizer) services() error {
	sk, list := mapKeyValue(n.doc, "services")
	if list == nil {
		return nil
	}
	list = deAlias(list)
	if list.Kind != yaml.SequenceNode {
		return n.errAt(sk.Line, "services", "must be a list of services")
	}
	var infraEntries, masters []*yaml.Node
	names := map[string]int{}
	for i, e := range list.Content {
		e = deAlias(e)
		field := fmt.Sprintf("services[%d]", i)
		if e.Kind != yaml.MappingNode {
			return n.errAt(e.Line, field, "must be a mapping (name, type, command, ...)")
		}
		name := deAlias(mapGet(e, "name"))
		if name == nil || strings.TrimSpace(name.Value) == "" {
			return n.errAt(e.Line, field+".name", "required: a unique label (it names the log file service_<name>.out)")
		}
		if first, dup := names[name.Value]; dup {
			return n.errAt(name.Line, field+".name", "%q is also the name of the service at line %d; names must be unique", name.Value, first)
		}
		names[name.Value] = name.Line
		if en := deAlias(mapGet(e, "enabled")); en != nil {
			if b, ok := yamltree.Bool(en); ok && !b {
				continue
			}
		}
		switch t := deAlias(mapGet(e, "type")); {
		case t != nil && (t.Value == "etcd" || t.Value == "nats"):
			infraEntries = append(infraEntries, e)
		case t != nil && t.Value == "mooncake-master":
			masters = append(masters, e)
		}
	}
	if len(infraEntries) > 0 {
		infra := getOrCreateMap(n.doc, "infra", sk.Line)
		dedicated, dedicatedSet := false, false
		var firstLine int
		for _, e := range infraEntries {
			node := deAlias(mapGet(deAlias(mapGet(e, "placement")), "node"))
			d := node != nil && node.Value == "dedicated"
			if dedicatedSet && d != dedicated {
				return n.errAt(e.Line, "services", "etcd and nats must agree on placement.node: dedicated (they share the infra node; see line %d)", firstLine)
			}
			dedicated, dedicatedSet, firstLine = d, true, e.Line
			if node != nil {
				n.spelling["infra.etcd_nats_dedicated_node"] = "services[" + deAlias(mapGet(e, "name")).Value + "].placement.node"
			}
			if deAlias(mapGet(e, "type")).Value == "nats" {
				if p := deAlias(mapGet(deAlias(mapGet(e, "options")), "max_payload_mb")); p != nil {
					setKey(infra, "nats_max_payload_mb", p.Line, p)
					n.spelling["infra.nats_max_payload_mb"] = "services[" + deAlias(mapGet(e, "name")).Value + "].options.max_payload_mb"
				}
			}
		}
		setKey(infra, "etcd_nats_dedicated_node", firstLine, scalarBool(dedicated, firstLine))
	}
	if len(masters) > 1 {
		return n.errAt(masters[1].Line, "services", "only one mooncake-master service is supported (another at line %d)", masters[0].Line)
	}
	if len(masters) == 1 {
		m := masters[0]
		label := "services[" + deAlias(mapGet(m, "name")).Value + "]"
		backend := getOrCreateMap(n.doc, "backend", m.Line)
		mapped := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: m.Line}
		if k, v := mapKeyValue(m, "container"); v != nil && deAlias(v).Value != "" {
			setKey(mapped, "container", k.Line, v)
			n.spelling["backend.mooncake_kv_store.container"] = label + ".container"
		}
		if k, v := mapKeyValue(m, "args"); v != nil && len(deAlias(v).Content) > 0 {
			setKey(mapped, "master_extra_args", k.Line, v)
			n.spelling["backend.mooncake_kv_store.master_extra_args"] = label + ".args"
		}
		opts := deAlias(mapGet(m, "options"))
		if opts != nil && opts.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(opts.Content); i += 2 {
				k := opts.Content[i]
				switch k.Value {
				case "store_config":
					setKey(mapped, "store_config", k.Line, opts.Content[i+1])
					n.spelling["backend.mooncake_kv_store.store_config"] = label + ".options.store_config"
				default:
					return &Error{Kind: Unsupported, Err: yamltree.Error{File: n.path, Line: k.Line, Field: label + ".options." + k.Value, Msg: "mooncake-master option " + strconv.Quote(k.Value) + " is " + NotSupported}}
				}
			}
		}
		n.spelling["backend.mooncake_kv_store"] = label
		setKey(backend, "mooncake_kv_store", m.Line, mapped)
	}
	return nil
}

// frontend maps frontend.placement and the schema-2 meaning of frontend.type.
func (n *v2Normalizer) frontend() error {
	fe := deAlias(mapGet(n.doc, "frontend"))
	if fe == nil || fe.Kind != yaml.MappingNode {
		return nil
	}
	if k, t := mapKeyValue(fe, "type"); t != nil {
		t = deAlias(t)
		switch t.Value {
		case "sglang-router":
			// v1's "sglang" is the SGLang router (docs/legacy-v1.md).
			setKey(fe, "type", k.Line, scalar("sglang", t.Line))
		case "sglang":
			if err := n.checkSGLangDirect(fe, k); err != nil {
				return err
			}
			setKey(fe, "type", k.Line, scalar(FrontendSGLangDirect, t.Line)) // the router-free direct server

		case "dynamo", "vllm", "":
		case "vllm-router": // kept as written; the planner runs it (planner/infra/vllm_router.go)
		case "trtllm_serve": // v1's spelling too; rules and plan: launcher/planner/trtllm_serve.go
		default:
			return &Error{Kind: Unsupported, Err: yamltree.Error{File: n.path, Line: k.Line, Field: "frontend.type", Msg: fmt.Sprintf("frontend type %q is %s (dynamo, sglang, sglang-router, vllm, vllm-router and trtllm_serve run)", t.Value, NotSupported)}}

		}
	}
	return n.placement(fe, "frontend", "orchestrator_placement", "dedicated_node")
}

// benchmark maps benchmark.placement.
func (n *v2Normalizer) benchmark() error {
	b := deAlias(mapGet(n.doc, "benchmark"))
	if b == nil || b.Kind != yaml.MappingNode {
		return nil
	}
	return n.placement(b, "benchmark", "client_placement", "client_dedicated_node")
}

// placement maps <block>.placement.node onto the v1 location key, or the
// v1 dedicated flag for "dedicated" (PlacementConfig.location/dedicated).
func (n *v2Normalizer) placement(block *yaml.Node, name, locKey, dedicatedKey string) error {
	_, p := mapKeyValue(block, "placement")
	if p == nil {
		return nil
	}
	nk, node := mapKeyValue(deAlias(p), "node")
	if node == nil {
		return nil
	}
	node = deAlias(node)
	if node.Kind != yaml.ScalarNode || node.Value == "" {
		return n.errAt(nk.Line, name+".placement.node", "want a location name (head, first_decode, last_decode) or dedicated")
	}
	for _, key := range []string{locKey, dedicatedKey} {
		if k, _ := mapKeyValue(block, key); k != nil {
			return n.errAt(k.Line, name+"."+key, "cannot be combined with %s.placement.node (line %d), which replaced it", name, nk.Line)
		}
	}
	if node.Value == "dedicated" {
		setKey(block, dedicatedKey, nk.Line, scalarBool(true, node.Line))
		n.spelling[name+"."+dedicatedKey] = name + ".placement.node"
		return nil
	}
	setKey(block, locKey, nk.Line, node)
	n.spelling[name+"."+locKey] = name + ".placement.node"
	return nil
}

// dynamo maps dynamo.source onto version / wheel / hash / cargo_patches
// (DynamoSourceConfig: exactly one of git+rev, pypi, wheel).
func (n *v2Normalizer) dynamo() error {
	d := deAlias(mapGet(n.doc, "dynamo"))
	if d == nil || d.Kind != yaml.MappingNode {
		return nil
	}
	sk, src := mapKeyValue(d, "source")
	if src == nil {
		return nil
	}
	src = deAlias(src)
	if src.Kind != yaml.MappingNode {
		return n.errAt(sk.Line, "dynamo.source", "must be a mapping with one of git (with rev), pypi or wheel")
	}
	get := func(key string) (*yaml.Node, *yaml.Node) {
		k, v := mapKeyValue(src, key)
		if v != nil && deAlias(v).Tag == "!!null" {
			return nil, nil
		}
		return k, deAlias(v)
	}
	gitK, git := get("git")
	revK, rev := get("rev")
	shaK, sha := get("sha")
	patchK, patches := get("patches")
	pypiK, pypi := get("pypi")
	wheelK, wheel := get("wheel")
	totK, tot := get("top_of_tree")
	if tot != nil {
		// docs/legacy-v1.md's spelling of dynamo.top_of_tree.
		if b, _ := yamltree.Bool(tot); b {
			setKey(d, "top_of_tree", totK.Line, tot)
			n.spelling["dynamo.top_of_tree"] = "dynamo.source.top_of_tree"
		}
	}
	var chosen []string
	if git != nil || rev != nil {
		chosen = append(chosen, "git")
	}
	if pypi != nil {
		chosen = append(chosen, "pypi")
	}
	if wheel != nil {
		chosen = append(chosen, "wheel")
	}
	if len(chosen) == 0 && tot != nil {
		return nil
	}
	if len(chosen) != 1 {
		what := strings.Join(chosen, ", ")
		if what == "" {
			what = "none"
		}
		return n.errAt(sk.Line, "dynamo.source", "needs exactly one of git (with rev), pypi or wheel; got %s", what)
	}
	for _, key := range []string{"version", "hash", "wheel", "cargo_patches"} {
		if k, _ := mapKeyValue(d, key); k != nil {
			return n.errAt(k.Line, "dynamo."+key, "cannot be combined with dynamo.source (line %d), which replaced it", sk.Line)
		}
	}
	set := func(key string, k, v *yaml.Node, from string) {
		setKey(d, key, k.Line, v)
		n.spelling["dynamo."+key] = "dynamo.source." + from
	}
	switch chosen[0] {
	case "git":
		if rev == nil {
			return n.errAt(gitK.Line, "dynamo.source.git", "requires rev (a commit SHA, tag, or refs/pull/<n>/head)")
		}
		if sha != nil {
			set("hash", shaK, sha, "sha")
		} else {
			set("hash", revK, rev, "rev")
		}
		if patches != nil {
			set("cargo_patches", patchK, patches, "patches")
		}
	case "pypi":
		if rev != nil || sha != nil || patches != nil {
			return n.errAt(pypiK.Line, "dynamo.source", "rev, sha and patches only apply to a git source")
		}
		set("version", pypiK, pypi, "pypi")
	case "wheel":
		if rev != nil || sha != nil || patches != nil {
			return n.errAt(wheelK.Line, "dynamo.source", "rev, sha and patches only apply to a git source")
		}
		set("wheel", wheelK, wheel, "wheel")
	}
	return nil
}

// telemetry maps collect_interval_ms onto default_frequency (seconds), the
// field it replaced (TelemetryConfig).
func (n *v2Normalizer) telemetry() error {
	t := deAlias(mapGet(n.doc, "telemetry"))
	if t == nil || t.Kind != yaml.MappingNode {
		return nil
	}
	ck, ms := mapKeyValue(t, "collect_interval_ms")
	if ms == nil {
		return nil
	}
	ms = deAlias(ms)
	v, err := strconv.Atoi(ms.Value)
	if ms.Kind != yaml.ScalarNode || ms.Tag != "!!int" || err != nil || v <= 0 {
		return n.errAt(ck.Line, "telemetry.collect_interval_ms", "must be a positive whole number of milliseconds, got %s", clip(yamltree.PyStr(ms)))
	}
	if fk, f := mapKeyValue(t, "default_frequency"); f != nil {
		return n.errAt(fk.Line, "telemetry.default_frequency", "cannot be combined with collect_interval_ms (line %d), which replaced it", ck.Line)
	}
	setKey(t, "default_frequency", ck.Line, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(float64(v)/1000, 'g', -1, 64), Line: ms.Line})
	n.spelling["telemetry.default_frequency"] = "telemetry.collect_interval_ms"
	return nil
}

// Spelling maps each internal (v1) field the normalizer set to the
// schema-2 key the user wrote, so messages name what is in the file.
type Spelling map[string]string

// Of is field as the recipe spelled it: the internal name a schema-2 key
// was normalized into becomes that key (longest prefix wins).
func (s Spelling) Of(field string) string {
	if len(s) == 0 {
		return field
	}
	best := ""
	for p := range s {
		if (field == p || strings.HasPrefix(field, p+".")) && len(p) > len(best) {
			best = p
		}
	}
	if best == "" {
		return field
	}
	return s[best] + field[len(best):]
}
