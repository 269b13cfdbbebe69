package slurm

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/slurm/wire"
)

// Node is a compute node.
type Node struct {
	Name       string   `json:"name"`
	Hostname   string   `json:"hostname,omitempty"`
	Address    string   `json:"address,omitempty"`
	State      []string `json:"state"` // e.g. ["IDLE"], ["MIXED","DRAIN"]
	Reason     string   `json:"reason,omitempty"`
	Partitions []string `json:"partitions,omitempty"`
	Features   []string `json:"features,omitempty"`
	CPUs       int      `json:"cpus"`
	AllocCPUs  int      `json:"alloc_cpus"`
	// Memory in MiB.
	RealMemory  int64  `json:"real_memory"`
	AllocMemory int64  `json:"alloc_memory"`
	GRES        string `json:"gres,omitempty"`      // e.g. gpu:4 or gpu:h100:8(S:0-1)
	GRESUsed    string `json:"gres_used,omitempty"` // e.g. gpu:0
	Version     string `json:"version,omitempty"`   // slurmd's Slurm release
}

// GPUs is the number of GPUs the node's GRES declares.
func (n Node) GPUs() int { return gresCount(n.GRES, "gpu") }

// GPUsUsed is the number of GPUs allocated to jobs.
func (n Node) GPUsUsed() int { return gresCount(n.GRESUsed, "gpu") }

var gresItem = regexp.MustCompile(`^([a-zA-Z0-9_]+)(?::[^:(]+)?:([0-9]+)`)

// gresCount sums the counts of one GRES name in a string such as
// "gpu:h100:4(S:0-1),gpu:a100:2" or "gpu:0(IDX:N/A)".
func gresCount(gres, name string) int {
	total := 0
	depth := 0
	start := 0
	// Split on commas outside parentheses: "(IDX:0,2)" holds commas too.
	items := []string{}
	for i, r := range gres {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, gres[start:i])
				start = i + 1
			}
		}
	}
	items = append(items, gres[start:])
	for _, it := range items {
		m := gresItem.FindStringSubmatch(strings.TrimSpace(it))
		if m == nil || m[1] != name {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		total += n
	}
	return total
}

type wireNode struct {
	Name        string          `json:"name"`
	Hostname    string          `json:"hostname"`
	Address     string          `json:"address"`
	State       wire.StringList `json:"state"`
	Reason      string          `json:"reason"`
	Partitions  wire.StringList `json:"partitions"`
	Features    wire.StringList `json:"features"`
	CPUs        wire.NoVal      `json:"cpus"`
	AllocCPUs   wire.NoVal      `json:"alloc_cpus"`
	RealMemory  wire.NoVal      `json:"real_memory"`
	AllocMemory wire.NoVal      `json:"alloc_memory"`
	GRES        string          `json:"gres"`
	GRESUsed    string          `json:"gres_used"`
	Version     string          `json:"version"`
}

func (w wireNode) node() Node {
	return Node{
		Name: w.Name, Hostname: w.Hostname, Address: w.Address, State: w.State, Reason: w.Reason,
		Partitions: w.Partitions, Features: w.Features,
		CPUs: int(w.CPUs.Value(0)), AllocCPUs: int(w.AllocCPUs.Value(0)),
		RealMemory: w.RealMemory.Value(0), AllocMemory: w.AllocMemory.Value(0),
		GRES: w.GRES, GRESUsed: w.GRESUsed, Version: w.Version,
	}
}

// ListNodes returns every node slurmctld knows.
func (c *Client) ListNodes(ctx context.Context) ([]Node, error) {
	var w struct {
		Nodes []wireNode `json:"nodes"`
	}
	if err := c.do(ctx, request{method: http.MethodGet, root: "slurm", path: "nodes/"}, &w); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	out := make([]Node, 0, len(w.Nodes))
	for _, n := range w.Nodes {
		out = append(out, n.node())
	}
	return out, nil
}

// Partition is a Slurm partition.
type Partition struct {
	Name       string   `json:"name"`
	Nodes      string   `json:"nodes"` // hostlist, e.g. n[1-4]
	TotalNodes int      `json:"total_nodes"`
	TotalCPUs  int      `json:"total_cpus"`
	State      []string `json:"state"` // e.g. ["UP"]
	// MaxTime is 0 when unlimited.
	MaxTime time.Duration `json:"max_time,omitempty"`
	// DefaultTime is 0 when unset.
	DefaultTime time.Duration `json:"default_time,omitempty"`
	// AllowAccounts and DenyAccounts are the partition's AllowAccounts and
	// DenyAccounts lists (comma-separated; "" = no restriction).
	AllowAccounts string `json:"allow_accounts,omitempty"`
	DenyAccounts  string `json:"deny_accounts,omitempty"`
}

type wirePartition struct {
	Name  string `json:"name"`
	Nodes struct {
		Configured string     `json:"configured"`
		Total      wire.NoVal `json:"total"`
	} `json:"nodes"`
	CPUs struct {
		Total wire.NoVal `json:"total"`
	} `json:"cpus"`
	Partition struct {
		State wire.StringList `json:"state"`
	} `json:"partition"`
	Maximums struct {
		Time wire.NoVal `json:"time"` // minutes
	} `json:"maximums"`
	Defaults struct {
		Time wire.NoVal `json:"time"`
	} `json:"defaults"`
	Accounts struct {
		Allowed string `json:"allowed"`
		Deny    string `json:"deny"`
	} `json:"accounts"`
}

// ListPartitions returns every partition.
func (c *Client) ListPartitions(ctx context.Context) ([]Partition, error) {
	var w struct {
		Partitions []wirePartition `json:"partitions"`
	}
	if err := c.do(ctx, request{method: http.MethodGet, root: "slurm", path: "partitions/"}, &w); err != nil {
		return nil, fmt.Errorf("listing partitions: %w", err)
	}
	out := make([]Partition, 0, len(w.Partitions))
	for _, p := range w.Partitions {
		out = append(out, Partition{
			Name: p.Name, Nodes: p.Nodes.Configured, TotalNodes: int(p.Nodes.Total.Value(0)),
			TotalCPUs: int(p.CPUs.Total.Value(0)), State: p.Partition.State,
			MaxTime:       time.Duration(p.Maximums.Time.Value(0)) * time.Minute,
			DefaultTime:   time.Duration(p.Defaults.Time.Value(0)) * time.Minute,
			AllowAccounts: p.Accounts.Allowed, DenyAccounts: p.Accounts.Deny,
		})
	}
	return out, nil
}
