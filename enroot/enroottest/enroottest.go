// Package enroottest helps tests use the stand-in enroot
// (testdata/enroot-standin/enroot at the repository root): where it is, how
// to read its call log, and how to write a squash file it and the enroot
// package accept.
package enroottest

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// StandinPath returns the absolute path of the stand-in enroot script,
// failing the test if it is missing.
func StandinPath(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("enroottest: cannot locate the source tree")
	}
	// enroot/enroottest/enroottest.go -> repository root.
	path := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "enroot-standin", "enroot")
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("enroottest: stand-in enroot: %v", err)
	}
	return path
}

// Call is one line of the stand-in's log ($ENROOT_STANDIN_LOG).
type Call struct {
	Time string            `json:"time"`
	PID  int               `json:"pid"`
	Cwd  string            `json:"cwd"`
	Argv []string          `json:"argv"` // after the program name: ["import", "-o", ...]
	Env  map[string]string `json:"env"`  // the ENROOT_* settings of the call
}

// Command returns the enroot subcommand ("import", "start", ...).
func (c Call) Command() string {
	if len(c.Argv) == 0 {
		return ""
	}
	return c.Argv[0]
}

// ReadCalls parses the stand-in's log. A missing log means no calls.
func ReadCalls(path string) ([]Call, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []Call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		calls = append(calls, c)
	}
	return calls, sc.Err()
}

// Count returns how many calls ran the enroot subcommand cmd.
func Count(calls []Call, cmd string) int {
	n := 0
	for _, c := range calls {
		if c.Command() == cmd {
			n++
		}
	}
	return n
}

// WriteSquash writes a structurally valid squashfs 4.0 image of size bytes
// (at least 4096, a multiple of 4096) at path: superblock, an id metadata
// block and the id lookup table at the very end, zeros in between. The file
// is sparse, so a 1 GiB image costs no disk space.
func WriteSquash(path string, size int64) error {
	if size < 4096 || size%4096 != 0 {
		return fmt.Errorf("enroottest: squash size %d is not a positive multiple of 4096", size)
	}
	le := binary.LittleEndian
	idTable := uint64(size) - 8
	idBlock := idTable - 6 // 2-byte header + one 4-byte id
	var sb [96]byte
	copy(sb[0:], "hsqs")
	le.PutUint32(sb[4:], 1)       // inodes
	le.PutUint32(sb[12:], 131072) // block size
	le.PutUint16(sb[20:], 1)      // gzip
	le.PutUint16(sb[22:], 17)     // block_log
	le.PutUint16(sb[26:], 1)      // ids
	le.PutUint16(sb[28:], 4)      // version 4.0
	le.PutUint64(sb[40:], uint64(size))
	le.PutUint64(sb[48:], idTable)
	le.PutUint64(sb[56:], ^uint64(0))
	le.PutUint64(sb[64:], 96)
	le.PutUint64(sb[72:], 96)
	le.PutUint64(sb[80:], ^uint64(0))
	le.PutUint64(sb[88:], ^uint64(0))
	var tail [14]byte
	le.PutUint16(tail[0:], 0x8000|4)
	le.PutUint64(tail[6:], idBlock)

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteAt(sb[:], 0); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteAt(tail[:], int64(idBlock)); err != nil { //nolint:gosec // a small offset this helper computed
		f.Close()
		return err
	}
	return f.Close()
}
