package planner

import (
	"strconv"

	"github.com/slurmbench/slurmbench/plan"

	"github.com/slurmbench/slurmbench/inputs/recipe"
)

// mockEngine is slurmbench's own mock engine: the slurmbench binary serving
// an OpenAI-compatible endpoint and registering with the mock frontend, so
// a whole topology runs without GPUs.
type mockEngine struct{ b *builder }

func (e *mockEngine) perEndpoint() bool    { return false }
func (e *mockEngine) visibleDevices() bool { return true }

func (e *mockEngine) worker(w *workerCtx, proc *plan.Process) error {
	b := e.b
	mode := w.mode()
	if mode == "aggregated" {
		mode = "decode" // an aggregated mock worker registers as a full (decode-capable) engine
	}
	port := strconv.Itoa(w.httpPort)
	cfg := b.engineConfig(w.ep.role)
	pop(cfg, "served-model-name")
	if w.rank > 0 {
		// A follower rank of a multi-node worker serves nothing and
		// registers nothing (a real engine's followers only join the
		// collective); it runs so the step exists and faults still apply.
		proc.Argv = append([]string{b.plan.Binary, "mock-engine", "--mode", "standalone",
			"--listen", "0.0.0.0:0", "--model", b.plan.Model.ServedName}, recipe.Flags(cfg)...)
		return nil
	}
	proc.Argv = append([]string{b.plan.Binary, "mock-engine", "--mode", mode,
		"--listen", "0.0.0.0:" + port,
		"--frontend", "http://" + placeholderIP(b.headNode) + ":" + strconv.Itoa(portPublicFrontend),
		"--advertise", "http://" + placeholderIP(w.node) + ":" + port,
		"--model", b.plan.Model.ServedName}, recipe.Flags(cfg)...)
	return nil
}
