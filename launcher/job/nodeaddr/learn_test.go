package nodeaddr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func line(r Report) string {
	b, _ := json.Marshal(r)
	return Marker + string(b) + "\n"
}

// TestLearn: one srun step asks every node; each node's answer is used,
// a fallback is named with its node and interface, and a node that gives
// none keeps its name's DNS address.
func TestLearn(t *testing.T) {
	hosts := []string{"gpu-1", "gpu-2", "gpu-3"}
	dns := []string{"192.168.0.1", "192.168.0.2", "192.168.0.3"}
	tests := []struct {
		name   string
		out    string
		err    error
		want   []string
		notes  []string // substrings the notes hold
		count  int      // how many notes
		absent string
	}{
		{name: "every node on the interface",
			out:  "srun: noise\n" + line(Report{Node: "gpu-2", Addr: "10.1.0.2", Method: ByInterface, Interface: "eno0"}) + line(Report{Node: "gpu-1", Addr: "10.1.0.1", Method: ByInterface, Interface: "eno0"}) + line(Report{Node: "gpu-3", Addr: "10.1.0.3", Method: ByInterface, Interface: "eno0"}),
			want: []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"}, notes: []string{"addresses on eno0, asked of each node: gpu-1=10.1.0.1 (eno0) gpu-2=10.1.0.2 (eno0) gpu-3=10.1.0.3 (eno0)"}, count: 1},
		{name: "one node falls back to hostname -I, named",
			out: line(Report{Node: "gpu-1", Addr: "10.1.0.1", Method: ByInterface, Interface: "eno0"}) + line(Report{Node: "gpu-2", Addr: "10.5.0.2", Method: ByHostname, IPv4: []string{"lo=127.0.0.1", "eth0=10.5.0.2"}}) +
				line(Report{Node: "gpu-3", Addr: "10.1.0.3", Method: ByInterface, Interface: "eno0"}),
			want:  []string{"10.1.0.1", "10.5.0.2", "10.1.0.3"},
			notes: []string{"gpu-1=10.1.0.1", "gpu-2: interface eno0 has no IPv4 address (its interfaces: lo=127.0.0.1 eth0=10.5.0.2); using 10.5.0.2, from hostname -I"}, count: 2, absent: "gpu-2="},
		{name: "a node with no address at all keeps DNS's",
			out:   line(Report{Node: "gpu-1", Addr: "10.1.0.1", Method: ByInterface, Interface: "eno0"}) + line(Report{Node: "gpu-2", IPv4: []string{"lo=127.0.0.1"}}) + line(Report{Node: "gpu-3", Addr: "198.51.100.3", Method: ByRoute}),
			want:  []string{"10.1.0.1", "192.168.0.2", "198.51.100.3"},
			notes: []string{"gpu-1=10.1.0.1", "gpu-2: interface eno0 has no IPv4 address, and the node has no route", "gpu-3: interface eno0 has no IPv4 address", "from route to 8.8.8.8"}, count: 3},
		{name: "the step fails: DNS for every node, each named",
			out: "", err: errors.New("srun: error: Unable to create step"),
			want:  dns,
			notes: []string{"asking the nodes for their address on eno0 failed: srun: error: Unable to create step", "gpu-1 gave no address for interface eno0; using 192.168.0.1", "gpu-2 gave no", "gpu-3 gave no"}, count: 4},
		{name: "a node missing from the output",
			out:   line(Report{Node: "gpu-1", Addr: "10.1.0.1", Method: ByInterface, Interface: "eno0"}) + line(Report{Node: "gpu-3", Addr: "10.1.0.3", Method: ByInterface, Interface: "eno0"}) + Marker + "{not json\n",
			want:  []string{"10.1.0.1", "192.168.0.2", "10.1.0.3"},
			notes: []string{"gpu-1=10.1.0.1 (eno0) gpu-3=10.1.0.3 (eno0)", "gpu-2 gave no address for interface eno0"}, count: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls [][]string
			o := Options{Srun: "/usr/bin/srun", Binary: "/runs/r1/slurmbench", JobID: "42", Hosts: hosts, Interface: "eno0", DNS: dns,
				Run: func(_ context.Context, argv []string) ([]byte, error) {
					calls = append(calls, argv)
					return []byte(tt.out), tt.err
				}}
			ips, notes := Learn(t.Context(), o)
			want := []string{"/usr/bin/srun", "--jobid", "42", "--overlap", "--quiet", "--nodes", "3", "--ntasks", "3", "--ntasks-per-node", "1",
				"--nodelist", "gpu-1,gpu-2,gpu-3", "/runs/r1/slurmbench", "node-addr", "--interface", "eno0"}
			if len(calls) != 1 || !slices.Equal(calls[0], want) {
				t.Fatalf("steps %q, want one: %q", calls, want)
			}
			if !slices.Equal(ips, tt.want) {
				t.Errorf("ips %v, want %v", ips, tt.want)
			}
			if len(notes) != tt.count {
				t.Errorf("notes %q, want %d", notes, tt.count)
			}
			all := strings.Join(notes, "\n")
			for _, n := range tt.notes {
				if !strings.Contains(all, n) {
					t.Errorf("notes lack %q:\n%s", n, all)
				}
			}
			if tt.absent != "" && strings.Contains(notes[0], tt.absent) {
				t.Errorf("first note %q names %q", notes[0], tt.absent)
			}
			if dns[0] != "192.168.0.1" {
				t.Fatal("Learn changed the DNS slice")
			}
		})
	}
}

// TestCommand: the helper prints one marked line that Learn reads back,
// naming the node by SLURMD_NODENAME.
func TestCommand(t *testing.T) {
	var buf bytes.Buffer
	env := map[string]string{"SLURMD_NODENAME": "gpu-7"}
	if err := Command(&buf, "lo", func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), "\n") != 1 || !strings.HasPrefix(buf.String(), Marker) {
		t.Fatalf("output %q, want one marked line", buf.String())
	}
	r, ok := parse(buf.Bytes())["gpu-7"]
	if !ok {
		t.Fatalf("no report for gpu-7 in %q", buf.String())
	}
	// lo's only IPv4 is 127.0.0.1, bad: the rule goes on to the route or
	// hostname -I, whichever this machine has.
	if r.Method == ByInterface {
		t.Errorf("report %+v: lo's 127.0.0.1 must never be picked", r)
	}
	if !slices.ContainsFunc(r.IPv4, func(s string) bool { return strings.HasPrefix(s, "lo=127.") }) {
		t.Errorf("report %+v does not list lo's address", r)
	}
}
