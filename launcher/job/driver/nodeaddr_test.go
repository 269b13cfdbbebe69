package driver

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/job/nodeaddr"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNetworkInterfaceAddresses: with the plan's network interface set,
// the driver asks the nodes (one step, through a fake step runner) and
// every address the job uses is the node's answer, not DNS's: DNS says
// 127.0.0.2, where nothing listens, the node says 127.0.0.1, where the
// frontend does. Without it, DNS's answer is used and no step runs.
func TestNetworkInterfaceAddresses(t *testing.T) {
	report := func(r nodeaddr.Report) string {
		b, _ := json.Marshal(r)
		return "srun: some noise\n" + nodeaddr.Marker + string(b) + "\n"
	}
	tests := []struct {
		name, iface, dns, answer string
		steps                    int
		code                     exitcode.Code
		frontend                 string // the address of the status's frontend URL
		log                      string
	}{
		{name: "the interface's address", iface: "eno0", dns: "127.0.0.2", steps: 1, code: exitcode.OK, frontend: "127.0.0.1",
			answer: report(nodeaddr.Report{Node: "node1", Addr: "127.0.0.1", Method: nodeaddr.ByInterface, Interface: "eno0"}),
			log:    "node addresses: addresses on eno0, asked of each node: node1=127.0.0.1 (eno0)"},
		{name: "a fallback is named", iface: "bogus0", dns: "127.0.0.2", steps: 1, code: exitcode.OK, frontend: "127.0.0.1",
			answer: report(nodeaddr.Report{Node: "node1", Addr: "127.0.0.1", Method: nodeaddr.ByHostname, IPv4: []string{"lo=127.0.0.1"}}),
			log:    "node1: interface bogus0 has no IPv4 address (its interfaces: lo=127.0.0.1); using 127.0.0.1, from hostname -I"},
		{name: "a node with no answer keeps DNS's", iface: "eno0", dns: "127.0.0.2", steps: 1, code: exitcode.Health, frontend: "127.0.0.2",
			answer: "", log: "node1 gave no address for interface eno0; using 127.0.0.2"},
		{name: "no interface: DNS, no step", iface: "", dns: "127.0.0.1", steps: 0, code: exitcode.OK, frontend: "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := startFrontend(t)
			front.prefill.Store(1)
			front.decode.Store(1)
			pl := runPlan(t, front, []string{"/bin/sleep", "60"}, []string{"/bin/true"})
			pl.Slurm.NetworkInterface = tt.iface
			data, _ := json.Marshal(pl)
			if err := os.WriteFile(pl.PlanFile, data, 0o644); err != nil {
				t.Fatal(err)
			}
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv(fakeSrunEnv, "1")
			var steps [][]string
			log := &lockedLog{}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := Run(ctx, Options{PlanFile: pl.PlanFile, JobID: "42", NodeList: "node1", Srun: self, StopGrace: time.Second, Log: log,
				Lookup: func(string) ([]string, error) { return []string{tt.dns}, nil },
				RunNodeAddr: func(_ context.Context, argv []string) ([]byte, error) {
					steps = append(steps, argv)
					return []byte(tt.answer), nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.code {
				t.Errorf("exit %d (%s), want %d\n%s", res.ExitCode, res.Outcome.Message, tt.code, log)
			}
			if len(steps) != tt.steps {
				t.Fatalf("%d node-addr steps, want %d: %q", len(steps), tt.steps, steps)
			}
			if tt.steps == 1 {
				want := self + " --jobid 42 --overlap --quiet --nodes 1 --ntasks 1 --ntasks-per-node 1 --nodelist node1 " + pl.Binary + " node-addr --interface " + tt.iface
				if got := strings.Join(steps[0], " "); got != want {
					t.Errorf("step %s\nwant %s", got, want)
				}
			}
			st, err := rundir.ReadStatus(pl.Layout.Status)
			if err != nil {
				t.Fatal(err)
			}
			if want := "http://" + tt.frontend + ":" + strconv.Itoa(front.port); st.FrontendURL != want {
				t.Errorf("frontend %s, want %s", st.FrontendURL, want)
			}
			if tt.log != "" && !strings.Contains(log.String(), tt.log) {
				t.Errorf("driver log lacks %q:\n%s", tt.log, log)
			}
		})
	}
}
