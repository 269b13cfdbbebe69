package driver

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLogWatch: a log probe matches a line once it is in the log, reads
// only what was appended since the last look, finds a pattern split across
// two writes, and never matches across lines.
func TestLogWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service_x.log")
	w := &logWatch{path: path, re: regexp.MustCompile(`registered for GPU`)}
	if ok, err := w.scan(); ok || err == nil {
		t.Fatalf("no log yet: ok %v err %v", ok, err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write("starting\nhost memory registered\n")
	if ok, _ := w.scan(); ok {
		t.Fatal("matched a line without the pattern")
	}
	write(" for GPU access\n") // a line of its own: no match across lines
	if ok, _ := w.scan(); ok {
		t.Fatal("matched across two lines")
	}
	write(strings.Repeat("x", 3*serviceLogChunk) + "\nhost memory registered fo")
	if ok, _ := w.scan(); ok {
		t.Fatal("matched a partial pattern")
	}
	if w.offset != int64(len("starting\nhost memory registered\n for GPU access\n")+3*serviceLogChunk+1+len("host memory registered fo")) {
		t.Errorf("offset %d: the whole log was not read once", w.offset)
	}
	write("r GPU access\n")
	if ok, err := w.scan(); !ok || err != nil {
		t.Fatalf("pattern split across writes not matched: %v %v", ok, err)
	}
}
