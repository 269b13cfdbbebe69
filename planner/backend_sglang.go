package planner

import (
	"fmt"
	"strconv"

	"github.com/slurmbench/slurmbench/plan"

	"github.com/slurmbench/slurmbench/inputs/recipe"
)

// sglangEngine runs SGLang: python3 -m dynamo.sglang under a Dynamo
// frontend, python3 -m sglang.launch_server under the SGLang router
// (srtctl's backends/sglang.py).
type sglangEngine struct {
	b *builder
	// kvEvents is srtctl's global KV-events port counter: one port per
	// node process, whether or not its mode publishes.
	kvEvents int
}

func (e *sglangEngine) perEndpoint() bool    { return false }
func (e *sglangEngine) visibleDevices() bool { return true }

func (e *sglangEngine) worker(w *workerCtx, proc *plan.Process) error {
	b := e.b
	cfg := b.engineConfig(w.ep.role)
	if err := e.checkParallelism(w, cfg); err != nil {
		return err
	}
	// Keys srtctl passes itself: popped so they appear once. The NCCL port
	// derives from the system port so workers sharing a node never race for
	// one (SGLang's default probes for a free port).
	pop(cfg, "model-path", "served-model-name", "nccl-port", "grpc-port")
	module := "dynamo.sglang"
	if b.frontendType() == "sglang" {
		module = "sglang.launch_server"
	}
	argv := []string{"python3", "-m", module,
		"--model-path", b.plan.Model.Path, "--served-model-name", b.plan.Model.ServedName,
		"--host", "0.0.0.0", "--port", strconv.Itoa(w.httpPort),
		"--nccl-port", strconv.Itoa(portNCCLBase + w.sysPort - portSystemBase)}
	if w.ep.role != plan.RoleAgg {
		argv = append(argv, "--disaggregation-mode", w.mode())
		// Every node of a prefill worker gets the worker's bootstrap port:
		// SGLang's default (8998) collides between workers sharing a node,
		// and a follower node on the default would register its ranks with
		// a bootstrap server that is not its worker's.
		if w.bootstrap != 0 {
			argv = append(argv, "--disaggregation-bootstrap-port", strconv.Itoa(w.bootstrap))
		}
	}
	if w.multiNode() {
		argv = append(argv, "--dist-init-addr", placeholderIP(w.leader)+":"+strconv.Itoa(portDistInit),
			"--nnodes", strconv.Itoa(len(w.ep.nodes)), "--node-rank", strconv.Itoa(w.rank))
	}
	if module == "dynamo.sglang" {
		// srtctl passes a host path (<log dir>/<node>_config.json, shared by
		// the workers of a node); /logs is that directory in the container.
		argv = append(argv, "--dump-config-to", "/logs/"+configDumpName(w))
	}
	kvPort := portKVEventsBase + e.kvEvents
	e.kvEvents++
	w.kvEvents = kvPort
	kv, err := b.kvEventsFlag(w, kvPort, sglangKVEventsDefaults)
	if err != nil {
		return err
	}
	if kv != nil {
		argv = append(argv, kv...)
		proc.Ports["kv_events"] = kvPort
	}
	if module == "dynamo.sglang" {
		argv = append(argv, "--request-plane", b.plan.Dynamo.RequestPlane)
	}
	b.mooncakeWorkerEnv(proc, w, false)
	proc.Argv = append(argv, recipe.Flags(cfg)...)
	return nil
}

// configDumpName is a worker's --dump-config-to file: one per process.
func configDumpName(w *workerCtx) string {
	return fmt.Sprintf("%s_w%d_r%d_config.json", w.ep.role, w.ep.index, w.rank)
}

// checkParallelism holds SGLang's world size to the worker's GPUs:
// tensor × pipeline parallel size GPUs per replica, and data-parallel-size
// replicas of it unless DP attention splits the TP group instead; expert
// parallelism runs inside the TP group.
func (e *sglangEngine) checkParallelism(w *workerCtx, cfg map[string]recipe.Value) error {
	field := "backend.sglang_config." + w.mode()
	size := func(keys ...string) (int, string, error) {
		for _, k := range keys {
			if _, ok := lookup(cfg, k); ok {
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
		return e.b.fail(field, "%v", err)
	}
	pp, ppKey, err := size("pipeline-parallel-size", "pp-size")
	if err != nil {
		return e.b.fail(field, "%v", err)
	}
	dp, dpKey, err := size("data-parallel-size", "dp-size")
	if err != nil {
		return e.b.fail(field, "%v", err)
	}
	ep, epKey, err := size("expert-parallel-size", "ep-size")
	if err != nil {
		return e.b.fail(field, "%v", err)
	}
	dpAttention := false
	if v, ok := lookup(cfg, "enable-dp-attention"); ok {
		dpAttention, _ = v.Bool()
	}
	want := tp * pp
	what := fmt.Sprintf("%s %d × %s %d", tpKey, tp, ppKey, pp)
	if dp > 1 && !dpAttention {
		want *= dp
		what += fmt.Sprintf(" × %s %d", dpKey, dp)
	}
	if want != w.ep.gpus {
		return e.b.fail(field, "%s = %d GPUs, but the %s worker has %d", what, want, w.mode(), w.ep.gpus)
	}
	if dpAttention && tp%dp != 0 {
		return e.b.fail(field, "with enable-dp-attention, %s %d must divide %s %d", dpKey, dp, tpKey, tp)
	}
	if ep > tp {
		return e.b.fail(field, "%s %d exceeds %s %d: experts are split within the tensor-parallel group", epKey, ep, tpKey, tp)
	}
	return nil
}
