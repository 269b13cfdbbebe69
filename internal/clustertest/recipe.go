package clustertest

import (
	"fmt"
	"strings"
)

// MockRecipe is the mock-engine 2P1D topology (2 prefill + 1 decode workers
// and a frontend on three 4-GPU nodes) the end-to-end tests run, with extra
// mock-engine flags per role; small enough for a 2-core machine. Zero
// fields take the defaults noted.
type MockRecipe struct {
	Name string
	// PrefillWorkers is the number of one-node prefill workers (2).
	PrefillWorkers int
	Prefill        []string // extra "key: value" lines for the prefill workers' mock_config
	Decode         []string // the same for the decode worker
	Attempts       int      // health_check.max_attempts (90)
	ISL, OSL       int      // 64 / 16
	Conc           string   // concurrencies ("4")
	TTFT           string   // every worker's time to first token ("5ms")
	ITL            string   // the decode worker's inter-token latency ("2ms")
	PromptsMult    int      // benchmark.num_prompts_mult (2)
	WarmupMult     int      // benchmark.num_warmup_mult (0)
	Extra          string   // appended to the benchmark block
}

func (m MockRecipe) String() string {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&m.Conc, "4")
	def(&m.TTFT, "5ms")
	def(&m.ITL, "2ms")
	if m.Attempts == 0 {
		m.Attempts = 90
	}
	if m.ISL == 0 {
		m.ISL = 64
	}
	if m.OSL == 0 {
		m.OSL = 16
	}
	if m.PromptsMult == 0 {
		m.PromptsMult = 2
	}
	if m.PrefillWorkers == 0 {
		m.PrefillWorkers = 2
	}
	block := func(lines []string, itl string) string {
		var b strings.Builder
		b.WriteString("      served-model-name: mock/DeepSeek-R1\n      ttft: " + m.TTFT + "\n")
		if itl != "" {
			b.WriteString("      itl: " + itl + "\n")
		}
		for _, kv := range lines {
			b.WriteString("      " + kv + "\n")
		}
		return b.String()
	}
	return fmt.Sprintf(`name: %s
model:
  path: mock
  container: mock-image
  precision: fp8
resources:
  gpu_type: mock
  gpus_per_node: 4
  prefill_nodes: %d
  prefill_workers: %d
  decode_nodes: 1
  decode_workers: 1
frontend:
  type: dynamo
  enable_multiple_frontends: false
backend:
  type: mock
  mock_config:
    prefill:
%s    decode:
%shealth_check:
  max_attempts: %d
  interval_seconds: 1
benchmark:
  type: sa-bench
  isl: %d
  osl: %d
  concurrencies: "%s"
  num_prompts_mult: %d
  num_warmup_mult: %d
%s`, m.Name, m.PrefillWorkers, m.PrefillWorkers, block(m.Prefill, ""), block(m.Decode, m.ITL), m.Attempts, m.ISL, m.OSL, m.Conc, m.PromptsMult, m.WarmupMult, m.Extra)
}
