package engine

import (
	"cmp"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
)

// mockerEngine is srtctl's mocker backend (backends/mocker.py): Dynamo's
// simulated engine, which loads the tokenizer but no weights and
// registers with Dynamo's discovery like a real worker. (slurmbench's own
// mock engine, backend.type mock, runs without Dynamo at all.)
type mockerEngine struct{ b Builder }

// One srun per node, no MPI (srtctl's get_srun_config).
func (e *mockerEngine) PerEndpoint() bool     { return false }
func (e *mockerEngine) VisibleDevices() bool  { return true }
func (e *mockerEngine) PerGPU(plan.Role) bool { return false }

func (e *mockerEngine) Complete(w *Worker, proc *plan.Process) error {
	b := e.b
	m := b.Recipe().Backend.Mocker
	mode := w.Mode()
	if mode == "aggregated" {
		mode = "agg"
	}
	argv := []string{"python3", "-m", "dynamo.mocker", "--model-path", b.Plan().Model.Path}
	if mode != "agg" {
		argv = append(argv, "--disaggregation-mode", mode)
	}
	if mode == "prefill" && w.Bootstrap != 0 {
		argv = append(argv, "--bootstrap-ports", strconv.Itoa(w.Bootstrap))
	}
	f := func(p *float64, def float64) string {
		if p == nil {
			return pyfloat.Repr(def)
		}
		return pyfloat.Repr(*p)
	}
	i := func(p *int, def int) string { return strconv.Itoa(derefOr(p, def)) }
	argv = append(argv,
		"--engine-type", cmp.Or(m.EngineType, "vllm"),
		"--speedup-ratio", f(m.SpeedupRatio, 100),
		"--data-parallel-size", i(m.DataParallelSize, 1),
		"--num-gpu-blocks-override", i(m.NumGPUBlocksOverride, 16384),
		"--max-num-seqs", i(m.MaxNumSeqs, 256),
		"--max-num-batched-tokens", i(m.MaxNumBatchedTokens, 8192))
	if m.DecodeSpeedupRatio != nil && *m.DecodeSpeedupRatio != 1 {
		argv = append(argv, "--decode-speedup-ratio", pyfloat.Repr(*m.DecodeSpeedupRatio))
	}
	if m.BlockSize != nil {
		argv = append(argv, "--block-size", strconv.Itoa(*m.BlockSize))
	}
	if m.NumWorkers != nil && *m.NumWorkers > 1 {
		argv = append(argv, "--num-workers", strconv.Itoa(*m.NumWorkers))
	}
	if m.StartupTime != nil {
		argv = append(argv, "--startup-time", pyfloat.Repr(*m.StartupTime))
	}
	if m.KVTransferBandwidth != nil {
		argv = append(argv, "--kv-transfer-bandwidth", pyfloat.Repr(*m.KVTransferBandwidth))
	}
	if m.KVCacheDtype != "" {
		argv = append(argv, "--kv-cache-dtype", m.KVCacheDtype)
	}
	if m.EnablePrefixCaching != nil && !*m.EnablePrefixCaching {
		argv = append(argv, "--no-enable-prefix-caching")
	}
	if m.EnableChunkedPrefill != nil && !*m.EnableChunkedPrefill {
		argv = append(argv, "--no-enable-chunked-prefill")
	}
	if m.PreemptionMode != "" {
		argv = append(argv, "--preemption-mode", m.PreemptionMode)
	}
	// mocker_config's mode section, keys sorted, _ → - (srtctl's
	// _config_to_cli_args: true → flag, false/None dropped, a list → flag
	// then items).
	cfg := b.EngineConfig(w.Role)
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg[k]
		flag := "--" + strings.ReplaceAll(k, "_", "-")
		if bv, ok := v.Bool(); ok {
			if bv {
				argv = append(argv, flag)
			}
			continue
		}
		if items, ok := v.List(); ok {
			argv = append(append(argv, flag), items...)
			continue
		}
		if v.IsNull() {
			continue
		}
		argv = append(argv, flag, v.String())
	}
	proc.Argv = argv
	return nil
}
