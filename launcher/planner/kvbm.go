package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// portKVBMBase is where srtctl's KVBM leader ZMQ port pairs start
// (ports.py KVBM_ZMQ_PORT_BASE).
const portKVBMBase = 5600

// kvbmEnv is srtctl's _apply_kvbm_endpoint_env for a worker whose
// environment sets DYN_CONNECTOR=kvbm (any case). KVBM's leader control
// sockets default to 127.0.0.1 and to one fixed port pair, so a
// multi-node endpoint points every node at its leader's address
// (DYN_KVBM_LEADER_ZMQ_HOST), and each endpoint takes its own pair from
// its leader's KV-events port k: 5600 + 2·(k − 5200) and the next. Values
// the recipe sets win. The profile's fixed variables, applied later, are
// not consulted (srtctl looks before anything the cluster adds).
func (b *builder) kvbmEnv(w *workerCtx, proc *plan.Process) {
	key := fmt.Sprintf("%s/%d", w.ep.role, w.ep.index)
	if b.leaderKVEvents == nil {
		b.leaderKVEvents = map[string]int{}
	}
	if w.Rank == 0 {
		b.leaderKVEvents[key] = w.KVEvents
	}
	if !strings.EqualFold(proc.Env["DYN_CONNECTOR"], "kvbm") {
		return
	}
	setDefault := func(k, v string) bool {
		if _, ok := proc.Env[k]; ok {
			return false
		}
		proc.Env[k] = v
		return true
	}
	if len(w.ep.nodes) > 1 {
		setDefault("DYN_KVBM_LEADER_ZMQ_HOST", placeholderIP(w.Leader))
	}
	kv, ok := b.leaderKVEvents[key]
	if !ok || kv == 0 {
		return
	}
	pub := portKVBMBase + 2*max(0, kv-portKVEventsBase)
	if pub+1 > 65535 {
		return
	}
	setPub := setDefault("DYN_KVBM_LEADER_ZMQ_PUB_PORT", strconv.Itoa(pub))
	setAck := setDefault("DYN_KVBM_LEADER_ZMQ_ACK_PORT", strconv.Itoa(pub+1))
	// The leader binds the pair.
	if w.Rank == 0 && setPub {
		proc.Ports["kvbm_pub"] = pub
	}
	if w.Rank == 0 && setAck {
		proc.Ports["kvbm_ack"] = pub + 1
	}
}
