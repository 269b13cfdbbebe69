package sabench

import (
	"maps"
	"strings"
	"testing"
)

func TestParseGoodput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want map[string]float64
		err  string
	}{
		{nil, nil, ""},
		{[]string{"ttft:200", "tpot:30"}, map[string]float64{"ttft": 200, "tpot": 30}, ""},
		{[]string{"ttft:200 e2el:5000.5"}, map[string]float64{"ttft": 200, "e2el": 5000.5}, ""},
		{[]string{"itl:5"}, nil, "the metric is ttft, tpot or e2el"},
		{[]string{"ttft"}, nil, "want METRIC:MS"},
		{[]string{"ttft:-1"}, nil, "positive"},
		{[]string{"ttft:NaN"}, nil, "positive"},
		{[]string{"ttft:1", "ttft:2"}, nil, "given twice"},
	} {
		got, err := ParseGoodput(c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseGoodput(%q) = %v, want error %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("ParseGoodput(%q) = %v, %v; want %v", c.args, got, err, c.want)
		}
	}
}
