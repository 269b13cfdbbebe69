package nodeaddr

import (
	"net/netip"
	"testing"
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func up(name string, a ...string) Interface {
	return Interface{Name: name, Up: true, Addrs: addrs(a...)}
}

var lo = Interface{Name: "lo", Up: true, Loopback: true, Addrs: addrs("127.0.0.1", "::1")}

// TestPick: get_node_ip.sh@8386b8d4's rule, case by case, over interface
// lists built for each.
func TestPick(t *testing.T) {
	route := netip.MustParseAddr("203.0.113.7")
	tests := []struct {
		name   string
		wanted string
		node   Node
		want   string
		method Method
		iface  string
	}{
		{name: "the named interface", wanted: "eno0", node: Node{Interfaces: []Interface{lo, up("eth0", "10.0.0.5"), up("eno0", "10.1.0.5")}, RouteSource: route},
			want: "10.1.0.5", method: ByInterface, iface: "eno0"},
		{name: "DNS and the default route would say another", wanted: "ib0", node: Node{Interfaces: []Interface{up("eth0", "192.168.1.9"), up("ib0", "172.20.0.9")}, RouteSource: netip.MustParseAddr("192.168.1.9")},
			want: "172.20.0.9", method: ByInterface, iface: "ib0"},
		{name: "a list: the first with an address wins", wanted: "eth13,eth7,eth4", node: Node{Interfaces: []Interface{up("eth4", "10.4.0.1"), up("eth7", "10.7.0.1")}},
			want: "10.7.0.1", method: ByInterface, iface: "eth7"},
		{name: "a list whose first has only IPv6", wanted: "eth1,eth2", node: Node{Interfaces: []Interface{up("eth1", "fd00::1"), up("eth2", "10.2.0.1")}},
			want: "10.2.0.1", method: ByInterface, iface: "eth2"},
		{name: "RFC 1918 before a public address on the interface", wanted: "eth0", node: Node{Interfaces: []Interface{up("eth0", "198.51.100.3", "10.0.0.3")}},
			want: "10.0.0.3", method: ByInterface, iface: "eth0"},
		{name: "172.16/12 is private, 172.32 is not", wanted: "eth0", node: Node{Interfaces: []Interface{up("eth0", "172.32.0.1", "172.31.9.9")}},
			want: "172.31.9.9", method: ByInterface, iface: "eth0"},
		{name: "the first public one when none is private", wanted: "eth0", node: Node{Interfaces: []Interface{up("eth0", "198.51.100.3", "203.0.113.3")}},
			want: "198.51.100.3", method: ByInterface, iface: "eth0"},
		{name: "link-local and loopback are never picked", wanted: "eth0", node: Node{Interfaces: []Interface{up("eth0", "169.254.1.1", "127.0.0.2", "198.51.100.3")}},
			want: "198.51.100.3", method: ByInterface, iface: "eth0"},
		{name: "a down interface's address still counts (ip addr show lists it)", wanted: "eth0", node: Node{Interfaces: []Interface{{Name: "eth0", Addrs: addrs("10.0.0.8")}}},
			want: "10.0.0.8", method: ByInterface, iface: "eth0"},
		{name: "an unknown interface: the route's source", wanted: "bogus0", node: Node{Interfaces: []Interface{up("eth0", "10.0.0.5")}, RouteSource: route},
			want: "203.0.113.7", method: ByRoute},
		{name: "an interface with only link-local: the route's source", wanted: "eth1", node: Node{Interfaces: []Interface{up("eth1", "169.254.0.2"), up("eth0", "10.0.0.5")}, RouteSource: route},
			want: "203.0.113.7", method: ByRoute},
		{name: "names are split on commas only", wanted: "eth9, eth0", node: Node{Interfaces: []Interface{up("eth0", "10.0.0.5")}, RouteSource: route},
			want: "203.0.113.7", method: ByRoute},
		{name: "empty entries match nothing", wanted: ",,eth0,", node: Node{Interfaces: []Interface{up("eth0", "10.0.0.5")}},
			want: "10.0.0.5", method: ByInterface, iface: "eth0"},
		{name: "no route: hostname -I, private first", wanted: "bogus0", node: Node{Interfaces: []Interface{lo, up("eth0", "198.51.100.4"), up("eth1", "10.9.0.4")}},
			want: "10.9.0.4", method: ByHostname},
		{name: "hostname -I leaves out down and loopback interfaces", wanted: "bogus0", node: Node{Interfaces: []Interface{lo, {Name: "eth0", Addrs: addrs("10.0.0.1")}, up("eth1", "198.51.100.4")}},
			want: "198.51.100.4", method: ByHostname},
		{name: "a bad route source is passed over", wanted: "bogus0", node: Node{Interfaces: []Interface{up("eth0", "10.0.0.5")}, RouteSource: netip.MustParseAddr("127.0.0.1")},
			want: "10.0.0.5", method: ByHostname},
		{name: "empty: the route's source", wanted: "", node: Node{Interfaces: []Interface{up("eth0", "10.0.0.5")}, RouteSource: route},
			want: "203.0.113.7", method: ByRoute},
		{name: "hostname -I's best is IPv6: no IPv4 reaches the caller", wanted: "bogus0", node: Node{Interfaces: []Interface{up("eth0", "fe80::1", "2001:db8::5", "169.254.3.3")}}},
		{name: "nothing at all", wanted: "eth0", node: Node{Interfaces: []Interface{lo}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := Pick(tt.wanted, tt.node)
			if tt.want == "" {
				if ok {
					t.Fatalf("Pick = %v (%s), want none", a.Addr, a.Method)
				}
				return
			}
			if !ok || a.Addr.String() != tt.want || a.Method != tt.method || a.Interface != tt.iface {
				t.Errorf("Pick = %v %q %q (ok %v), want %s %q %q", a.Addr, a.Method, a.Interface, ok, tt.want, tt.method, tt.iface)
			}
		})
	}
}
