package infra

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
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
	nats := cmp.Or(b.Profile().Infra.NATSServer, "nats-server")
	etcd := cmp.Or(b.Profile().Infra.Etcd, "etcd")

	natsArgv := []string{nats, "-js", "-sd", infraStateDir + "/nats/jetstream", "-p", strconv.Itoa(portNATS)}
	var natsFiles map[string]string
	if mb := b.Recipe().Infra.NATSMaxPayloadMB; mb != nil {
		// NATS takes max_payload from a config file only (setup_head.py
		// writes the same two lines).
		conf := filepath.Join(b.Plan().Layout.Logs, "nats.conf")
		natsFiles = map[string]string{conf: fmt.Sprintf("max_payload: %d\njetstream { store_dir: %q }\n",
			*mb*1024*1024, infraStateDir+"/nats/jetstream")}
		natsArgv = []string{nats, "-c", conf, "-p", strconv.Itoa(portNATS)}
	}
	b.Add(b.infraProcess("infra_nats", node, natsArgv, natsFiles, "nats", portNATS))
	b.Add(b.infraProcess("infra_etcd", node, []string{etcd,
		"--data-dir", infraStateDir + "/etcd",
		"--listen-client-urls", "http://0.0.0.0:" + strconv.Itoa(portEtcd),
		// Clients must reach it at a routable address, never 0.0.0.0.
		"--advertise-client-urls", "http://" + plan.IPPlaceholder(node) + ":" + strconv.Itoa(portEtcd)}, nil, "etcd", portEtcd))
}

// checkInfra refuses infra settings NATS would not start with.
func (b *builder) checkInfra() error {
	if mb := b.Recipe().Infra.NATSMaxPayloadMB; mb != nil && (*mb <= 0 || *mb > 64) {
		return b.Fail("infra.nats_max_payload_mb", "must be 1..64 (NATS's own limit), got %d", *mb)
	}
	return nil
}

func (b *builder) infraProcess(name string, node int, argv []string, files map[string]string, kind string, port int) plan.Process {
	proc := plan.Process{Name: name, Role: plan.RoleInfra, Nodes: []int{node}, Argv: argv, Files: files,
		Ports: map[string]int{kind: port}, Log: b.LogPath(name), Critical: true,
		Ready: &plan.Probe{Node: node, Port: port}}
	if !filepath.IsAbs(argv[0]) {
		proc.Container, proc.Mounts = true, b.Mounts()
	}
	return proc
}

// Mooncake's fixed ports on the infra node (srtctl's ports.py).
const (
	portMooncakeMaster   = 8700
	portMooncakeMetadata = 8701
	portMooncakeMetrics  = 8702
)

// mooncakeStoreConfig is the file vLLM's MooncakeStoreConnector reads
// (MOONCAKE_CONFIG_PATH), in the log directory every worker sees at /logs.
const mooncakeStoreConfig = "mooncake_store_config.json"

// checkMooncake refuses a mooncake_kv_store srtctl would not run: only its
// SGLang and vLLM backends launch the master, only vLLM reads store_config,
// and a disaggregated job whose workers never name Mooncake would start a
// master nobody uses (srtctl's _validate_mooncake_kv_store).
func (b *builder) checkMooncake() error {
	m := b.Recipe().Backend.MooncakeKV
	if m == nil {
		return nil
	}
	const field = "backend.mooncake_kv_store"
	bt := b.BackendType()
	if bt != "sglang" && bt != "vllm" {
		return b.Fail(field, "srtctl's %s backend has no Mooncake KV store (sglang and vllm do)", bt)
	}
	if m.StoreConfig != nil && bt != "vllm" {
		return b.Fail(field+".store_config", "only the vllm backend writes a Mooncake store config")
	}
	if m.StoreConfig != nil && m.StoreConfig.Node != nil && m.StoreConfig.Node.Tag != "!!null" {
		if _, err := pyjson.YAMLFields(m.StoreConfig.Node); err != nil {
			return b.Fail(field+".store_config", "must be a mapping of MooncakeStoreConfig keys")
		}
	}
	for k := range m.Env {
		if !profile.ValidEnvName(k) {
			return b.Fail(field+".env", "%q is not a valid environment variable name", k)
		}
	}
	for i, a := range m.MasterExtraArgs {
		if a == "" || strings.ContainsAny(a, "\x00\n") {
			return b.Fail(field+".master_extra_args", "entry %d %q is empty or holds a newline", i, a)
		}
	}
	if m.StoreConfig != nil && bt == "vllm" {
		if b.mooncakeStoreConfig(0) == "" {
			return b.Fail(field+".store_config", "holds a value JSON cannot carry")
		}
	}
	if !b.Recipe().Resources.Disaggregated() {
		return nil
	}
	uses := false
	for _, role := range []plan.Role{plan.RolePrefill, plan.RoleDecode} {
		cfg := b.EngineConfig(role)
		if bt == "sglang" {
			if v, ok := engine.Lookup(cfg, "disaggregation-transfer-backend"); ok && v.String() == "mooncake" {
				uses = true
			}
			continue
		}
		// srtctl matches a string kv-transfer-config that names Mooncake.
		if v, ok := engine.Lookup(cfg, "kv-transfer-config"); ok && !v.IsMapping() && strings.Contains(strings.ToLower(v.String()), "mooncake") {
			uses = true
		}
	}
	if !uses {
		what := "a kv-transfer-config string naming a Mooncake connector"
		if bt == "sglang" {
			what = "disaggregation-transfer-backend: mooncake"
		}
		return b.Fail(field, "set, but neither the prefill nor the decode %s_config has %s: the master would go unused (srtctl refuses this too)", bt, what)
	}
	return nil
}

