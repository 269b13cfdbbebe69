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

// TestCausesDocumented: docs/exit-codes.md's cause table is Causes, row for
// row, and every cause's code is in Table.
func TestCausesDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "exit-codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| cause | code |\n")
	if !ok {
		t.Fatal(`docs/exit-codes.md has no "| cause | code |" table`)
	}
	row := regexp.MustCompile(`^\|\s*(.+?)\s*\|\s*(\d+)\s*\|$`)
	var got []Cause
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if m := row.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			got = append(got, Cause{m[1], Code(n)})
		}
	}
	if len(got) != len(Causes) {
		t.Errorf("docs/exit-codes.md lists %d causes, Causes %d", len(got), len(Causes))
	}
	for i := 0; i < len(got) && i < len(Causes); i++ {
		if got[i] != Causes[i] {
			t.Errorf("cause row %d: %q %d, Causes %q %d", i+1, got[i].Name, got[i].Code, Causes[i].Name, Causes[i].Code)
		}
	}
	for _, c := range Causes {
		if c.Code.String() == fmt.Sprintf("exit code %d", int(c.Code)) {
			t.Errorf("cause %q: code %d is not in Table", c.Name, c.Code)
		}
		if CodeOf(c.Name) != c.Code {
			t.Errorf("CodeOf(%q) = %d, want %d", c.Name, CodeOf(c.Name), c.Code)
		}
	}
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
