// Package nodeaddr learns each node's address the way srtctl does when the
// cluster names a network interface (srtslurm.yaml network_interface,
// InferenceX's srt-slurm.network-interface; the profile's
// slurm.network_interface): on the node itself, by the rule of srtctl's
// core/ip_utils/get_node_ip.sh@8386b8d4, in one srun step across the
// allocation. Rule (Pick) is pure; Probe reads a node's interfaces; Command
// is the in-job helper the step runs; Learn is the driver's side.
package nodeaddr

import (
	"net/netip"
	"strings"
)

// Interface is one network interface of a node as the rule reads it.
type Interface struct {
	Name     string
	Up       bool
	Loopback bool
	// Addrs are the interface's addresses in the kernel's order (the order
	// `ip addr show` lists them).
	Addrs []netip.Addr
}

// Node is what a node knows of its own network.
type Node struct {
	Interfaces []Interface
	// RouteSource is the source address of the node's route to 8.8.8.8
	// (`ip route get 8.8.8.8`'s src); invalid when there is no route.
	RouteSource netip.Addr
}

// Method is how an address was found.
type Method string

// The rule's three methods, in the order get_node_ip.sh tries them.
const (
	ByInterface Method = "interface"
	ByRoute     Method = "route to 8.8.8.8"
	ByHostname  Method = "hostname -I"
)

// Answer is the address the rule picked and how.
type Answer struct {
	Addr   netip.Addr
	Method Method
	// Interface is the entry of the list that gave Addr (ByInterface).
	Interface string
}

// Pick is get_node_ip.sh@8386b8d4's rule for a node, wanted being
// network_interface as written:
//
//  1. wanted is a comma-separated, preference-ordered list of interface
//     names (split on commas only: a name with spaces matches nothing, as
//     `ip addr show " eth1"` finds nothing); the first whose IPv4
//     addresses give one by best wins.
//  2. Else the source address of the route to 8.8.8.8, unless bad.
//  3. Else best of `hostname -I` (every address of every up, non-loopback
//     interface, IPv6 link-local left out), which must be IPv4: the
//     remote wrapper keeps only an IPv4 from the script's output.
//
// ok is false when no method gives one: srtctl then resolves the name on
// the head node (core/slurm.py get_hostname_ip, socket.gethostbyname).
func Pick(wanted string, n Node) (a Answer, ok bool) {
	if wanted != "" {
		for _, name := range strings.Split(wanted, ",") {
			ifc, found := n.lookup(name)
			if !found {
				continue
			}
			var v4 []netip.Addr
			for _, x := range ifc.Addrs {
				if x = x.Unmap(); x.Is4() {
					v4 = append(v4, x)
				}
			}
			if x, found := best(v4); found {
				return Answer{Addr: x, Method: ByInterface, Interface: name}, true
			}
		}
	}
	if r := n.RouteSource.Unmap(); r.IsValid() && !bad(r) {
		return Answer{Addr: r, Method: ByRoute}, true
	}
	if x, found := best(n.hostnameI()); found && x.Is4() {
		return Answer{Addr: x, Method: ByHostname}, true
	}
	return Answer{}, false
}

func (n Node) lookup(name string) (Interface, bool) {
	if name == "" {
		return Interface{}, false
	}
	for _, ifc := range n.Interfaces {
		if ifc.Name == name {
			return ifc, true
		}
	}
	return Interface{}, false
}

// hostnameI is what `hostname -I` prints: the addresses of the up,
// non-loopback interfaces, in order, IPv6 link-local ones left out
// (checked against Debian's hostname 3.23: a down interface's address is
// not printed, a 169.254 one is).
func (n Node) hostnameI() []netip.Addr {
	var out []netip.Addr
	for _, ifc := range n.Interfaces {
		if !ifc.Up || ifc.Loopback {
			continue
		}
		for _, x := range ifc.Addrs {
			x = x.Unmap()
			if x.Is6() && (x.IsLinkLocalUnicast() || x.IsLinkLocalMulticast()) {
				continue
			}
			out = append(out, x)
		}
	}
	return out
}

// best is _select_best_ip: the first RFC 1918 address that is not bad,
// else the first that is not bad.
func best(addrs []netip.Addr) (netip.Addr, bool) {
	for _, x := range addrs {
		if !bad(x) && private(x) {
			return x, true
		}
	}
	for _, x := range addrs {
		if !bad(x) {
			return x, true
		}
	}
	return netip.Addr{}, false
}

// bad is _is_bad_ip: 0.0.0.0, loopback 127/8 and link-local 169.254/16
// (the script matches text, so no IPv6 address is bad).
func bad(x netip.Addr) bool {
	if !x.Is4() {
		return false
	}
	b := x.As4()
	return x == netip.IPv4Unspecified() || b[0] == 127 || (b[0] == 169 && b[1] == 254)
}

// private is _is_private_ip: 10/8, 172.16/12, 192.168/16.
func private(x netip.Addr) bool {
	if !x.Is4() {
		return false
	}
	b := x.As4()
	return b[0] == 10 || (b[0] == 172 && b[1] >= 16 && b[1] <= 31) || (b[0] == 192 && b[1] == 168)
}
