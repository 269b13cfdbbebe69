// Package arch finds the slurmbench binary a job runs: the compute nodes'
// architecture may differ from the login node's (GB300: x86_64 login,
// aarch64 nodes), and the job execs the copy in its run directory. make
// build lays the binaries out side by side (bin/linux-amd64/slurmbench,
// bin/linux-arm64/slurmbench, bin/slurmbench for the build machine).
package arch

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// The architectures slurmbench is built for, in uname -m spelling.
const (
	X86_64  = "x86_64"
	AArch64 = "aarch64"
)

// goarches are the GOARCH values make build builds for.
var goarches = []string{"amd64", "arm64"}

var machines = map[string]elf.Machine{X86_64: elf.EM_X86_64, AArch64: elf.EM_AARCH64}

// Go is the GOARCH for a uname -m name (profile.ArchName's inverse), or ""
// when slurmbench is not built for it.
func Go(uname string) string {
	for _, g := range goarches {
		if profile.ArchName(g) == uname {
			return g
		}
	}
	return ""
}

// Dir is the directory of the release layout holding the binary for arch
// (uname spelling): linux-amd64, linux-arm64.
func Dir(arch string) string { return "linux-" + Go(arch) }

// Binary returns the slurmbench binary to run on nodes of architecture
// arch. self (the running binary, absolute) when it is that architecture;
// otherwise the release layout's sibling, looked for in order in:
//
//	<dir>/linux-<goarch>/slurmbench           when dir is given (--binary-dir)
//	<self's dir>/linux-<goarch>/slurmbench    self is bin/slurmbench
//	<self's dir>/../linux-<goarch>/slurmbench self is bin/linux-<host>/slurmbench
//
// A candidate counts only when it is an ELF executable for arch. The
// error lists every path looked at.
func Binary(arch, self, dir string) (string, error) {
	if Go(arch) == "" {
		return "", fmt.Errorf("architecture %q: slurmbench is built for %s and %s", arch, X86_64, AArch64)
	}
	if err := CheckELF(self, arch); err == nil {
		return self, nil
	}
	var candidates []string
	if dir != "" {
		candidates = append(candidates, filepath.Join(dir, Dir(arch), "slurmbench"))
	}
	selfDir := filepath.Dir(self)
	candidates = append(candidates, filepath.Join(selfDir, Dir(arch), "slurmbench"), filepath.Join(filepath.Dir(selfDir), Dir(arch), "slurmbench"))
	var problems []string
	for _, c := range candidates {
		err := CheckELF(c, arch)
		if err == nil {
			return c, nil
		}
		problems = append(problems, err.Error())
	}
	return "", fmt.Errorf("no slurmbench binary for %s nodes: %s", arch, strings.Join(problems, "; "))
}

// CheckELF reports whether path is an executable ELF file for arch.
func CheckELF(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist", path)
		}
		return fmt.Errorf("%s: not an ELF executable: %w", path, err)
	}
	defer f.Close()
	if want := machines[arch]; f.Machine != want {
		return fmt.Errorf("%s is built for %s, not %s", path, machineName(f.Machine), arch)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s is not an executable (%s)", path, f.Type)
	}
	return nil
}

func machineName(m elf.Machine) string {
	for u, mm := range machines {
		if mm == m {
			return u
		}
	}
	return m.String()
}
