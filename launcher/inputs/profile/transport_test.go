package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSlurmTransport: rest and cli are taken as set; auto is REST with a
// URL, else the commands when sbatch is in bin_dir, else an error naming
// both ways; the chosen cli transport needs no token and sets the
// client's Commands, REST still needs one.
func TestSlurmTransport(t *testing.T) {
	withSbatch := t.TempDir()
	if err := os.WriteFile(filepath.Join(withSbatch, "sbatch"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	t.Setenv("SLURM_JWT", "")
	for _, tc := range []struct {
		name              string
		s                 Slurm
		want, why, errSub string
		commands          bool
	}{
		{"rest", Slurm{Transport: "rest", RestURL: "http://h:6820"}, "rest", `slurm.transport = "rest": slurmrestd at http://h:6820`, "no slurmrestd token", false},
		{"cli with sbatch", Slurm{Transport: "cli", BinDir: withSbatch, RestURL: "http://h:6820"}, "cli", "Slurm's commands (" + withSbatch + "/sbatch)", "", true},
		{"cli without sbatch", Slurm{Transport: "cli", BinDir: empty}, "cli", "sbatch is not in slurm.bin_dir " + empty, "", true},
		{"auto with a URL", Slurm{RestURL: "http://h:6820", BinDir: withSbatch}, "rest", "slurm.transport is auto and slurm.rest_url is set", "no slurmrestd token", false},
		{"auto without a URL", Slurm{Transport: "auto", BinDir: withSbatch}, "cli", "slurm.rest_url is not set and sbatch is at " + withSbatch + "/sbatch", "", true},
		{"auto with neither", Slurm{BinDir: empty}, "", "", "slurm.rest_url is not set and sbatch is not in slurm.bin_dir " + empty, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.TokenEnv = "SLURM_JWT"
			p := &Profile{Path: "p.toml", Slurm: tc.s}
			got, err := p.SlurmTransport()
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("SlurmTransport = %+v, %v; want an error with %q", got, err, tc.errSub)
				}
				return
			}
			if err != nil || got.Name != tc.want || !strings.Contains(got.Why, tc.why) {
				t.Errorf("SlurmTransport = %+v, %v; want %s because %q", got, err, tc.want, tc.why)
			}
			cfg, err := p.SlurmConfig()
			if (cfg.Commands != nil) != tc.commands {
				t.Errorf("SlurmConfig: commands %v, want %v", cfg.Commands != nil, tc.commands)
			}
			if tc.errSub != "" && (err == nil || !strings.Contains(err.Error(), tc.errSub)) || tc.errSub == "" && err != nil {
				t.Errorf("SlurmConfig error %v, want %q", err, tc.errSub)
			}
		})
	}
}

// TestTestclusterCLIProfile: profiles/testcluster-cli.toml is
// testcluster.toml but for how Slurm is reached (transport, bin_dir, no
// URL or token), so the demo over the commands runs what the demo over
// slurmrestd runs.
func TestTestclusterCLIProfile(t *testing.T) {
	t.Setenv("SLURM_JWT", "")
	rest, err := Load(filepath.Join("..", "..", "..", "profiles", "testcluster.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := Load(filepath.Join("..", "..", "..", "profiles", "testcluster-cli.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if cli.Slurm.Transport != TransportCLI || cli.Slurm.BinDir != "/srv/slurmbench/bin" || cli.Slurm.RestURL != "" || len(cli.Slurm.TokenCommand) != 0 {
		t.Errorf("testcluster-cli.toml [slurm]: %+v", cli.Slurm)
	}
	for _, p := range []*Profile{rest, cli} {
		p.Path, p.Sources = "", nil
		p.Slurm.Transport, p.Slurm.BinDir, p.Slurm.RestURL, p.Slurm.TokenEnv, p.Slurm.TokenCommand = "", "", "", "", nil
	}
	if a, b := fmt.Sprintf("%+v", *rest), fmt.Sprintf("%+v", *cli); a != b {
		t.Errorf("the two test-cluster profiles differ beyond the transport:\n%s\n%s", a, b)
	}
}
