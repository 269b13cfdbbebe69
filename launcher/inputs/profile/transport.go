package profile

import (
	"errors"
	"fmt"

	"github.com/slurmbench/slurmbench/slurm/cli"
)

// The values of slurm.transport besides TransportCLI (runners.go).
const (
	TransportAuto = "auto"
	TransportREST = "rest"
)

// Transport is the transport a profile chose, and why, for doctor and
// render --brief.
type Transport struct {
	Name string `json:"name"` // TransportREST or TransportCLI
	Why  string `json:"why"`
}

func (s Slurm) validateTransport() []error {
	switch s.Transport {
	case "", TransportAuto, TransportCLI:
	case TransportREST:
		if s.RestURL == "" {
			return []error{errors.New(`slurm.rest_url: required with slurm.transport = "rest" (e.g. http://slurmrestd:6820)`)}
		}
	default:
		return []error{fmt.Errorf(`slurm.transport: %q is not "rest", "cli" or "auto"`, s.Transport)}
	}
	return nil
}

// SlurmTransport chooses how Slurm is reached: slurm.transport when it is
// "rest" or "cli"; for "auto" (or unset), slurmrestd when slurm.rest_url
// is set, else Slurm's commands when sbatch is in slurm.bin_dir or on
// PATH. It fails only when auto finds neither.
func (p *Profile) SlurmTransport() (Transport, error) {
	s := p.Slurm
	where := func() string {
		if s.BinDir != "" {
			return "slurm.bin_dir " + s.BinDir
		}
		return "PATH"
	}
	switch s.Transport {
	case TransportREST:
		return Transport{TransportREST, `slurm.transport = "rest": slurmrestd at ` + s.RestURL}, nil
	case TransportCLI:
		if path, ok := cli.Available(s.BinDir); ok {
			return Transport{TransportCLI, `slurm.transport = "cli": Slurm's commands (` + path + `)`}, nil
		}
		return Transport{TransportCLI, `slurm.transport = "cli": Slurm's commands, but sbatch is not in ` + where()}, nil
	}
	if s.RestURL != "" {
		return Transport{TransportREST, "slurm.transport is auto and slurm.rest_url is set: slurmrestd at " + s.RestURL}, nil
	}
	if path, ok := cli.Available(s.BinDir); ok {
		return Transport{TransportCLI, "slurm.transport is auto, slurm.rest_url is not set and sbatch is at " + path + ": Slurm's commands"}, nil
	}
	return Transport{}, fmt.Errorf("profile %s: no way to reach Slurm: slurm.rest_url is not set and sbatch is not in %s (set slurm.rest_url, or slurm.bin_dir to where Slurm's commands are)", p.Path, where())
}
