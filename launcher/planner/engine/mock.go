package engine

import (
	"strconv"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// mockEngine is slurmbench's own mock engine: the slurmbench binary serving
// an OpenAI-compatible endpoint and registering with the mock frontend, so
// a whole topology runs without GPUs.
type mockEngine struct{ b Builder }

func (e *mockEngine) PerEndpoint() bool     { return false }
func (e *mockEngine) VisibleDevices() bool  { return true }
func (e *mockEngine) PerGPU(plan.Role) bool { return false }

func (e *mockEngine) Complete(w *Worker, proc *plan.Process) error {
	b := e.b
	bindPublicPort(b, w, proc)
	mode := w.Mode()
	if mode == "aggregated" {
		mode = "decode" // an aggregated mock worker registers as a full (decode-capable) engine
	}
	port := strconv.Itoa(w.HTTPPort)
	cfg := b.EngineConfig(w.Role)
	pop(cfg, "served-model-name")
	if argv := mockDirectArgv(b, w, recipe.Flags(cfg)); sglangDirect(b) && argv != nil {
		proc.Argv = argv
		return nil
	}
	if w.Rank > 0 {
		// A follower rank of a multi-node worker serves nothing and
		// registers nothing (a real engine's followers only join the
		// collective); it runs so the step exists and faults still apply.
		proc.Argv = append([]string{b.Plan().Binary, "mock-engine", "--mode", "standalone",
			"--listen", "0.0.0.0:0", "--model", b.Plan().Model.ServedName}, recipe.Flags(cfg)...)
		return nil
	}
	proc.Argv = append([]string{b.Plan().Binary, "mock-engine", "--mode", mode,
		"--listen", "0.0.0.0:" + port,
		"--frontend", "http://" + plan.IPPlaceholder(b.HeadNode()) + ":" + strconv.Itoa(plan.PortPublicFrontend),
		"--advertise", "http://" + plan.IPPlaceholder(w.Node) + ":" + port,
		"--model", b.Plan().Model.ServedName}, recipe.Flags(cfg)...)
	return nil
}
