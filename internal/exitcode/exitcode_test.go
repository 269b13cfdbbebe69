package exitcode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestREADMETable: the README's exit-code table is this package's Table,
// row for row, so neither can drift from the other.
func TestREADMETable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readmeTable(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(Table) {
		t.Errorf("README lists %d exit codes, the table %d", len(rows), len(Table))
	}
	for i := 0; i < len(rows) && i < len(Table); i++ {
		if rows[i] != Table[i] {
			t.Errorf("row %d: README says %d %q, the table %d %q", i+1, rows[i].Code, rows[i].Layer, Table[i].Code, Table[i].Layer)
		}
	}
}

// readmeTable parses the "| code | layer |" table under "## Exit codes".
func readmeTable(readme string) ([]Entry, error) {
	_, section, ok := strings.Cut(readme, "\n## Exit codes\n")
	if !ok {
		return nil, errors.New(`README.md has no "## Exit codes" section`)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	row := regexp.MustCompile(`^\|\s*(\d+)\s*\|\s*(.+?)\s*\|$`)
	var out []Entry
	for _, line := range strings.Split(section, "\n") {
		m := row.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Code(n), m[2]})
	}
	if len(out) == 0 {
		return nil, errors.New("README.md's exit-code section has no table rows")
	}
	return out, nil
}

func TestTableAscendingAndUnique(t *testing.T) {
	for i := 1; i < len(Table); i++ {
		if Table[i].Code <= Table[i-1].Code {
			t.Errorf("table not ascending at %d after %d", Table[i].Code, Table[i-1].Code)
		}
	}
}

func TestOf(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		err  error
		want Code
	}{
		{nil, OK},
		{base, Internal},
		{With(Image, base), Image},
		{fmt.Errorf("importing: %w", With(Image, base)), Image},
		{Errorf(Config, "bad field %q", "x"), Config},
		{With(Engine, With(Health, base)), Engine}, // the outermost layer decides
		{errors.Join(fs.ErrNotExist, With(Collect, base)), Collect},
	}
	for _, tt := range tests {
		if got := Of(tt.err); got != tt.want {
			t.Errorf("Of(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
	if With(Config, nil) != nil {
		t.Error("With(code, nil) is not nil")
	}
	if got := Image.String(); got != "image import or validation" {
		t.Errorf("Image.String() = %q", got)
	}
}
