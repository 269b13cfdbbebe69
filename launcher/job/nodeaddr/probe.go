package nodeaddr

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
)

// Probe reads this node's interfaces and the source address of its route
// to 8.8.8.8. The route is asked of the kernel by connecting a UDP socket,
// which looks the route up as `ip route get` does and sends nothing; no
// route (a node with no default route) leaves RouteSource invalid.
func Probe() (Node, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return Node{}, fmt.Errorf("listing the network interfaces: %w", err)
	}
	var n Node
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			return Node{}, fmt.Errorf("interface %s: %w", ifc.Name, err)
		}
		x := Interface{Name: ifc.Name, Up: ifc.Flags&net.FlagUp != 0, Loopback: ifc.Flags&net.FlagLoopback != 0}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
					x.Addrs = append(x.Addrs, ip.Unmap())
				}
			}
		}
		n.Interfaces = append(n.Interfaces, x)
	}
	//nolint:noctx // connect(2) on a UDP socket only looks the route up: it never blocks on the network
	if c, err := net.Dial("udp4", "8.8.8.8:53"); err == nil {
		if ua, ok := c.LocalAddr().(*net.UDPAddr); ok {
			n.RouteSource, _ = netip.AddrFromSlice(ua.IP)
		}
		c.Close()
	}
	return n, nil
}

// Marker starts the one line Command prints; Learn reads only such lines
// of the step's output (srun and the node may print others).
const Marker = "slurmbench node-addr: "

// Report is one node's answer, printed by Command as a JSON line.
type Report struct {
	// Node is the node's Slurm name (SLURMD_NODENAME), as the job's node
	// list spells it.
	Node string `json:"node"`
	// Addr is empty when no method gave an address.
	Addr      string `json:"addr,omitempty"`
	Method    Method `json:"method,omitempty"`
	Interface string `json:"interface,omitempty"`
	// IPv4 lists the node's interfaces with their IPv4 addresses, for the
	// message when the wanted interface gave none.
	IPv4  []string `json:"ipv4,omitempty"`
	Error string   `json:"error,omitempty"`
}

// Command is `slurmbench node-addr --interface LIST`, run on every node of
// the job in one srun step: it prints the node's Report. It fails only
// when it cannot write; a node without an address says so in its Report.
func Command(w io.Writer, wanted string, getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	r := Report{Node: getenv("SLURMD_NODENAME")}
	if r.Node == "" {
		r.Node, _ = os.Hostname()
	}
	n, err := Probe()
	if err != nil {
		r.Error = err.Error()
	}
	if a, ok := Pick(wanted, n); ok {
		r.Addr, r.Method, r.Interface = a.Addr.String(), a.Method, a.Interface
	}
	r.IPv4 = summary(n)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", Marker, b)
	return err
}

// summary is "name=addr,addr" per interface ("name" alone without IPv4).
func summary(n Node) []string {
	out := make([]string, 0, len(n.Interfaces))
	for _, ifc := range n.Interfaces {
		var v4 []string
		for _, a := range ifc.Addrs {
			if a.Is4() {
				v4 = append(v4, a.String())
			}
		}
		if len(v4) == 0 {
			out = append(out, ifc.Name)
			continue
		}
		out = append(out, ifc.Name+"="+strings.Join(v4, ","))
	}
	return out
}
