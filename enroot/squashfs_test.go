package enroot

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot/enroottest"
)

// realSquash is a 4 KiB image made by `mksquashfs root out -comp lzo -noD
// -all-root` (squashfs-tools 4.5.1), the options enroot uses by default.
const realSquash = "testdata/mksquashfs-lzo.sqsh"

func readFixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(realSquash)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestValidateSquashAcceptsRealAndStandinImages(t *testing.T) {
	dir := t.TempDir()
	if _, err := ValidateSquash(realSquash); err != nil {
		t.Errorf("mksquashfs output: %v", err)
	}
	sparse := filepath.Join(dir, "sparse.sqsh")
	if err := enroottest.WriteSquash(sparse, 64<<20); err != nil {
		t.Fatal(err)
	}
	if size, err := ValidateSquash(sparse); err != nil || size != 64<<20 {
		t.Errorf("enroottest.WriteSquash output: size %d, %v", size, err)
	}
	out := filepath.Join(dir, "standin.sqsh")
	cmd := exec.Command(enroottest.StandinPath(t), "import", "-o", out, "docker://nvcr.io#nvidia/x:1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("stand-in import: %v\n%s", err, b)
	}
	if _, err := ValidateSquash(out); err != nil {
		t.Errorf("stand-in output: %v", err)
	}
}

func TestValidateSquashRejectsBrokenImages(t *testing.T) {
	good := readFixture(t)
	le := binary.LittleEndian
	patch := func(off int, v uint64, n int) []byte {
		b := bytes.Clone(good)
		switch n {
		case 2:
			le.PutUint16(b[off:], uint16(v))
		case 4:
			le.PutUint32(b[off:], uint32(v))
		case 8:
			le.PutUint64(b[off:], v)
		}
		return b
	}
	bytesUsed := le.Uint64(good[offBytesUsed:])
	idTable := le.Uint64(good[offIDTableStart:])
	idBlock := le.Uint64(good[idTable:])
	corruptIDBlock := bytes.Clone(good)
	le.PutUint16(corruptIDBlock[idBlock:], 0)

	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "smaller than a superblock"},
		{"superblock only", good[:superblockSize], "truncated"},
		{"truncated before the tables", good[:bytesUsed/2], "truncated"},
		{"truncated by one byte", good[:bytesUsed-1], "truncated"},
		{"zeros where mksquashfs has not written the superblock yet", make([]byte, 4096), "bad magic"},
		{"wrong magic", append([]byte("sqsh"), good[4:]...), "bad magic"},
		{"squashfs 3.0", patch(offVersionMajor, 3, 2), "version 3.0"},
		{"block size not a power of two", patch(offBlockSize, 100000, 4), "block size"},
		{"unknown compression", patch(offCompression, 9, 2), "compression id 9"},
		{"bytes_used past the end", patch(offBytesUsed, 1<<40, 8), "truncated"},
		{"id table outside bytes_used", patch(offIDTableStart, bytesUsed, 8), "table offsets"},
		{"id table pointing nowhere", patch(int(idTable), 1<<30, 8), "id table points"},
		{"empty id metadata block", corruptIDBlock, "id metadata block"},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".sqsh"), tc.data)
			_, err := ValidateSquash(path)
			if !errors.Is(err, ErrInvalidSquash) {
				t.Fatalf("ValidateSquash = %v, want ErrInvalidSquash", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q should name %s and say %q", err, path, tc.want)
			}
		})
	}
}

// Figures for the final report: the cheap check (stat + sidecar) and the
// full validation are both constant in the image size; hashing is not.
// Run: go test ./enroot -run '^$' -bench Squash -benchtime 20x
func BenchmarkSquashCheck1GiB(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.sqsh")
	if err := enroottest.WriteSquash(path, 1<<30); err != nil {
		b.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := writeManifest(path, &Manifest{Ref: "x", Size: info.Size(), MTime: info.ModTime(), CreatedAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	b.Run("sidecar", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if st := Inspect(path); st.State != StateOK {
				b.Fatal(st.State, st.Problem)
			}
		}
	})
	b.Run("validate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := ValidateSquash(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(1 << 30)
		for i := 0; i < b.N; i++ {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(sha256.New(), f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}

// With squashfs-tools installed, check images made with the option sets
// enroot and its users pass (ENROOT_SQUASH_OPTIONS varies per site), on a tree
// large enough for multi-block tables and several ids.
func TestValidateSquashOnMksquashfsVariants(t *testing.T) {
	mksquashfs, err := exec.LookPath("mksquashfs")
	if err != nil {
		t.Skip("mksquashfs not installed (apt-get install squashfs-tools); the committed fixture is still checked")
	}
	root := filepath.Join(t.TempDir(), "root")
	for i := 0; i < 600; i++ {
		dir := filepath.Join(root, "d"+strings.Repeat("x", i%7), "sub"+string(rune('a'+i%26)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "f"+strings.Repeat("y", i%13)+string(rune('a'+i%26))), bytes.Repeat([]byte{byte(i)}, i*37))
		if err := os.Lchown(dir, i%5, i%3); err != nil {
			t.Fatal(err)
		}
	}
	for _, opts := range [][]string{
		{"-comp", "lzo", "-noD", "-all-root"}, // enroot's default
		{"-comp", "gzip"},
		{"-comp", "zstd", "-b", "1M"},
		{"-comp", "xz", "-noI", "-noF"},
		{"-noappend", "-no-fragments", "-no-xattrs"},
		{"-nopad"},
	} {
		t.Run(strings.Join(opts, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "img.sqsh")
			args := append([]string{root, out, "-quiet", "-no-progress"}, opts...)
			if b, err := exec.Command(mksquashfs, args...).CombinedOutput(); err != nil {
				t.Skipf("mksquashfs %v: %v\n%s", opts, err, b)
			}
			if _, err := ValidateSquash(out); err != nil {
				t.Error(err)
			}
			info, _ := os.Stat(out)
			if err := os.Truncate(out, info.Size()/2); err != nil {
				t.Fatal(err)
			}
			if _, err := ValidateSquash(out); !errors.Is(err, ErrInvalidSquash) {
				t.Errorf("half of the image: ValidateSquash = %v, want ErrInvalidSquash", err)
			}
		})
	}
}
