package driver

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
)

// Allocation is the job's nodes, in plan index order.
type Allocation struct {
	JobID string
	Hosts []string // hostnames, as srun --nodelist takes them
	IPs   []string // addresses other nodes and clients use
}

var placeholder = regexp.MustCompile(`\{(host|ip):(\d+)\}|\{job_id\}`)

// Fill replaces {host:N}, {ip:N} and {job_id} in s. An index outside the
// allocation is an error: the plan and the allocation disagree.
func (a Allocation) Fill(s string) (string, error) {
	var err error
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		if m == "{job_id}" {
			return a.JobID
		}
		sub := placeholder.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		if n >= len(a.Hosts) {
			err = fmt.Errorf("%s: node %d outside the allocation of %d nodes", m, n, len(a.Hosts))
			return m
		}
		if sub[1] == "host" {
			return a.Hosts[n]
		}
		return a.IPs[n]
	})
	return out, err
}

// resolveIPs looks each host up (IPv4 first), falling back to the name.
func resolveIPs(hosts []string, lookup func(string) ([]string, error)) []string {
	if lookup == nil {
		lookup = net.LookupHost
	}
	ips := make([]string, len(hosts))
	for i, h := range hosts {
		ips[i] = h
		addrs, err := lookup(h)
		if err != nil || len(addrs) == 0 {
			continue
		}
		ips[i] = addrs[0]
		for _, a := range addrs {
			if ip := net.ParseIP(a); ip != nil && ip.To4() != nil && !ip.IsLoopback() {
				ips[i] = a
				break
			}
		}
	}
	return ips
}
