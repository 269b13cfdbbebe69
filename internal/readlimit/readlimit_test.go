package readlimit

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(path, 5); err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	if _, err := ReadFile(path, 4); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("over the limit: %v, want an error naming the file", err)
	}
	if _, err := ReadFile("/dev/zero", 1<<20); err == nil {
		t.Error("/dev/zero was read to the end")
	}
}

// TestReadFileRefusesAFIFO: a FIFO named like the expected file is refused
// at once; a plain open would block until some writer appeared.
func TestReadFileRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := ReadFile(path, Default); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("ReadFile(FIFO) = %v, want a refusal naming it", err)
	}
}
