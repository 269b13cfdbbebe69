package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// TestNetworkInterface: a profile naming the nodes' interface
// (slurm.network_interface; each test-cluster node's veth is eth0 in its
// own network namespace) makes the job ask every node for its address on
// it in one srun step, and the run works on those addresses. A name no
// node has is diagnosed in the driver's log, naming the node and the
// interface, and the job goes on with srtctl's fallback (the nodes have no
// default route, so hostname -I's address).
func TestNetworkInterface(t *testing.T) {
	t.Parallel()
	c := setup(t)
	for _, tc := range []struct {
		name, iface string
		want        *regexp.Regexp // in the driver's log (batch.out)
		count       int            // how many times
	}{
		{name: "eth0", iface: "eth0", want: regexp.MustCompile(`node addresses: addresses on eth0, asked of each node: (\S+=\d+\.\d+\.\d+\.\d+ \(eth0\) ?){3}\n`), count: 1},
		{name: "unknown", iface: "bogus0", want: regexp.MustCompile(`node addresses: \S+: interface bogus0 has no IPv4 address \(its interfaces: lo=127\.0\.0\.1 eth0=[0-9.]+\); using [0-9.]+, from hostname -I \(srtctl's fallback`), count: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := uniqueName("e2e-netif")
			r := c.prepare(t, runOpts{name: name, recipe: mockRecipe{Name: name}.String(), slurm: []string{`network_interface = "` + tc.iface + `"`}})
			r.start()
			if code := r.wait(5 * time.Minute); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.output())
			}
			log, err := os.ReadFile(filepath.Join(r.runDir(), "logs", rundir.BatchOutName)) // the driver logs to the batch step's output
			if err != nil {
				t.Fatal(err)
			}
			if got := len(tc.want.FindAllString(string(log), -1)); got != tc.count {
				t.Errorf("driver log: %d lines matching %s, want %d:\n%s", got, tc.want, tc.count, log)
			}
			if strings.Contains(string(log), "gave no address") {
				t.Errorf("a node gave no address:\n%s", log)
			}
			r.removeOnPass()
		})
	}
}
