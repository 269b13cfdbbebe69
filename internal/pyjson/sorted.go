package pyjson

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
)

// Separators are json.dumps' item and key separators: Compact is
// separators=(",", ":"), Default its default (", ", ": ").
type Separators struct{ Item, Key string }

var (
	Compact = Separators{",", ":"}
	Default = Separators{", ", ": "}
)

// AppendSorted appends v as Python's json.dumps(v, sort_keys=True,
// separators=sep) writes it with ensure_ascii: maps with string keys in
// code-point order (UTF-8 byte order is the same), floats as Python's repr
// (NaN and the infinities as allow_nan writes them), json.Number as
// written (a float when it has a dot or an exponent). A value of another
// type is an error naming it.
func AppendSorted(b []byte, v any, sep Separators) ([]byte, error) {
	var err error
	list := func(n int, at func(int) any) ([]byte, error) {
		b = append(b, '[')
		for i := range n {
			if i > 0 {
				b = append(b, sep.Item...)
			}
			if b, err = AppendSorted(b, at(i), sep); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return AppendString(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float64:
		return append(b, pyfloat.JSON(x)...), nil
	case json.Number:
		if f, err := x.Float64(); err == nil && strings.ContainsAny(x.String(), ".eE") {
			return append(b, pyfloat.JSON(f)...), nil
		}
		return append(b, x.String()...), nil
	case []int:
		return list(len(x), func(i int) any { return x[i] })
	case []string:
		return list(len(x), func(i int) any { return x[i] })
	case []any:
		return list(len(x), func(i int) any { return x[i] })
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, sep.Item...)
			}
			b = AppendString(b, k)
			b = append(b, sep.Key...)
			if b, err = AppendSorted(b, x[k], sep); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("%T is not a JSON value", v)
}
