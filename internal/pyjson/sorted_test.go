package pyjson

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAppendSorted(t *testing.T) {
	v := map[string]any{"b": []any{1, 2.5, "é", nil, true}, "a": map[string]any{"z": json.Number("3"), "y": json.Number("1e3")},
		"c": []int{1}, "d": []string{"x"}, "e": math.Inf(1), "f": int64(-2)}
	for _, c := range []struct {
		sep  Separators
		want string
	}{
		{Compact, `{"a":{"y":1000.0,"z":3},"b":[1,2.5,"\u00e9",null,true],"c":[1],"d":["x"],"e":Infinity,"f":-2}`},
		{Default, `{"a": {"y": 1000.0, "z": 3}, "b": [1, 2.5, "\u00e9", null, true], "c": [1], "d": ["x"], "e": Infinity, "f": -2}`},
	} {
		got, err := AppendSorted(nil, v, c.sep)
		if err != nil || string(got) != c.want {
			t.Errorf("AppendSorted(%q) = %s, %v\nwant %s", c.sep, got, err, c.want)
		}
	}
	if _, err := AppendSorted(nil, map[string]any{"k": struct{}{}}, Compact); err == nil {
		t.Error("a struct was written")
	}
}
