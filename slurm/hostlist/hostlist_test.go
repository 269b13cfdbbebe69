package hostlist

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		// HAPPY PATH
		{"node1", []string{"node1"}},
		{"login", []string{"login"}},
		{"node[1-3]", []string{"node1", "node2", "node3"}},
		{"node[01-03,7]", []string{"node01", "node02", "node03", "node7"}},
		{"node[08-11]", []string{"node08", "node09", "node10", "node11"}},    // padding kept past the carry
		{"node[8-11]", []string{"node8", "node9", "node10", "node11"}},       // no padding without a leading zero
		{"node[098-100]", []string{"node098", "node099", "node100"}},         // width of the low bound
		{"gpu-a[1-2],gpu-b5", []string{"gpu-a1", "gpu-a2", "gpu-b5"}},        // mixed names
		{"n[1-2]-ib[3-4]", []string{"n1-ib3", "n1-ib4", "n2-ib3", "n2-ib4"}}, // cartesian, first group slowest
		{"rack[1-2]n[1,3]", []string{"rack1n1", "rack1n3", "rack2n1", "rack2n3"}},
		{"n[7]", []string{"n7"}},
		{"[1-2]", []string{"1", "2"}},
		{"n[3,1,3]", []string{"n3", "n1", "n3"}},                 // order and duplicates as written
		{" a1 , b[1-2] ", []string{"a1", "b1", "b2"}},            // whitespace around names
		{"n[1-2].cluster", []string{"n1.cluster", "n2.cluster"}}, // suffix
		{"a,b[1-2],c", []string{"a", "b1", "b2", "c"}},           // several names
		{"slurm-worker-[0-1]", []string{"slurm-worker-0", "slurm-worker-1"}},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in)
		if err != nil {
			t.Errorf("Expand(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string // a part the message must quote
	}{
		// SAD PATH
		{"", "empty hostlist"},
		{"   ", "empty hostlist"},
		{"a,,b", "empty host name"},
		{"a,", "empty host name"},
		{"node[1-3", "unclosed '['"},
		{"node1-3]", "']' without '['"},
		{"node[[1-3]]", "nested '['"},
		{"node[]", `host "node[]": empty brackets`},
		{"node[3-1]", `range "3-1": high bound below low bound`},
		{"node[a-b]", `range "a-b": "a" is not a number`},
		{"node[1-]", `range "1-": missing number`},
		{"node[-2]", `range "-2": missing number`},
		{"node[1,,2]", `range "": missing number`},
		{"node[1-2-3]", `range "1-2-3": "2-3" is not a number`},
		{"node[+1]", `"+1" is not a number`},
		{"node[99999999999999999999]", "value out of range"},
		{"node[1-99999999]", "more than 1048576 hosts"},
		{"a[1-2000]b[1-2000]", "expands to more than 1048576 hosts"},
		{"no de1", "contains whitespace"},
		{"b[1 - 2]", `"1 " is not a number`},
		{"b[1 - 2]", `"1 " is not a number`},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in)
		if err == nil {
			t.Errorf("Expand(%q) = %q, want an error containing %q", tt.in, got, tt.wantErr)
			continue
		}
		if !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Expand(%q) error %q, want it to contain %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestCompress(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"node1"}, "node1"},
		{[]string{"login"}, "login"},
		{[]string{"node1", "node2", "node3"}, "node[1-3]"},
		{[]string{"node01", "node02", "node03", "node07"}, "node[01-03,07]"},
		{[]string{"node08", "node09", "node10"}, "node[08-10]"},
		{[]string{"node9", "node10"}, "node[9-10]"},
		{[]string{"node9", "node010"}, "node[9,010]"}, // padding differs: two ranges
		{[]string{"node099", "node100"}, "node[099-100]"},
		{[]string{"node99", "node0100"}, "node[99,0100]"},
		{[]string{"gpu-a1", "gpu-a2", "gpu-b5"}, "gpu-a[1-2],gpu-b5"},
		{[]string{"n3", "n1", "n2"}, "n[3,1-2]"},                      // order kept
		{[]string{"n1", "n1"}, "n[1,1]"},                              // duplicates kept
		{[]string{"n1", "x", "n2"}, "n1,x,n2"},                        // a different name breaks the run
		{[]string{"n1-ib3", "n1-ib4", "n2-ib3"}, "n1-ib[3-4],n2-ib3"}, // last number varies
		{[]string{"n1.c", "n2.c"}, "n[1-2].c"},
	}
	for _, tt := range tests {
		if got := Compress(tt.in); got != tt.want {
			t.Errorf("Compress(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCompressRoundTrip checks Expand(Compress(h)) == h on random host
// lists mixing padded and unpadded numbers, prefixes and suffixes.
func TestCompressRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"n", "gpu-a", "gpu-b", "x1y", ""}
	suffixes := []string{"", "-ib", ".c"}
	for iter := range 2000 {
		var hosts []string
		for range 1 + r.IntN(20) {
			p := prefixes[r.IntN(len(prefixes))]
			s := suffixes[r.IntN(len(suffixes))]
			n := r.IntN(120)
			if r.IntN(3) == 0 && p != "" {
				hosts = append(hosts, p+s) // no number at all
				continue
			}
			if r.IntN(2) == 0 {
				hosts = append(hosts, fmt.Sprintf("%s%0*d%s", p, 1+r.IntN(4), n, s))
			} else {
				hosts = append(hosts, fmt.Sprintf("%s%d%s", p, n, s))
			}
			// Runs of consecutive numbers are what compression is for.
			for k := range r.IntN(4) {
				hosts = append(hosts, fmt.Sprintf("%s%d%s", p, n+k+1, s))
			}
		}
		c := Compress(hosts)
		got, err := Expand(c)
		if err != nil {
			t.Fatalf("iteration %d: Expand(Compress(%q)) = Expand(%q): %v", iter, hosts, c, err)
		}
		if !slices.Equal(got, hosts) {
			t.Fatalf("iteration %d: Expand(Compress(%q)) = Expand(%q) = %q", iter, hosts, c, got)
		}
	}
}

func BenchmarkExpand(b *testing.B) {
	for b.Loop() {
		if _, err := Expand("gpu-a[001-512],gpu-b[1-512,600-700]"); err != nil {
			b.Fatal(err)
		}
	}
}
