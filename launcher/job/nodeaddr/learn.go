package nodeaddr

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// Options are Learn's inputs.
type Options struct {
	Srun   string // the srun program
	Binary string // the slurmbench binary the job runs (plan.Plan.Binary)
	JobID  string
	Hosts  []string // the allocation's nodes, in plan index order
	// Interface is network_interface as written (non-empty).
	Interface string
	// DNS is each host's address looked up on the head node: a node that
	// gives none keeps it, as srtctl's get_hostname_ip falls back to
	// socket.gethostbyname.
	DNS []string
	// Run runs the step and returns its standard output (default: the
	// program, its output bounded).
	Run func(ctx context.Context, argv []string) ([]byte, error)
	// Timeout bounds the step (default 30 s, srtctl's get_node_ip timeout).
	Timeout time.Duration
}

// Argv is the one srun step that asks every node at once: one task per
// node, on the bare host (the interfaces are the host's), beside whatever
// else the job runs.
func Argv(o Options) []string {
	n := strconv.Itoa(len(o.Hosts))
	return []string{o.Srun, "--jobid", o.JobID, "--overlap", "--quiet",
		"--nodes", n, "--ntasks", n, "--ntasks-per-node", "1", "--nodelist", strings.Join(o.Hosts, ","),
		o.Binary, "node-addr", "--interface", o.Interface}
}

// outputLimit bounds what the step may print: one short line per node.
const outputLimit = 4 << 20

// Learn asks every node for its address in one srun step and returns the
// addresses in host order, with notes for the job's log: which rule gave
// them, and every node that fell back (srtctl falls back silently to the
// next method; here each fallback names the node and the interface).
func Learn(ctx context.Context, o Options) (ips []string, notes []string) {
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Run == nil {
		o.Run = runStep
	}
	ips = append([]string(nil), o.DNS...)
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	out, err := o.Run(ctx, Argv(o))
	reports := parse(out)
	if err != nil {
		notes = append(notes, fmt.Sprintf("asking the nodes for their address on %s failed: %v", o.Interface, err))
	}
	var got []string
	for i, h := range o.Hosts {
		r, ok := reports[h]
		switch {
		case !ok:
			notes = append(notes, fmt.Sprintf("%s gave no address for interface %s; using %s, its name looked up on the head node (srtctl's fallback)", h, o.Interface, ips[i]))
		case r.Addr == "":
			notes = append(notes, fmt.Sprintf("%s: interface %s has no IPv4 address, and the node has no route to 8.8.8.8 nor hostname -I address (its interfaces: %s%s); using %s, its name looked up on the head node (srtctl's fallback)",
				h, o.Interface, strings.Join(r.IPv4, " "), errNote(r.Error), ips[i]))
		case r.Method != ByInterface:
			ips[i] = r.Addr
			notes = append(notes, fmt.Sprintf("%s: interface %s has no IPv4 address (its interfaces: %s); using %s, from %s (srtctl's fallback, get_node_ip.sh@8386b8d4)",
				h, o.Interface, strings.Join(r.IPv4, " "), r.Addr, r.Method))
		default:
			ips[i] = r.Addr
			got = append(got, h+"="+r.Addr+" ("+r.Interface+")")
		}
	}
	if len(got) > 0 {
		notes = append([]string{fmt.Sprintf("addresses on %s, asked of each node: %s", o.Interface, strings.Join(got, " "))}, notes...)
	}
	return ips, notes
}

func errNote(e string) string {
	if e == "" {
		return ""
	}
	return "; " + e
}

// parse reads the Report lines of the step's output, by node.
func parse(out []byte) map[string]Report {
	m := map[string]Report{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), outputLimit)
	for sc.Scan() {
		_, js, ok := strings.Cut(sc.Text(), Marker)
		if !ok {
			continue
		}
		var r Report
		if json.Unmarshal([]byte(js), &r) == nil && r.Node != "" {
			m[r.Node] = r
		}
	}
	return m
}

// runStep runs argv, its standard output kept up to outputLimit; the
// error names srun's last lines of standard error.
func runStep(ctx context.Context, argv []string) ([]byte, error) {
	var stdout, stderr readlimit.Buffer
	stdout.Limit, stderr.Limit = outputLimit, 64<<10
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s: %w: %s", argv[0], err, strings.TrimSpace(string(stderr.Bytes())))
	}
	return stdout.Bytes(), nil
}
