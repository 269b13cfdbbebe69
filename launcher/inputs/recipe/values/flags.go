package values

import "sort"

// Flags renders an engine config to CLI flags exactly by srtctl's rule
// (_config_to_cli_args): keys sorted, '_' → '-',
// true → "--flag", false and null → omitted, a list → "--flag" then each
// item, anything else → "--flag" "value". A mapping is passed as JSON (srtctl
// passes Python's dict repr, which no engine parses — a deliberate fix).
func Flags(cfg map[string]Value) []string {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		v := cfg[k]
		flag := "--" + dashes(k)
		if v.IsNull() {
			continue
		}
		if b, ok := v.Bool(); ok {
			if b {
				out = append(out, flag)
			}
			continue
		}
		if items, ok := v.List(); ok {
			out = append(out, flag)
			out = append(out, items...)
			continue
		}
		out = append(out, flag, v.String())
	}
	return out
}

func dashes(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}
