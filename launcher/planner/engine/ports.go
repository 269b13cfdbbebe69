package engine

// Fixed ports, srtctl's, that engines bind or pass (docs/plan-format.md);
// the builder allocates from the same bases.
const (
	PortSystemBase   = 7500 // + global process counter
	PortNCCLBase     = 17500
	PortDistInit     = 8300
	PortKVEventsBase = 5200 // + a global counter (KV-event publishers)
)

// vLLM's own ports, srtctl's NodePortAllocator: KV-event publishers and
// NIXL side channels from global counters, a private get_open_port() scan
// base per process, a DP RPC port per endpoint from a per-node counter.
const (
	PortVLLMNIXLBase   = 5400
	PortVLLMScanBase   = 20000
	PortVLLMScanStride = 50
	PortVLLMDPRPCBase  = 8400
)
