package exitcode

import (
	"errors"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		out  string
		code Code
	}{
		{"one line", Errorf(Config, "--conc: bad"), "slurmbench: --conc: bad\n", Config},
		{"joined", With(Health, errors.Join(errors.New("first"), errors.New("  second  "), errors.New(""))), "slurmbench: first\n  second\n", Health},
		{"already said", With(Benchmark, errors.New("")), "", Benchmark},
		{"blank lines dropped", errors.New("a\n\n  b\n"), "slurmbench: a\n  b\n", Internal},
	} {
		var w strings.Builder
		if code := Report(&w, tt.err); code != tt.code || w.String() != tt.out {
			t.Errorf("%s: %q exit %d, want %q exit %d", tt.name, w.String(), code, tt.out, tt.code)
		}
	}
}
