package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/cli"
)

// SlurmConfig maps the [slurm] table onto a Slurm client's settings: over
// Slurm's own commands when SlurmTransport chooses them, else slurmrestd's.
// The token comes from the variable token_env names (default SLURM_JWT),
// else token_file, else token_command, which also mints fresh tokens when
// the server refuses the current one. token_command runs in the profile's
// directory, so it may name a script relative to the profile, as paths do.
func (p *Profile) SlurmConfig() (slurm.Config, error) {
	s := p.Slurm
	tokenEnv := s.TokenEnv
	if tokenEnv == "" {
		tokenEnv = "SLURM_JWT" //nolint:gosec // the name of the variable holding the token, not a token
	}
	cfg := slurm.Config{
		URL:          s.RestURL,
		User:         s.User,
		Token:        os.Getenv(tokenEnv),
		TokenFile:    s.TokenFile,
		TokenCommand: s.TokenCommand,
		APIVersion:   s.APIVersion,
		Defaults:     slurm.JobDefaults{Partition: s.Partition, Account: s.Account},
		CAFile:       s.CAFile,
		UseEnvProxy:  s.UseEnvProxy,
	}
	if len(s.TokenCommand) > 0 && p.Path != "" {
		cfg.TokenCommandDir = filepath.Dir(p.Path)
	}
	if s.TimeLimit != "" {
		minutes, err := ParseTimeLimit(s.TimeLimit)
		if err != nil {
			return slurm.Config{}, fmt.Errorf("profile %s: slurm.time_limit: %w", p.Path, err)
		}
		cfg.Defaults.TimeLimit = time.Duration(minutes) * time.Minute
	}
	t, err := p.SlurmTransport()
	if err != nil {
		return slurm.Config{}, err
	}
	if t.Name == TransportCLI {
		// The commands authenticate as whoever runs them: no token.
		cfg.Commands = cli.New(cli.Config{Dir: s.BinDir})
		return cfg, nil
	}
	if cfg.Token == "" && cfg.TokenFile == "" && len(cfg.TokenCommand) == 0 {
		return slurm.Config{}, fmt.Errorf("profile %s: no slurmrestd token: $%s is empty and neither slurm.token_file nor slurm.token_command is set", p.Path, tokenEnv)
	}
	return cfg, nil
}

// SlurmClient is the one constructor from a profile to a slurmrestd
// client: SlurmConfig, adjusted by each of adjust in order (a caller's
// flag overrides, a listing's shorter retries), then slurm.New. It makes
// no request: the API version is chosen on first use.
func (p *Profile) SlurmClient(adjust ...func(*slurm.Config)) (*slurm.Client, error) {
	cfg, err := p.SlurmConfig()
	if err != nil {
		return nil, err
	}
	for _, a := range adjust {
		a(&cfg)
	}
	return slurm.New(cfg)
}
