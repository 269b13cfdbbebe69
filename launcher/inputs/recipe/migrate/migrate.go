package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
	"go.yaml.in/yaml/v3"
)

// Migrate rewrites a schema-1 recipe (srt-slurm c88ef731's layout, the one
// InferenceX checked in until September) into schema 2 (srt-slurm 2.x),
// following srt-slurm's own migrator (src/srtctl/core/migrate.py in
// research/srt-slurm-2, and the v1 → v2 table of its docs/legacy-v1.md) rule
// by rule, on the yaml.v3 node tree so comments and key order survive: a
// key that moves carries its comments along. Every rewrite is a re-spelling
// of the same configuration; MigrateVerify (package launcher) proves it by
// planning both documents.
//
// The rules, applied to a plain recipe, or to base and every
// override_*/zip_override_* section of an override file:
//
//   - resources.<role>_nodes/_workers and gpus_per_<role>,
//     backend.<mode>_environment, backend.<mode>_extra_args and
//     backend.<engine>_config.<mode> fold into roles.<role>.{nodes, workers,
//     gpus, env, extra_args, args} (roles prefill, decode, agg; modes
//     prefill, decode, aggregated); decode_nodes: 0 becomes
//     roles.decode.nodes: colocate (srt-slurm's docs/cli.md).
//   - frontend.orchestrator_placement/dedicated_node and
//     benchmark.client_placement/client_dedicated_node fold into
//     <block>.placement.node; v1's frontend.type sglang (the SGLang router)
//     is spelled sglang-router.
//   - infra.etcd_nats_dedicated_node and infra.nats_max_payload_mb become
//     etcd and nats services entries (placement.node, options.max_payload_mb);
//     under a frontend without a discovery plane the payload knob is dropped
//     and a dedicated node stays in its v1 spelling.
//   - dynamo.hash (+ cargo_patches), dynamo.wheel and dynamo.version fold
//     into dynamo.source.{rev, patches, wheel, pypi}; top_of_tree stays.
//   - benchmark keys the benchmark type never reads are removed (schema 2
//     refuses them; they never had an effect), except those slurmbench's
//     plan reads (benchmarkPlanned, BeyondSrtctl); a missing type is
//     slurmbench's default, sa-bench.
//   - backend.mooncake_kv_store becomes a mooncake-master services entry,
//     its env going to every role's env.
//   - what is left of backend becomes engine: (the type alone as a string,
//     else a mapping with type first), where backend was; kv_events_config
//     goes to roles.<role>.kv_events.
//   - schema: 2 is written first.

// Options change how Migrate reads the document.
type Options struct {
	// AllowDuplicateKeys keeps the last of a key set twice (srtctl's
	// PyYAML behaviour) instead of refusing the file.
	AllowDuplicateKeys bool
	// Overrides are --set/--unset edits applied before migrating.
	Overrides []recipe.Override
}

// Result is one migrated document.
type Result struct {
	Text    []byte
	Changed bool
	// Notes say what moved where, and what was deliberately left.
	Notes []string
	// Applied are the --set/--unset edits, as flags.
	Applied []string
}

// AlreadySchema2Error is a document that already declares schema: 2.
type AlreadySchema2Error struct{ Err recipe.Error }

func (e *AlreadySchema2Error) Error() string { return e.Err.Error() }

// ErrAlreadySchema2 is what errors.Is finds in an *AlreadySchema2Error.
var ErrAlreadySchema2 = errors.New("already schema 2: nothing to migrate")

func (e *AlreadySchema2Error) Unwrap() error { return ErrAlreadySchema2 }

// NotRecipeError is a YAML file that is no recipe (an InferenceX master
// config beside the recipes, say).
type NotRecipeError struct{ Err recipe.Error }

func (e *NotRecipeError) Error() string { return e.Err.Error() }

// looksLikeRecipe reports whether doc has a key only a recipe (or an
// override file) has at its top level.
func looksLikeRecipe(doc *yaml.Node) bool {
	for _, k := range []string{"name", "model", "resources", "backend", "engine", "roles", "base"} {
		if yamltree.Get(doc, k) != nil {
			return true
		}
	}
	return false
}

// roleNames and roleMode are srtctl's ROLE_NAMES and ROLE_TO_MODE.
var roleNames = []string{"prefill", "decode", "agg"}

var roleMode = map[string]string{"prefill": "prefill", "decode": "decode", "agg": "aggregated"}

// engineConfigKey is srtctl's ENGINE_CONFIG_KEY, plus slurmbench's mock engine.
var engineConfigKey = map[string]string{"sglang": "sglang_config", "vllm": "vllm_config", "trtllm": "trtllm_config", "mocker": "mocker_config", "mock": "mock_config"}

