package launcher

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// infraStateDir keeps NATS's and etcd's state node-local and unique to the
// job, so a later allocation on the node never finds stale state (srtctl
// moved off fixed /tmp/nats and /tmp/etcd for the same reason).
const infraStateDir = "/tmp/slurmbench-{job_id}"

// addInfra starts NATS and etcd for Dynamo's discovery and request plane
// on the infra node. srtctl runs both from one python3 /tmp/setup_head.py
// step; here each is its own step with its own readiness probe, which the
// driver checks before any worker starts (srtctl: wait_for_port, 300 s).
// A binary the profile names by absolute path runs on the host; otherwise
// the engine image must have it on its PATH.
func (b *builder) addInfra(node int) {
	nats := firstNonEmpty(b.p.Infra.NATSServer, "nats-server")
	etcd := firstNonEmpty(b.p.Infra.Etcd, "etcd")

	natsArgv := []string{nats, "-js", "-sd", infraStateDir + "/nats/jetstream", "-p", strconv.Itoa(portNATS)}
	var natsFiles map[string]string
	if mb := b.r.Infra.NATSMaxPayloadMB; mb != nil {
		// NATS takes max_payload from a config file only (setup_head.py
		// writes the same two lines).
		conf := filepath.Join(b.plan.Layout.Logs, "nats.conf")
		natsFiles = map[string]string{conf: fmt.Sprintf("max_payload: %d\njetstream { store_dir: %q }\n",
			*mb*1024*1024, infraStateDir+"/nats/jetstream")}
		natsArgv = []string{nats, "-c", conf, "-p", strconv.Itoa(portNATS)}
	}
	b.add(b.infraProcess("infra_nats", node, natsArgv, natsFiles, "nats", portNATS))
	b.add(b.infraProcess("infra_etcd", node, []string{etcd,
		"--data-dir", infraStateDir + "/etcd",
		"--listen-client-urls", "http://0.0.0.0:" + strconv.Itoa(portEtcd),
		// Clients must reach it at a routable address, never 0.0.0.0.
		"--advertise-client-urls", "http://" + placeholderIP(node) + ":" + strconv.Itoa(portEtcd)}, nil, "etcd", portEtcd))
}

// checkInfra refuses infra settings NATS would not start with.
func (b *builder) checkInfra() error {
	if mb := b.r.Infra.NATSMaxPayloadMB; mb != nil && (*mb <= 0 || *mb > 64) {
		return b.fail("infra.nats_max_payload_mb", "must be 1..64 (NATS's own limit), got %d", *mb)
	}
	return nil
}

func (b *builder) infraProcess(name string, node int, argv []string, files map[string]string, kind string, port int) Process {
	proc := Process{Name: name, Role: RoleInfra, Nodes: []int{node}, Argv: argv, Files: files,
		Ports: map[string]int{kind: port}, Log: b.logPath(name), Critical: true,
		Ready: &Probe{Node: node, Port: port}}
	if !filepath.IsAbs(argv[0]) {
		proc.Container, proc.Mounts = true, b.mounts()
	}
	return proc
}
