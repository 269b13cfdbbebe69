package engine

import (
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"go.yaml.in/yaml/v3"
)

// kvEventsDefaults are an engine's --kv-events-config defaults (srtctl's
// get_kv_events_config_for_mode), in order.
type kvEventsDefaults []pyjson.YAMLField

var (
	sglangKVEventsDefaults = kvEventsDefaults{{Key: "publisher", Value: pyjson.YAMLScalar("!!str", "zmq")}, {Key: "topic", Value: pyjson.YAMLScalar("!!str", "kv-events")}}
	vllmKVEventsDefaults   = append(append(kvEventsDefaults{}, sglangKVEventsDefaults...), pyjson.YAMLField{Key: "enable_kv_cache_events", Value: pyjson.YAMLScalar("!!bool", "true")})
)

// CheckKVEvents refuses a backend.kv_events_config srtctl's schema would
// not take: true/false/null, or a mapping of prefill, decode and
// aggregated to true/false/null or a mapping.
func CheckKVEvents(b Builder, backend string) error {
	raw := b.Recipe().Backend.KVEventsConfig
	if raw == nil || raw.Node == nil {
		return nil
	}
	const field = "backend.kv_events_config"
	if bt := backend; bt != "sglang" && bt != "vllm" {
		return b.Fail(field, "srtctl's %s backend has no KV events config (sglang and vllm do)", bt)
	}
	n := raw.Node
	switch {
	case n.Kind == yaml.ScalarNode && (n.Tag == "!!bool" || n.Tag == "!!null"):
		return nil
	case n.Kind != yaml.MappingNode:
		return b.Fail(field, "%q: want true, false or a mapping of prefill/decode/aggregated", n.Value)
	}
	fields, _ := pyjson.YAMLFields(n)
	for _, f := range fields {
		switch f.Key {
		case "prefill", "decode", "aggregated":
		default:
			return b.Fail(field, "%q: not a mode (prefill, decode, aggregated)", f.Key)
		}
		v := f.Value
		if !(v.Kind == yaml.MappingNode || v.Kind == yaml.ScalarNode && (v.Tag == "!!bool" || v.Tag == "!!null")) {
			return b.Fail(field+"."+f.Key, "%q: want true, false or a mapping", v.Value)
		}
		if v.Kind == yaml.MappingNode {
			if _, err := pyjson.YAMLObject(0, mustFields(v)); err != nil {
				return b.Fail(field+"."+f.Key, "%v", err)
			}
		}
	}
	return nil
}

func mustFields(n *yaml.Node) []pyjson.YAMLField {
	f, _ := pyjson.YAMLFields(n)
	return f
}

// kvEventsFlag is srtctl's --kv-events-config for w's mode, publishing on
// port: true enables the defaults for prefill and decode only; a mapping
// names each mode (true, or keys merged over the defaults); the endpoint is
// set last. nil when the mode publishes nothing.
func kvEventsFlag(b Builder, w *Worker, port int, defaults kvEventsDefaults) ([]string, error) {
	raw := b.Recipe().Backend.KVEventsConfig
	if raw == nil || raw.Node == nil {
		return nil, nil
	}
	var modeCfg *yaml.Node
	n := raw.Node
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		if on, _ := strconv.ParseBool(strings.ToLower(n.Value)); !on || w.Role == plan.RoleAgg {
			return nil, nil
		}
		modeCfg = pyjson.YAMLScalar("!!bool", "true")
	case n.Kind == yaml.MappingNode:
		key := w.Mode() // prefill, decode, aggregated
		for _, f := range mustFields(n) {
			if f.Key == key {
				modeCfg = f.Value
			}
		}
	}
	if modeCfg == nil {
		return nil, nil
	}
	fields := append([]pyjson.YAMLField(nil), defaults...)
	switch {
	case modeCfg.Kind == yaml.MappingNode:
		for _, f := range mustFields(modeCfg) {
			fields = setField(fields, f)
		}
	case modeCfg.Tag == "!!bool":
		if on, _ := strconv.ParseBool(strings.ToLower(modeCfg.Value)); !on {
			return nil, nil
		}
	default:
		return nil, nil
	}
	fields = setField(fields, pyjson.YAMLField{Key: "endpoint", Value: pyjson.YAMLScalar("!!str", "tcp://*:"+strconv.Itoa(port))})
	out, err := pyjson.YAMLObject(0, fields)
	if err != nil {
		return nil, b.Fail("backend.kv_events_config", "%v", err)
	}
	return []string{"--kv-events-config", out}, nil
}

// setField replaces a key in place (Python's dict update keeps its
// position) or appends it.
func setField(fields []pyjson.YAMLField, f pyjson.YAMLField) []pyjson.YAMLField {
	for i := range fields {
		if fields[i].Key == f.Key {
			fields[i].Value = f.Value
			return fields
		}
	}
	return append(fields, f)
}