// benchmarkKeys are the benchmark keys schema 2 accepts per type
// (srt-slurm's docs/schema-reference.md "Benchmark types"): the shared
// ones plus the type's own.
var (
	benchmarkShared = []string{"type", "aiperf_args", "aiperf_package", "colocate_with_frontend", "concurrencies", "placement", "stream_output", "sweep"}
	benchmarkKeys   = map[string][]string{
		"manual":          nil,
		"agentperf":       {"agentperf_client_dir", "agentperf_config", "concurrency", "container_image", "env", "isl"},
		"custom":          {"command", "container_image", "env"},
		"gpqa":            {"max_tokens", "num_examples", "num_threads", "repeat"},
		"gsm8k":           {"max_tokens", "num_examples", "num_shots", "num_threads", "repeat", "temperature", "top_k", "top_p"},
		"lm-eval":         nil,
		"longbenchv2":     {"categories", "max_context_length", "max_tokens", "num_examples", "num_threads"},
		"mmlu":            {"max_tokens", "num_examples", "num_threads", "repeat"},
		"mooncake-router": {"itl_threshold_ms", "mooncake_workload", "ttft_threshold_ms"},
		"router":          {"concurrency", "isl", "num_requests", "osl", "prefix_ratios"},
		"sa-bench":        {"custom_tokenizer", "dataset_name", "dataset_path", "isl", "num_prompts_mult", "num_warmup_mult", "osl", "random_range_ratio", "req_rate", "reuse_http_connections", "slow_down_sleep_time", "slow_down_wait_time", "use_chat_template"},
		"sglang-bench":    {"isl", "osl", "req_rate"},
		"trace-replay":    {"itl_threshold_ms", "trace_file", "ttft_threshold_ms"},
	}
)

// benchmarkPlanned are the benchmark keys slurmbench's plan reads for
// every benchmark type (the sizes and client settings of each point, which
// name its result files), so they are never removed.
var benchmarkPlanned = map[string]bool{"isl": true, "osl": true, "concurrencies": true, "random_range_ratio": true,
	"req_rate": true, "use_chat_template": true, "num_prompts_mult": true, "num_warmup_mult": true}

// SchemaOf returns the schema version a recipe document declares (1 when
// it declares none).
func SchemaOf(path string, doc *yaml.Node) (int, error) {
	v := yamltree.Get(doc, "schema")
	if v == nil {
		return 1, nil
	}
	v = yamltree.DeAlias(v)
	if v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
		if n, err := strconv.Atoi(v.Value); err == nil && (n == 1 || n == 2) {
			return n, nil
		}
	}
	return 0, &recipe.Error{File: path, Line: v.Line, Field: "schema", Msg: fmt.Sprintf("%q is not a supported schema version (1, or absent, for srt-slurm c88ef731's layout; 2 for srt-slurm 2.x's)", v.Value)}
}

// Migrate rewrites the schema-1 recipe data (path names it in errors) into
// schema 2. A document that already declares schema: 2 is an
// *AlreadySchema2Error.
func Migrate(path string, data []byte, opt Options) (*Result, error) {
	if len(data) > recipe.MaxInputBytes {
		return nil, &recipe.Error{File: path, Msg: fmt.Sprintf("%d bytes is more than the %d MiB a recipe may have", len(data), recipe.MaxInputBytes>>20)}
	}
	// The checks a recipe read makes (one document, a mapping, aliases of
	// bounded size), then a tree of our own to edit and write back.
	root, warnings, err := recipe.ReadForEdit(path, data, opt.AllowDuplicateKeys)
	if err != nil {
		return nil, err
	}
	doc := root.Content[0]
	if !looksLikeRecipe(doc) {
		return nil, &NotRecipeError{recipe.Error{File: path, Line: doc.Line, Msg: "not a recipe: none of name, model, resources, backend, engine, roles or base at its top level"}}
	}
	version, err := SchemaOf(path, doc)
	if err != nil {
		return nil, err
	}
	if version == 2 {
		return nil, &AlreadySchema2Error{recipe.Error{File: path, Line: yamltree.Get(doc, "schema").Line, Field: "schema", Msg: ErrAlreadySchema2.Error()}}
	}
	applied, err := recipe.ApplyOverrides(doc, opt.Overrides)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := &migration{}
	m.run(doc)
	m.notes = append(warnings, m.notes...)

	// schema: 2 first; a comment above the first key that is separated from
	// it by a blank line is the file's header and stays above everything.
	schemaKey, schemaVal := yamltree.StrKey("schema"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "2"}
	if i := yamltree.KeyIndex(doc, "schema"); i >= 0 {
		doc.Content[i+1] = schemaVal
	} else {
		if len(doc.Content) > 0 && root.HeadComment == "" {
			first := doc.Content[0]
			schemaKey.HeadComment, first.HeadComment = first.HeadComment, ""
		}
		doc.Content = append([]*yaml.Node{schemaKey, schemaVal}, doc.Content...)
	}
	m.note("schema: 2")

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, &recipe.Error{File: path, Msg: "writing the migrated document: " + err.Error()}
	}
	if err := enc.Close(); err != nil {
		return nil, &recipe.Error{File: path, Msg: "writing the migrated document: " + err.Error()}
	}
	out := keepBlankLines(data, buf.Bytes())
	return &Result{Text: out, Changed: !bytes.Equal(out, data), Notes: m.notes, Applied: applied}, nil
}

