package enroot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
)

// Squashfs 4.0 superblock layout (little endian), from the kernel's
// fs/squashfs/squashfs_fs.h. Only the fields checked here are named.
const (
	superblockSize    = 96
	squashfsMagic     = "hsqs" // 0x73717368 little endian
	offBlockSize      = 12
	offCompression    = 20
	offBlockLog       = 22
	offIDCount        = 26
	offVersionMajor   = 28
	offVersionMinor   = 30
	offBytesUsed      = 40
	offIDTableStart   = 48
	offInodeTable     = 64
	offDirectoryTable = 72

	// A metadata block header is a uint16: bit 15 set means stored
	// uncompressed, the low 15 bits are the stored size (at most 8 KiB).
	metadataUncompressed = 0x8000
	metadataMaxSize      = 8192
)

// ErrInvalidSquash marks a file that is not a complete squashfs image.
var ErrInvalidSquash = errors.New("not a complete squashfs image")

// ValidateSquash checks that the file at path is a complete squashfs 4.0
// image without reading it whole: the magic and version, a sane block size
// and compression id, bytes_used (offset 40) not beyond the end of the file,
// table offsets inside bytes_used, and the id lookup table — the last table
// mksquashfs writes — pointing at a readable metadata block. A truncated or
// half-written file fails; so does one whose superblock was never written
// (mksquashfs writes it last). It returns the file's size.
//
// This is weaker than `unsquashfs -l` (it does not walk the directory
// tree) but costs a few reads regardless of the image size, which is what an
// import-or-skip decision on a shared filesystem needs.
func ValidateSquash(path string) (size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if err := validateSquash(f, info.Size()); err != nil {
		return info.Size(), fmt.Errorf("%s: %w", path, err)
	}
	return info.Size(), nil
}

func validateSquash(r io.ReaderAt, size int64) error {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidSquash}, args...)...)
	}
	if size < superblockSize {
		return invalid("%d bytes is smaller than a superblock", size)
	}
	var sb [superblockSize]byte
	if _, err := r.ReadAt(sb[:], 0); err != nil {
		return fmt.Errorf("reading superblock: %w", err)
	}
	le := binary.LittleEndian
	if string(sb[:4]) != squashfsMagic {
		return invalid("bad magic %q", sb[:4])
	}
	if major, minor := le.Uint16(sb[offVersionMajor:]), le.Uint16(sb[offVersionMinor:]); major != 4 || minor != 0 {
		return invalid("version %d.%d, want 4.0", major, minor)
	}
	blockSize := le.Uint32(sb[offBlockSize:])
	if blockSize < 4096 || blockSize > 1<<20 || bits.OnesCount32(blockSize) != 1 ||
		uint32(le.Uint16(sb[offBlockLog:])) != uint32(bits.TrailingZeros32(blockSize)) { //nolint:gosec // 0..32
		return invalid("block size %d with block_log %d", blockSize, le.Uint16(sb[offBlockLog:]))
	}
	if c := le.Uint16(sb[offCompression:]); c < 1 || c > 6 {
		return invalid("unknown compression id %d", c)
	}
	bytesUsed := le.Uint64(sb[offBytesUsed:])
	if bytesUsed < superblockSize || bytesUsed > uint64(size) {
		return invalid("bytes_used %d but the file has %d bytes (truncated?)", bytesUsed, size)
	}
	idTable := le.Uint64(sb[offIDTableStart:])
	inodeTable := le.Uint64(sb[offInodeTable:])
	dirTable := le.Uint64(sb[offDirectoryTable:])
	if inodeTable < superblockSize || inodeTable > dirTable || dirTable > idTable || idTable+8 > bytesUsed {
		return invalid("table offsets inode %d, directory %d, id %d outside %d bytes used", inodeTable, dirTable, idTable, bytesUsed)
	}
	if le.Uint16(sb[offIDCount:]) == 0 {
		return invalid("no ids")
	}
	var ptr [8]byte
	if _, err := r.ReadAt(ptr[:], int64(idTable)); err != nil { //nolint:gosec // idTable < bytes_used ≤ the file's size, checked above
		return fmt.Errorf("reading id table: %w", err)
	}
	block := le.Uint64(ptr[:])
	if block < superblockSize || block+2 > idTable {
		return invalid("id table points at %d, outside the image", block)
	}
	var hdr [2]byte
	if _, err := r.ReadAt(hdr[:], int64(block)); err != nil { //nolint:gosec // block < idTable, checked above
		return fmt.Errorf("reading id metadata block: %w", err)
	}
	if n := uint64(le.Uint16(hdr[:]) &^ metadataUncompressed); n == 0 || n > metadataMaxSize || block+2+n > idTable {
		return invalid("id metadata block at %d has size %d", block, n)
	}
	return nil
}
