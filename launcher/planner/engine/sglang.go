package engine

import (
	"fmt"
	"strconv"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// sglangEngine runs SGLang: python3 -m dynamo.sglang under a Dynamo
// frontend, python3 -m sglang.launch_server under the SGLang router or as
// schema 2's direct server on the public port (srtctl's backends/sglang.py,
// sglang_direct.go).
type sglangEngine struct {
	b Builder
	// kvEvents is srtctl's global KV-events port counter: one port per
	// node process, whether or not its mode publishes.
	kvEvents int
}

func (e *sglangEngine) PerEndpoint() bool     { return false }
func (e *sglangEngine) VisibleDevices() bool  { return true }
func (e *sglangEngine) PerGPU(plan.Role) bool { return false }

func (e *sglangEngine) Complete(w *Worker, proc *plan.Process) error {
	b := e.b
	bindPublicPort(b, w, proc)
	cfg := b.EngineConfig(w.Role)
	if err := e.checkParallelism(w, cfg); err != nil {
		return err
	}
	// Keys srtctl passes itself: popped so they appear once. The NCCL port
	// derives from the system port so workers sharing a node never race for
	// one (SGLang's default probes for a free port).
	pop(cfg, "model-path", "served-model-name", "nccl-port", "grpc-port")
	module := "dynamo.sglang"
	if b.FrontendType() == "sglang" || sglangDirect(b) {
		module = "sglang.launch_server"
	}
	argv := []string{"python3", "-m", module,
		"--model-path", b.Plan().Model.Path, "--served-model-name", b.Plan().Model.ServedName,
		"--host", "0.0.0.0", "--port", strconv.Itoa(w.HTTPPort),
		"--nccl-port", strconv.Itoa(PortNCCLBase + w.SysPort - PortSystemBase)}
	if w.Role != plan.RoleAgg {
		argv = append(argv, "--disaggregation-mode", w.Mode())
		// Every node of a prefill worker gets the worker's bootstrap port:
		// SGLang's default (8998) collides between workers sharing a node,
		// and a follower node on the default would register its ranks with
		// a bootstrap server that is not its worker's.
		if w.Bootstrap != 0 {
			argv = append(argv, "--disaggregation-bootstrap-port", strconv.Itoa(w.Bootstrap))
		}
	}
	if w.MultiNode() {
		argv = append(argv, "--dist-init-addr", plan.IPPlaceholder(w.Leader)+":"+strconv.Itoa(PortDistInit),
			"--nnodes", strconv.Itoa(len(w.Nodes)), "--node-rank", strconv.Itoa(w.Rank))
	}
	if module == "dynamo.sglang" {
		// srtctl passes a host path (<log dir>/<node>_config.json, shared by
		// the workers of a node); /logs is that directory in the container.
		argv = append(argv, "--dump-config-to", "/logs/"+configDumpName(w))
	}
	kvPort := PortKVEventsBase + e.kvEvents
	e.kvEvents++
	w.KVEvents = kvPort
	kv, err := kvEventsFlag(b, w, kvPort, sglangKVEventsDefaults)
	if err != nil {
		return err
	}
	if kv != nil {
		argv = append(argv, kv...)
		proc.Ports["kv_events"] = kvPort
	}
	if module == "dynamo.sglang" {
		argv = append(argv, "--request-plane", b.Plan().Dynamo.RequestPlane)
	}
	b.MooncakeWorkerEnv(proc, w, false)
	proc.Argv = append(argv, recipe.Flags(cfg)...)
	return nil
}

// configDumpName is a worker's --dump-config-to file: one per process.
func configDumpName(w *Worker) string {
	return fmt.Sprintf("%s_w%d_r%d_config.json", w.Role, w.Index, w.Rank)
}

// checkParallelism holds SGLang's world size to the worker's GPUs:
// tensor × pipeline parallel size GPUs per replica, and data-parallel-size
// replicas of it unless DP attention splits the TP group instead; expert
// parallelism runs inside the TP group.
func (e *sglangEngine) checkParallelism(w *Worker, cfg map[string]recipe.Value) error {
	field := "backend.sglang_config." + w.Mode()
	size := func(keys ...string) (int, string, error) {
		for _, k := range keys {
			if _, ok := Lookup(cfg, k); ok {
				n, err := intValue(cfg, k, 1)
				if err == nil && n < 1 {
					err = fmt.Errorf("%s: must be positive, got %d", k, n)
				}
				return n, k, err
			}
		}
		return 1, keys[0], nil
	}
	tp, tpKey, err := size("tensor-parallel-size", "tp-size")
	if err != nil {
		return e.b.Fail(field, "%v", err)
	}
	pp, ppKey, err := size("pipeline-parallel-size", "pp-size")
	if err != nil {
		return e.b.Fail(field, "%v", err)
	}
	dp, dpKey, err := size("data-parallel-size", "dp-size")
	if err != nil {
		return e.b.Fail(field, "%v", err)
	}
	ep, epKey, err := size("expert-parallel-size", "ep-size")
	if err != nil {
		return e.b.Fail(field, "%v", err)
	}
	dpAttention := false
	if v, ok := Lookup(cfg, "enable-dp-attention"); ok {
		dpAttention, _ = v.Bool()
	}
	want := tp * pp
	what := fmt.Sprintf("%s %d × %s %d", tpKey, tp, ppKey, pp)
	if dp > 1 && !dpAttention {
		want *= dp
		what += fmt.Sprintf(" × %s %d", dpKey, dp)
	}
	if want != w.EndpointGPUs {
		return e.b.Fail(field, "%s = %d GPUs, but the %s worker has %d", what, want, w.Mode(), w.EndpointGPUs)
	}
	if dpAttention && tp%dp != 0 {
		return e.b.Fail(field, "with enable-dp-attention, %s %d must divide %s %d", dpKey, dp, tpKey, tp)
	}
	if ep > tp {
		return e.b.Fail(field, "%s %d exceeds %s %d: experts are split within the tensor-parallel group", epKey, ep, tpKey, tp)
	}
	return nil
}
