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
	m = m.defaults()
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
%s%s`, m.Name, m.PrefillWorkers, m.PrefillWorkers, m.block(m.Prefill, "", "      "), m.block(m.Decode, m.ITL, "      "), m.gateAndBenchmark())
}

// V2 is the same topology as a schema-2 (srt-slurm 2.x) recipe: engine
// and roles instead of backend and resources.*; Extra follows the
// benchmark block, so it may add benchmark keys or top-level blocks.
func (m MockRecipe) V2() string {
	m = m.defaults()
	return fmt.Sprintf(`schema: 2
name: %s
model:
  path: mock
  container: mock-image
  precision: fp8
resources:
  gpu_type: mock
  gpus_per_node: 4
engine: mock
roles:
  prefill:
    nodes: %d
    workers: %d
    gpus: 4
    args:
%s  decode:
    nodes: 1
    workers: 1
    gpus: 4
    args:
%sfrontend:
  type: dynamo
  enable_multiple_frontends: false
%s`, m.Name, m.PrefillWorkers, m.PrefillWorkers, m.block(m.Prefill, "", "      "), m.block(m.Decode, m.ITL, "      "), m.gateAndBenchmark())
}

// gateAndBenchmark is what both layouts end with: the health gate, the
// benchmark block and Extra.
func (m MockRecipe) gateAndBenchmark() string {
	return fmt.Sprintf(`health_check:
  max_attempts: %d
  interval_seconds: 1
benchmark:
  type: sa-bench
  isl: %d
  osl: %d
  concurrencies: "%s"
  num_prompts_mult: %d
  num_warmup_mult: %d
%s`, m.Attempts, m.ISL, m.OSL, m.Conc, m.PromptsMult, m.WarmupMult, m.Extra)
}

// block is one role's mock-engine flags, indented.
func (m MockRecipe) block(lines []string, itl, indent string) string {
	var b strings.Builder
	b.WriteString(indent + "served-model-name: mock/DeepSeek-R1\n" + indent + "ttft: " + m.TTFT + "\n")
	if itl != "" {
		b.WriteString(indent + "itl: " + itl + "\n")
	}
	for _, kv := range lines {
		b.WriteString(indent + kv + "\n")
	}
	return b.String()
}

// defaults fills the zero fields.
func (m MockRecipe) defaults() MockRecipe {
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
	return m
}