type migration struct{ notes []string }

func (m *migration) note(format string, args ...any) {
	m.notes = append(m.notes, fmt.Sprintf(format, args...))
}

// migrationVariant is one recipe mapping of a document: the document
// itself, or base or an override section of an override file, with the
// label its notes start with.
type migrationVariant struct {
	label    string // "" for a plain recipe, else "base: " / "override_x: "
	node     *yaml.Node
	override bool // an override_*/zip_override_* section (not base)
}

func (m *migration) run(doc *yaml.Node) {
	targets := []migrationVariant{{node: doc}}
	base := doc
	if variants.IsOverrideFile(doc) {
		base = yamltree.DeAlias(yamltree.Get(doc, "base"))
		targets = nil
		for i := 0; i+1 < len(doc.Content); i += 2 {
			k, v := doc.Content[i].Value, yamltree.DeAlias(doc.Content[i+1])
			if v.Kind != yaml.MappingNode {
				continue
			}
			switch {
			case k == "base":
				targets = append(targets, migrationVariant{label: "base: ", node: v})
			case strings.HasPrefix(k, "override_"):
				targets = append(targets, migrationVariant{label: k + ": ", node: v, override: true})
			case strings.HasPrefix(k, "zip_override_"):
				targets = append(targets, migrationVariant{label: k + ": ", node: v, override: true})
			}
		}
	}
	// What the variants inherit from base, read before base is rewritten.
	baseEngine := scalarAt(base, "backend", "type")
	baseFrontend := scalarAt(base, "frontend", "type")
	baseBenchmark := scalarAt(base, "benchmark", "type")
	for _, v := range targets {
		engine := scalarAt(v.node, "backend", "type")
		if engine == "" {
			engine = baseEngine
		}
		engineKey := engineConfigKey[engine]
		if engineKey == "" {
			engineKey = presentEngineKey(v.node)
		}
		frontend := scalarAt(v.node, "frontend", "type")
		if frontend == "" {
			frontend = baseFrontend
		}
		bench := scalarAt(v.node, "benchmark", "type")
		if bench == "" {
			bench = baseBenchmark
		}
		m.foldRoles(v, engineKey)
		m.foldPlacement(v)
		m.foldInfra(v, frontend == "" || frontend == "dynamo")
		m.foldDynamoSource(v)
		m.stripBenchmark(v, bench)
		m.foldMooncake(v)
		m.foldEngine(v, engine, engineKey, baseEngine)
		for _, key := range []string{"resources", "dynamo", "frontend"} {
			if b := yamltree.Get(v.node, key); b != nil && b.Kind == yaml.MappingNode && len(b.Content) == 0 {
				b.Style = yaml.FlowStyle // keep an emptied block as {}: an override may still refer to it
			}
		}
	}
	// A section's engine: NAME would replace base's engine mapping whole,
	// dropping base's knobs that v1's backend: merge kept: spell it as a
	// mapping, which merges.
	if be := yamltree.DeAlias(yamltree.Get(base, "engine")); doc != base && be != nil && be.Kind == yaml.MappingNode {
		for _, v := range targets {
			if i := yamltree.KeyIndex(v.node, "engine"); v.override && i >= 0 && v.node.Content[i+1].Kind == yaml.ScalarNode && v.node.Content[i+1].Tag != "!!null" {
				v.node.Content[i+1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{yamltree.StrKey("type"), v.node.Content[i+1]}}
			}
		}
	}
}

// scalarAt is the scalar value at block.key of mapping n, or "".
func scalarAt(n *yaml.Node, block, key string) string {
	v := yamltree.DeAlias(yamltree.Get(yamltree.Get(n, block), key))
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return ""
	}
	return v.Value
}

// presentEngineKey is the backend.<engine>_config key n has, for a
// variant whose engine type is nowhere (srtctl's _engine_key_for).
func presentEngineKey(n *yaml.Node) string {
	backend := yamltree.Get(n, "backend")
	for _, e := range []string{"sglang", "vllm", "trtllm", "mocker", "mock"} {
		if yamltree.Get(backend, engineConfigKey[e]) != nil {
			return engineConfigKey[e]
		}
	}
	return "sglang_config"
}

