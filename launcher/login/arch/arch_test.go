package arch

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	if Go(X86_64) != "amd64" || Go(AArch64) != "arm64" || Go("riscv64") != "" {
		t.Error("Go names")
	}
	if Dir(AArch64) != "linux-arm64" || Dir(X86_64) != "linux-amd64" {
		t.Error("release layout directory names")
	}
}

// writeELF writes the 64-byte header of a little-endian ELF64 executable
// for machine: all debug/elf needs to tell architectures apart.
func writeELF(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	h := make([]byte, 64)
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.LittleEndian.PutUint16(h[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(h[18:], uint16(machine))
	binary.LittleEndian.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	binary.LittleEndian.PutUint16(h[52:], 64) // e_ehsize
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, h, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestBinary(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	host := filepath.Join(bin, "slurmbench") // the release layout's host copy (amd64 here)
	writeELF(t, host, elf.EM_X86_64)
	writeELF(t, filepath.Join(bin, "linux-amd64", "slurmbench"), elf.EM_X86_64)
	arm := filepath.Join(bin, "linux-arm64", "slurmbench")
	writeELF(t, arm, elf.EM_AARCH64)
	other := filepath.Join(root, "elsewhere")
	writeELF(t, filepath.Join(other, "linux-arm64", "slurmbench"), elf.EM_AARCH64)
	wrong := filepath.Join(root, "wrong")
	writeELF(t, filepath.Join(wrong, "linux-arm64", "slurmbench"), elf.EM_X86_64)

	for _, tt := range []struct {
		name, arch, self, dir, want, err string
	}{
		{name: "same architecture: itself", arch: X86_64, self: host, want: host},
		{name: "sibling of bin/slurmbench", arch: AArch64, self: host, want: arm},
		{name: "sibling of bin/linux-amd64/slurmbench", arch: AArch64, self: filepath.Join(bin, "linux-amd64", "slurmbench"), want: arm},
		{name: "--binary-dir first", arch: AArch64, self: host, dir: other, want: filepath.Join(other, "linux-arm64", "slurmbench")},
		{name: "a wrong file in --binary-dir is skipped", arch: AArch64, self: host, dir: wrong, want: arm},
		{name: "none", arch: AArch64, self: filepath.Join(root, "lone", "bin", "slurmbench"), err: "no slurmbench binary for aarch64 nodes: " +
			filepath.Join(root, "lone", "bin", "linux-arm64", "slurmbench") + " does not exist; " +
			filepath.Join(root, "lone", "linux-arm64", "slurmbench") + " does not exist"},
		{name: "wrong architecture named", arch: AArch64, self: filepath.Join(wrong, "x"), err: filepath.Join(wrong, "linux-arm64", "slurmbench") + " is built for x86_64, not aarch64"},
		{name: "unknown architecture", arch: "riscv64", self: host, err: `architecture "riscv64"`},
	} {
		got, err := Binary(tt.arch, tt.self, tt.dir)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: %q, %v; want an error with %q", tt.name, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
