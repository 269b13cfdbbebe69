package profile

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestNetworkInterface: a record's srt-slurm.network-interface becomes
// slurm.network_interface with its file:line, and a TOML that extends the
// record may override it.
func TestNetworkInterface(t *testing.T) {
	rec := func(iface string) string {
		return "labels:\n  cluster:c: [r_00]\nclusters:\n  c:\n    gpus-per-node: 8\n    arch: x86_64\n    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: true\n" +
			"      volumes: {}\n      srt-slurm:\n        network-interface: " + iface + "\n"
	}
	for _, tc := range []struct {
		name, record, toml, want string
		line                     int
		fromTOML                 bool
	}{
		{name: "the record's interface", record: rec("eno0"), want: "eno0", line: 13},
		{name: "a list", record: rec(`"eth13,eth7"`), want: "eth13,eth7", line: 13},
		{name: "empty: DNS", record: rec(`""`), want: "", line: 13},
		{name: "a TOML extending the record overrides it", record: rec("eno0"), toml: "[slurm]\nnetwork_interface = \"ib0\"\n", want: "ib0", fromTOML: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			runners := filepath.Join(dir, "runners.yaml")
			if err := os.WriteFile(runners, []byte(tc.record), 0o600); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "p.toml")
			toml := "extends = { runners = \"" + runners + "\", runner = \"r_00\" }\n[paths]\nruns_dir = \"/r\"\n" + tc.toml
			if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := LoadExtending(context.Background(), path, RunnersOptions{Home: "/h"})
			if err != nil {
				t.Fatal(err)
			}
			if p.Slurm.NetworkInterface != tc.want {
				t.Errorf("slurm.network_interface %q, want %q", p.Slurm.NetworkInterface, tc.want)
			}
			src, ok := p.SourceOf("slurm.network_interface")
			switch {
			case !ok:
				t.Errorf("no source for slurm.network_interface")
			case tc.fromTOML && filepath.Base(src.File) != "p.toml":
				t.Errorf("source %+v, want the TOML", src)
			case !tc.fromTOML && (src.File != runners || src.Line != tc.line || src.Field != "clusters.c.slurm.srt-slurm.network-interface"):
				t.Errorf("source %+v, want %s:%d clusters.c.slurm.srt-slurm.network-interface", src, runners, tc.line)
			}
		})
	}
}
