package profile

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRecordHostSetup: a record's srt-slurm.host-setup is the profile's
// default host_setup (its env with the fabric resolved, as the reader
// resolves it), sourced at its line; a record without one has none, and a
// TOML that extends the record keeps it.
func TestRecordHostSetup(t *testing.T) {
	file := runnersFixture(t)
	for _, c := range []struct {
		runner string
		want   *HostSetup
	}{
		{"a_00", &HostSetup{Script: "hooks/alpha/setup.sh", Env: map[string]string{"IBDEVICES": "rdma0,rdma1"}, TimeoutSeconds: 1200, Nodes: "all"}},
		{"b_01", nil},
	} {
		p, err := LoadRunners(context.Background(), RunnersOptions{Runners: file, Runner: c.runner, Home: "/h", DefaultRunsDir: "/ws/slurmbench-runs"})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.HostSetup, c.want) {
			t.Errorf("%s: host_setup %+v, want %+v", c.runner, p.HostSetup, c.want)
		}
		src, ok := p.SourceOf("host_setup")
		if c.want != nil && (!ok || src.Line != lineIn(t, file, "        host-setup:")) {
			t.Errorf("%s: host_setup source %v", c.runner, src)
		}
		if c.want == nil && ok {
			t.Errorf("%s: a source %v for no host_setup", c.runner, src)
		}
	}
	dir := t.TempDir()
	toml := filepath.Join(dir, "p.toml")
	if err := os.WriteFile(toml, []byte("extends = { runners = \""+file+"\", runner = \"a_01\" }\n[paths]\nruns_dir = \"/r\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadExtending(context.Background(), toml, RunnersOptions{Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	if p.HostSetup == nil || p.HostSetup.Script != "hooks/alpha/setup.sh" {
		t.Errorf("a TOML extending the record: host_setup %+v", p.HostSetup)
	}
}