// takeKey removes key from mapping m and returns its key and value nodes
// (nil when absent).
func takeKey(m *yaml.Node, key string) (k, v *yaml.Node) {
	m = yamltree.DeAlias(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	i := yamltree.KeyIndex(m, key)
	if i < 0 {
		return nil, nil
	}
	k, v = m.Content[i], m.Content[i+1]
	m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
	return k, v
}

// childMap returns parent[key] as a mapping, created after the key after
// (appended when after is "" or absent). An aliased mapping is copied into
// place first, so an edit never reaches the anchor's other users.
func childMap(parent *yaml.Node, key, after string) *yaml.Node {
	if i := yamltree.KeyIndex(parent, key); i >= 0 {
		v := parent.Content[i+1]
		if v.Kind == yaml.AliasNode || yamltree.HasMerge(yamltree.DeAlias(v)) {
			v = yamltree.FlattenCopy(yamltree.DeAlias(v))
			parent.Content[i+1] = v
		}
		if v.Kind == yaml.MappingNode {
			if v.Style == yaml.FlowStyle && len(v.Content) == 0 {
				v.Style = 0
			}
			return v
		}
		nv := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		parent.Content[i+1] = nv
		return nv
	}
	created := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	insertAfter(parent, after, yamltree.StrKey(key), created)
	return created
}

// insertAfter puts k: v after the key after in mapping m (at the end when
// after is "" or not there).
func insertAfter(m *yaml.Node, after string, k, v *yaml.Node) {
	if i := yamltree.KeyIndex(m, after); after != "" && i >= 0 {
		m.Content = append(m.Content[:i+2], append([]*yaml.Node{k, v}, m.Content[i+2:]...)...)
		return
	}
	m.Content = append(m.Content, k, v)
}

// moveKey moves src[key] to dst[newKey] with its comments; when dst has
// newKey already, that value wins and the legacy key is dropped.
func (m *migration) moveKey(label string, src *yaml.Node, key string, dst *yaml.Node, newKey, where string) bool {
	k, v := takeKey(src, key)
	if k == nil {
		return false
	}
	if yamltree.KeyIndex(dst, newKey) >= 0 {
		m.note("%s%s.%s already set; kept it and dropped legacy %s", label, where, newKey, key)
		return false
	}
	nk := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: newKey, Line: k.Line, Column: k.Column,
		HeadComment: k.HeadComment, LineComment: k.LineComment, FootComment: k.FootComment}
	dst.Content = append(dst.Content, nk, v)
	return true
}

func (m *migration) foldRoles(v migrationVariant, engineKey string) {
	resources := yamltree.DeAlias(yamltree.Get(v.node, "resources"))
	backend := yamltree.DeAlias(yamltree.Get(v.node, "backend"))
	engineCfg := yamltree.DeAlias(yamltree.Get(backend, engineKey))
	var roles *yaml.Node
	for _, role := range roleNames {
		mode := roleMode[role]
		type move struct {
			src       *yaml.Node
			old, new_ string
		}
		var moves []move
		for _, kv := range [][2]string{{role + "_nodes", "nodes"}, {role + "_workers", "workers"}, {"gpus_per_" + role, "gpus"}} {
			if yamltree.Get(resources, kv[0]) != nil {
				moves = append(moves, move{resources, kv[0], kv[1]})
			}
		}
		if yamltree.Get(backend, mode+"_environment") != nil {
			moves = append(moves, move{backend, mode + "_environment", "env"})
		}
		if yamltree.Get(backend, mode+"_extra_args") != nil {
			moves = append(moves, move{backend, mode + "_extra_args", "extra_args"})
		}
		if engineCfg != nil && engineCfg.Kind == yaml.MappingNode && yamltree.Get(engineCfg, mode) != nil {
			moves = append(moves, move{engineCfg, mode, "args"})
		}
		if len(moves) == 0 {
			continue
		}
		if roles == nil {
			anchor := ""
			if yamltree.Get(v.node, "backend") != nil {
				anchor = "backend"
			} else if yamltree.Get(v.node, "resources") != nil {
				anchor = "resources"
			}
			roles = childMap(v.node, "roles", anchor)
		}
		spec := childMap(roles, role, "")
		for _, mv := range moves {
			m.moveKey(v.label, mv.src, mv.old, spec, mv.new_, "roles."+role)
		}
		if role == "decode" {
			// A zip section's list holds one value per config.
			if n := yamltree.DeAlias(yamltree.Get(spec, "nodes")); n != nil {
				for _, e := range append([]*yaml.Node{n}, n.Content...) {
					if e.Kind == yaml.ScalarNode && e.Tag == "!!int" && e.Value == "0" {
						e.Value, e.Tag, e.Style = "colocate", "!!str", 0
						m.note("%sresources.decode_nodes: 0 -> roles.decode.nodes: colocate", v.label)
					}
				}
			}
		}
		m.note("%sfolded %s fields into roles.%s", v.label, role, role)
	}
	if cfg := yamltree.DeAlias(yamltree.Get(backend, engineKey)); cfg != nil && cfg.Kind == yaml.MappingNode && len(cfg.Content) == 0 {
		takeKey(backend, engineKey)
	}
}

