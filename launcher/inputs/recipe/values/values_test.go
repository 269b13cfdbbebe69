package values

import (
	"reflect"
	"testing"
)

func TestParseConcurrencies(t *testing.T) {
	got, err := ParseConcurrencies(" 8x32x64 ")
	if err != nil || !reflect.DeepEqual(got, []int{8, 32, 64}) {
		t.Errorf("ParseConcurrencies = %v, %v", got, err)
	}
	for _, s := range []string{"", "   ", "x", ",", "eight", "8x-", "8x1.5"} {
		if v, err := ParseConcurrencies(s); err == nil {
			t.Errorf("ParseConcurrencies(%q) = %v, want an error", s, v)
		}
	}
}