// addMooncake starts mooncake_master on the infra node, as srtctl does: its
// own container (mooncake_kv_store.container, else the job's image), no
// environment, the job's mounts; the driver waits for its RPC port before
// any worker starts. The vLLM store config is written beside it.
func (b *builder) addMooncake(node int) {
	m := b.Recipe().Backend.MooncakeKV
	if m == nil {
		return
	}
	argv := []string{"mooncake_master",
		"--port=" + strconv.Itoa(portMooncakeMaster),
		"--enable_http_metadata_server=true",
		"--http_metadata_server_port=" + strconv.Itoa(portMooncakeMetadata),
		"--eviction_high_watermark_ratio=0.9",
		"--default_kv_lease_ttl=10000",
		"--rpc_thread_num=16",
		"--enable_metric_reporting=true",
		"--metrics_port=" + strconv.Itoa(portMooncakeMetrics)}
	argv = append(argv, m.MasterExtraArgs...)
	image := m.Container
	if v, ok := b.Profile().Containers[image]; ok {
		image = v
	}
	proc := plan.Process{Name: "mooncake_master", Role: plan.RoleInfra, Nodes: []int{node}, Argv: argv,
		Container: true, Image: image, Mounts: b.Mounts(), Log: b.LogPath("mooncake_master"), Critical: true,
		Ports: map[string]int{"mooncake": portMooncakeMaster, "mooncake_metadata": portMooncakeMetadata, "mooncake_metrics": portMooncakeMetrics},
		Ready: &plan.Probe{Node: node, Port: portMooncakeMaster}}
	if b.BackendType() == "vllm" {
		proc.Files = map[string]string{filepath.Join(b.Plan().Layout.Logs, mooncakeStoreConfig): b.mooncakeStoreConfig(node)}
	}
	b.Add(proc)
}

// mooncakeStoreConfig is srtctl's store config JSON: the recipe's
// store_config in its order, master_server_address set to the infra node.
func (b *builder) mooncakeStoreConfig(node int) string {
	var fields []pyjson.YAMLField
	if sc := b.Recipe().Backend.MooncakeKV.StoreConfig; sc != nil && sc.Node != nil && sc.Node.Tag != "!!null" {
		fields, _ = pyjson.YAMLFields(sc.Node) // checkMooncake checked the shape
	}
	addr := pyjson.YAMLScalar("!!str", plan.IPPlaceholder(node)+":"+strconv.Itoa(portMooncakeMaster))
	replaced := false
	for i := range fields {
		if fields[i].Key == "master_server_address" {
			fields[i].Value, replaced = addr, true
		}
	}
	if !replaced {
		fields = append(fields, pyjson.YAMLField{Key: "master_server_address", Value: addr})
	}
	out, err := pyjson.YAMLObject(2, fields)
	if err != nil {
		// A value JSON cannot hold; checkMooncake's field names it.
		return ""
	}
	return out
}

// mooncakeWorkerEnv adds what srtctl exports to every worker of a job with
// a Mooncake store: the worker's own address (the recipe's env may pin
// another), the recipe's env, the master's addresses, and for vLLM the
// store config's path.
func (b *builder) mooncakeWorkerEnv(proc *plan.Process, w *engine.Worker, vllm bool) {
	m := b.Recipe().Backend.MooncakeKV
	if m == nil {
		return
	}
	proc.Env["MOONCAKE_LOCAL_HOSTNAME"] = plan.IPPlaceholder(w.Node)
	for k, v := range m.Env.Strings() {
		proc.Env[k] = v
	}
	infra := plan.IPPlaceholder(b.InfraNode())
	proc.Env["MOONCAKE_MASTER"] = infra + ":" + strconv.Itoa(portMooncakeMaster)
	proc.Env["MOONCAKE_TE_META_DATA_SERVER"] = "http://" + infra + ":" + strconv.Itoa(portMooncakeMetadata) + "/metadata"
	if vllm {
		proc.Env["MOONCAKE_CONFIG_PATH"] = "/logs/" + mooncakeStoreConfig
	}
}