func (m *migration) foldPlacement(v migrationVariant) {
	fold := func(block, placeKey, dedicatedKey string) {
		sec := yamltree.DeAlias(yamltree.Get(v.node, block))
		if sec == nil || sec.Kind != yaml.MappingNode || (yamltree.Get(sec, placeKey) == nil && yamltree.Get(sec, dedicatedKey) == nil) {
			return
		}
		dk, dv := takeKey(sec, dedicatedKey)
		pk, pv := takeKey(sec, placeKey)
		dedicated := false
		if dv != nil {
			b, ok := recipe.NewValue(yamltree.DeAlias(dv)).Bool()
			dedicated = ok && b
		}
		var node *yaml.Node
		switch {
		case dedicated:
			node = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "dedicated"}
		case pv != nil && yamltree.DeAlias(pv).Tag != "!!null":
			node = pv
		default:
			node = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "head"}
		}
		placement := childMap(sec, "placement", "")
		if i := yamltree.KeyIndex(placement, "node"); i >= 0 {
			placement.Content[i+1] = node
		} else {
			// The replaced keys' comments go with the new one.
			nk := yamltree.StrKey("node")
			for _, n := range []*yaml.Node{pk, pv, dk, dv} {
				if n == nil {
					continue
				}
				if nk.HeadComment == "" {
					nk.HeadComment = n.HeadComment
				}
				if nk.LineComment == "" {
					nk.LineComment = n.LineComment
				}
			}
			placement.Content = append(placement.Content, nk, node)
		}
		m.note("%s%s.placement.node: %s", v.label, block, recipe.NewValue(node).String())
	}
	fold("frontend", "orchestrator_placement", "dedicated_node")
	fold("benchmark", "client_placement", "client_dedicated_node")
	// v1's frontend.type sglang is the SGLang router; schema 2 spells it
	// sglang-router (sglang there is the router-free direct worker).
	if t := yamltree.DeAlias(yamltree.Get(yamltree.Get(v.node, "frontend"), "type")); t != nil {
		renamed := false
		for _, n := range append([]*yaml.Node{t}, t.Content...) {
			if n.Kind == yaml.ScalarNode && n.Value == "sglang" {
				n.Value, renamed = "sglang-router", true
			}
		}
		if renamed {
			m.note("%sfrontend.type: sglang (v1's SGLang router) -> sglang-router", v.label)
		}
	}
}

// serviceEntry is the services: entry named name (type name), appended
// to the list when missing.
func serviceEntry(services *yaml.Node, name string) *yaml.Node {
	for _, e := range services.Content {
		if e = yamltree.DeAlias(e); e.Kind == yaml.MappingNode && scalarValue(yamltree.Get(e, "name")) == name {
			return e
		}
	}
	e := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		yamltree.StrKey("name"), yamltree.StrKey(name), yamltree.StrKey("type"), yamltree.StrKey(name)}}
	services.Content = append(services.Content, e)
	return e
}

