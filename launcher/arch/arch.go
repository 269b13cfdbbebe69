// Package arch names CPU architectures the way profiles and enroot do
// (uname -m: x86_64, aarch64) and the way Go does (amd64, arm64). It makes
// two decisions that depend on the compute nodes' architecture differing
// from the login node's (GB300: x86_64 login, aarch64 nodes): where and for
// which architecture images are imported (ImportFor, used by run and by
// images import alike), and which slurmbench binary the job runs (Binary).
package arch

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/profile"
)

// The architectures slurmbench is built for, in uname -m spelling.
const (
	X86_64  = "x86_64"
	AArch64 = "aarch64"
)

var goNames = map[string]string{X86_64: "amd64", AArch64: "arm64"}

var machines = map[string]elf.Machine{X86_64: elf.EM_X86_64, AArch64: elf.EM_AARCH64}

// Host is this machine's architecture in uname -m spelling.
func Host() string { return FromGo(runtime.GOARCH) }

// FromGo turns a GOARCH into uname -m spelling (unknown ones unchanged).
func FromGo(goarch string) string {
	for u, g := range goNames {
		if g == goarch {
			return u
		}
	}
	return goarch
}

// Go is the GOARCH for a uname -m name, or "" when slurmbench is not built
// for it.
func Go(uname string) string { return goNames[uname] }

// Compute is the compute nodes' architecture: the profile's
// slurm.compute_arch, else this machine's.
func Compute(p *profile.Profile) string {
	if p != nil && p.Slurm.ComputeArch != "" {
		return p.Slurm.ComputeArch
	}
	return Host()
}

// Import says where images are imported and for which architecture.
type Import struct {
	// OnCompute: in a one-node Slurm job on a compute node, where the image
	// will run (enroot there unpacks for its own architecture).
	OnCompute bool
	// Arch is enroot import --arch for an import on this machine for other
	// nodes; "" is this machine's own architecture.
	Arch string
}

// ImportFor decides for a profile on a machine of architecture host:
// container.import_on when set ("compute", or "login" with --arch when the
// nodes differ), else on a compute node exactly when the architectures
// differ.
func ImportFor(p *profile.Profile, host string) Import {
	compute := p.Slurm.ComputeArch
	if compute == "" {
		compute = host
	}
	differs := compute != host
	switch p.Container.ImportOn {
	case "compute":
		return Import{OnCompute: true}
	case "login":
		if differs {
			return Import{Arch: compute}
		}
		return Import{}
	}
	return Import{OnCompute: differs}
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
