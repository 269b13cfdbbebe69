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

// TestREADMETable: the exit-code tables of the README and of
// docs/exit-codes.md are this package's Table, row for row, so neither can
// drift from the code.
func TestREADMETable(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/exit-codes.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := docTable(string(b))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if len(rows) != len(Table) {
			t.Errorf("%s lists %d exit codes, the table %d", doc, len(rows), len(Table))
		}
		for i := 0; i < len(rows) && i < len(Table); i++ {
			if rows[i] != Table[i] {
				t.Errorf("%s row %d: %d %q, the table %d %q", doc, i+1, rows[i].Code, rows[i].Layer, Table[i].Code, Table[i].Layer)
			}
		}
	}
}

// docTable parses the first "| code | layer |" table of a Markdown file.
func docTable(doc string) ([]Entry, error) {
	_, table, ok := strings.Cut(doc, "| code | layer |\n")
	if !ok {
		return nil, errors.New(`no "| code | layer |" table`)
	}
	row := regexp.MustCompile(`^\|\s*(\d+)\s*\|\s*(.+?)\s*\|$`)
	var out []Entry
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue // the |---| line
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Code(n), m[2]})
	}
	if len(out) == 0 {
		return nil, errors.New("the exit-code table has no rows")
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