func scalarValue(n *yaml.Node) string {
	if n = yamltree.DeAlias(n); n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// servicesList is variant's services: list, created after near.
func servicesList(variant *yaml.Node, near string) *yaml.Node {
	if s := yamltree.DeAlias(yamltree.Get(variant, "services")); s != nil && s.Kind == yaml.SequenceNode {
		return s
	}
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	insertAfter(variant, near, yamltree.StrKey("services"), s)
	return s
}

// setScalar sets m[key] = v and returns the key node.
func setScalar(m *yaml.Node, key string, v *yaml.Node) *yaml.Node {
	if i := yamltree.KeyIndex(m, key); i >= 0 {
		m.Content[i+1] = v
		return m.Content[i]
	}
	k := yamltree.StrKey(key)
	m.Content = append(m.Content, k, v)
	return k
}

// carryComments gives the key node to the comments of the key from (and
// its value) that the migration removed.
func carryComments(to, from, value *yaml.Node) {
	if from == nil {
		return
	}
	if to.HeadComment == "" {
		to.HeadComment = from.HeadComment
	}
	for _, n := range []*yaml.Node{from, value} {
		if n != nil && to.LineComment == "" {
			to.LineComment = n.LineComment
		}
	}
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// foldInfra is srtctl's _fold_infra_services.
func (m *migration) foldInfra(v migrationVariant, discovery bool) {
	if yamltree.Get(v.node, "infra") == nil {
		return
	}
	infra := yamltree.DeAlias(yamltree.Get(v.node, "infra"))
	if !discovery {
		if infra.Kind == yaml.MappingNode {
			if _, p := takeKey(infra, "nats_max_payload_mb"); p != nil {
				m.note("%sdropped infra.nats_max_payload_mb (no discovery plane under this frontend)", v.label)
			}
			if d := yamltree.DeAlias(yamltree.Get(infra, "etcd_nats_dedicated_node")); d != nil {
				if b, _ := recipe.NewValue(d).Bool(); b {
					m.note("%sinfra.etcd_nats_dedicated_node left as is: it reserves a node although this frontend runs no etcd/NATS", v.label)
				} else {
					takeKey(infra, "etcd_nats_dedicated_node")
				}
			}
			if len(infra.Content) == 0 {
				takeKey(v.node, "infra")
			}
		}
		return
	}
	if infra.Kind == yaml.ScalarNode && infra.Tag == "!!null" {
		if v.override {
			services := servicesList(v.node, "infra")
			for _, name := range []string{"etcd", "nats"} {
				setScalar(childMap(serviceEntry(services, name), "placement", ""), "node", str("infra"))
			}
			m.note("%sinfra: null -> services etcd/nats placement.node: infra", v.label)
		}
		takeKey(v.node, "infra")
		return
	}
	if infra.Kind != yaml.MappingNode {
		return
	}
	var dedicated *bool
	dk, d := takeKey(infra, "etcd_nats_dedicated_node")
	if d != nil {
		b, _ := recipe.NewValue(yamltree.DeAlias(d)).Bool()
		dedicated = &b
	}
	pk, payload := takeKey(infra, "nats_max_payload_mb")
	if (dedicated != nil && *dedicated) || payload != nil || (dedicated != nil && v.override) {
		services := servicesList(v.node, "infra")
		if dedicated != nil {
			node := "infra"
			if *dedicated {
				node = "dedicated"
			}
			for i, name := range []string{"etcd", "nats"} {
				k := setScalar(childMap(serviceEntry(services, name), "placement", ""), "node", str(node))
				if i == 0 {
					carryComments(k, dk, d)
				}
			}
			m.note("%sinfra.etcd_nats_dedicated_node -> services etcd/nats placement.node: %s", v.label, node)
		}
		if payload != nil {
			carryComments(setScalar(childMap(serviceEntry(services, "nats"), "options", ""), "max_payload_mb", payload), pk, nil)
			m.note("%sinfra.nats_max_payload_mb -> services nats options.max_payload_mb", v.label)
		}
	} else if dedicated != nil {
		m.note("%sdropped infra.etcd_nats_dedicated_node: false (the default)", v.label)
	}
	if len(infra.Content) == 0 {
		k, _ := takeKey(v.node, "infra")
		if s := yamltree.KeyIndex(v.node, "services"); s >= 0 && k != nil && v.node.Content[s].HeadComment == "" {
			v.node.Content[s].HeadComment = k.HeadComment
		}
	}
}

// foldDynamoSource is srtctl's _fold_dynamo_source.
func (m *migration) foldDynamoSource(v migrationVariant) {
	dynamo := yamltree.DeAlias(yamltree.Get(v.node, "dynamo"))
	if dynamo == nil || dynamo.Kind != yaml.MappingNode || yamltree.Get(dynamo, "source") != nil {
		return
	}
	if b, _ := recipe.NewValue(yamltree.DeAlias(yamltree.Get(dynamo, "top_of_tree"))).Bool(); b {
		m.note("%sdynamo.top_of_tree left as is (no immutable rev to pin; choose a commit for source.rev)", v.label)
		return
	}
	set := func(key string) bool {
		n := yamltree.DeAlias(yamltree.Get(dynamo, key))
		return n != nil && n.Tag != "!!null"
	}
	hasGit, hasWheel, hasVersion := set("hash"), set("wheel"), set("version")
	if !hasGit && !hasWheel && !hasVersion {
		return
	}
	after := ""
	if yamltree.Get(dynamo, "install") != nil {
		after = "install"
	}
	source := childMap(dynamo, "source", after)
	switch {
	case hasGit:
		m.moveKey(v.label, dynamo, "hash", source, "rev", "dynamo.source")
		m.moveKey(v.label, dynamo, "cargo_patches", source, "patches", "dynamo.source")
		if hasVersion {
			takeKey(dynamo, "version")
			m.note("%sdropped dynamo.version (ignored alongside hash)", v.label)
		}
		m.note("%sdynamo.hash -> dynamo.source.rev", v.label)
	case hasWheel:
		m.moveKey(v.label, dynamo, "wheel", source, "wheel", "dynamo.source")
		if hasVersion {
			takeKey(dynamo, "version")
		}
		m.note("%sdynamo.wheel -> dynamo.source.wheel", v.label)
	default:
		m.moveKey(v.label, dynamo, "version", source, "pypi", "dynamo.source")
		m.note("%sdynamo.version -> dynamo.source.pypi", v.label)
	}
}

// stripBenchmark is srtctl's _strip_unused_benchmark_fields.
func (m *migration) stripBenchmark(v migrationVariant, btype string) {
	bench := yamltree.DeAlias(yamltree.Get(v.node, "benchmark"))
	if bench == nil || bench.Kind != yaml.MappingNode {
		return
	}
	if btype == "" {
		btype = "sa-bench" // slurmbench's default type (srtctl's is manual)
	}
	own, known := benchmarkKeys[btype]
	if !known {
		return // an unknown type: the reader reports it; nothing to strip safely
	}
	accepted := map[string]bool{}
	for _, k := range append(append([]string{}, benchmarkShared...), own...) {
		accepted[k] = true
	}
	for i := 0; i+1 < len(bench.Content); {
		k := bench.Content[i].Value
		if accepted[k] || k == "<<" {
			i += 2
			continue
		}
		// A key slurmbench plans whatever the type, or one srtctl never
		// read but slurmbench plans (BeyondSrtctl: tokenizer_mode), has an
		// effect; the schema-2 reader keeps it, and so does the migration.
		if benchmarkPlanned[k] || recipe.BeyondSrtctl("benchmark."+k) {
			m.note("%skept benchmark.%s: srt-slurm 2.x refuses it for type %s, but slurmbench plans it", v.label, k, btype)
			i += 2
			continue
		}
		bench.Content = append(bench.Content[:i:i], bench.Content[i+2:]...)
		m.note("%sremoved benchmark.%s (unused by type %s)", v.label, k, btype)
	}
}

// foldMooncake is srtctl's _fold_mooncake.
func (m *migration) foldMooncake(v migrationVariant) {
	backend := yamltree.DeAlias(yamltree.Get(v.node, "backend"))
	store := yamltree.DeAlias(yamltree.Get(backend, "mooncake_kv_store"))
	if store == nil || store.Kind != yaml.MappingNode {
		return
	}
	var specs []*yaml.Node
	roles := yamltree.DeAlias(yamltree.Get(v.node, "roles"))
	if roles != nil && roles.Kind == yaml.MappingNode {
		for i := 1; i < len(roles.Content); i += 2 {
			if yamltree.DeAlias(roles.Content[i]).Kind == yaml.MappingNode {
				specs = append(specs, yamltree.DeAlias(roles.Content[i]))
			}
		}
	}
	env := yamltree.DeAlias(yamltree.Get(store, "env"))
	if env != nil && env.Kind == yaml.MappingNode && len(env.Content) > 0 && len(specs) == 0 {
		m.note("%sbackend.mooncake_kv_store left as is (no roles in this variant to carry its env)", v.label)
		return
	}
	near := ""
	if yamltree.Get(v.node, "roles") != nil {
		near = "roles"
	}
	entry := serviceEntry(servicesList(v.node, near), "mooncake-master")
	m.moveKey(v.label, store, "container", entry, "container", "services[mooncake-master]")
	m.moveKey(v.label, store, "master_extra_args", entry, "args", "services[mooncake-master]")
	if yamltree.Get(store, "store_config") != nil {
		m.moveKey(v.label, store, "store_config", childMap(entry, "options", ""), "store_config", "services[mooncake-master].options")
	}
	if _, moved := takeKey(store, "env"); moved != nil && len(yamltree.DeAlias(moved).Content) > 0 {
		moved = yamltree.DeAlias(moved)
		for _, spec := range specs {
			roleEnv := childMap(spec, "env", "")
			for i := 0; i+1 < len(moved.Content); i += 2 {
				setScalar(roleEnv, moved.Content[i].Value, yamltree.DeepCopy(moved.Content[i+1]))
			}
		}
		m.note("%sbackend.mooncake_kv_store.env -> roles.*.env", v.label)
	}
	if len(store.Content) == 0 {
		takeKey(backend, "mooncake_kv_store")
	}
	m.note("%sbackend.mooncake_kv_store -> services mooncake-master", v.label)
}

// foldEngine is srtctl's _fold_engine: what is left of backend becomes
// engine:, where backend was.
func (m *migration) foldEngine(v migrationVariant, engine, engineKey, baseEngine string) {
	bi := yamltree.KeyIndex(v.node, "backend")
	if bi < 0 {
		return
	}
	bk, backend := v.node.Content[bi], yamltree.DeAlias(v.node.Content[bi+1])
	roles := yamltree.DeAlias(yamltree.Get(v.node, "roles"))
	if backend.Kind != yaml.MappingNode {
		return // null (an override deleting it) or malformed: the reader reports it
	}
	if kv := yamltree.DeAlias(yamltree.Get(backend, "kv_events_config")); kv != nil && roles != nil {
		switch {
		case kv.Kind == yaml.MappingNode:
			all := true
			for _, role := range roleNames {
				mode := roleMode[role]
				if e := yamltree.Get(kv, mode); e != nil {
					if spec := yamltree.DeAlias(yamltree.Get(roles, role)); spec != nil {
						setScalar(spec, "kv_events", e)
						m.note("%sbackend.kv_events_config.%s -> roles.%s.kv_events", v.label, mode, role)
					} else {
						all = false
					}
				}
			}
			if all {
				takeKey(backend, "kv_events_config")
			}
		case kv.Kind == yaml.ScalarNode && kv.Tag == "!!bool":
			if b, _ := recipe.NewValue(kv).Bool(); b {
				resolved := engine
				if resolved == "" {
					resolved = "sglang"
				}
				covered := []string{"prefill", "decode"}
				if resolved == "sglang" {
					covered = roleNames
				}
				for _, role := range covered {
					if spec := yamltree.DeAlias(yamltree.Get(roles, role)); spec != nil {
						setScalar(spec, "kv_events", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
					}
				}
				takeKey(backend, "kv_events_config")
				m.note("%sbackend.kv_events_config: true -> roles.*.kv_events", v.label)
			}
		}
	}
	typ := yamltree.DeAlias(yamltree.Get(backend, "type"))
	var rest []*yaml.Node
	for i := 0; i+1 < len(backend.Content); i += 2 {
		if backend.Content[i].Value != "type" {
			rest = append(rest, backend.Content[i], backend.Content[i+1])
		}
	}
	switch {
	case typ != nil:
	case v.override && len(rest) > 0 && baseEngine != "":
		// Deep merge replaces base's engine: sglang by this mapping whole:
		// the type has to be in it.
		typ = str(baseEngine)
	case !v.override:
		// The implicit default made explicit (srtctl does so for a
		// backend left empty), so a section's engine merges onto it.
		name := "sglang"
		for e, k := range engineConfigKey {
			if k == engineKey && e != "mocker" {
				name = e
			}
		}
		typ = str(name)
		m.note("%sengine: %s (was the implicit default)", v.label, name)
	}
	var value *yaml.Node
	switch {
	case len(rest) > 0:
		value = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: backend.Style}
		if typ != nil {
			value.Content = append(value.Content, yamltree.StrKey("type"), typ)
		}
		value.Content = append(value.Content, rest...)
	case typ != nil:
		value = typ
	}
	if value == nil {
		v.node.Content = append(v.node.Content[:bi:bi], v.node.Content[bi+2:]...)
		if bi < len(v.node.Content) && v.node.Content[bi].HeadComment == "" {
			v.node.Content[bi].HeadComment = bk.HeadComment
		}
		return
	}
	ek := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "engine", Line: bk.Line,
		HeadComment: bk.HeadComment, LineComment: bk.LineComment, FootComment: bk.FootComment}
	v.node.Content[bi], v.node.Content[bi+1] = ek, value
	m.note("%sbackend -> engine", v.label)
}

// keepBlankLines puts back the blank lines yaml.v3 drops: before each
// top-level key (and each key one level into an override file) that had
// one in the original, counting its head comment as part of it.
func keepBlankLines(orig, out []byte) []byte {
	blankBefore := map[string]bool{}
	lines := strings.Split(string(orig), "\n")
	topKey := func(l string) (string, bool) {
		if l == "" || l[0] == ' ' || l[0] == '#' || l[0] == '-' || l[0] == '\t' {
			return "", false
		}
		k, _, ok := strings.Cut(l, ":")
		return strings.TrimSpace(k), ok
	}
	for i, l := range lines {
		k, ok := topKey(l)
		if !ok {
			continue
		}
		j := i - 1
		for j >= 0 && strings.HasPrefix(lines[j], "#") {
			j--
		}
		if j >= 0 && strings.TrimSpace(lines[j]) == "" {
			blankBefore[k] = true
		}
	}
	// Keys the migration renames keep the blank line of the old one.
	for old, new := range map[string]string{"backend": "engine", "infra": "services"} {
		if blankBefore[old] {
			blankBefore[new] = true
		}
	}
	var res []string
	for _, l := range strings.Split(string(out), "\n") {
		if k, ok := topKey(l); ok && blankBefore[k] && (len(res) == 0 || res[len(res)-1] != "schema: 2") {
			// Before the key's head comment, not between them.
			j := len(res)
			for j > 0 && strings.HasPrefix(res[j-1], "#") {
				j--
			}
			if j > 0 && res[j-1] != "" {
				res = append(res[:j], append([]string{""}, res[j:]...)...)
			}
		}
		res = append(res, l)
	}
	return []byte(strings.Join(res, "\n"))
}
