package report

import (
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/results"
)

func TestSummaryCustomWorkload(t *testing.T) {
	s := Summary{Name: "agentic", Outcome: OutcomeSucceeded,
		Benchmark: &BenchmarkInfo{Type: "custom", Command: "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh"}}
	s.AddCustom(&results.CustomOutput{CustomFiles: results.CustomFiles{ResultDir: "/runs/r/logs/agentic", Files: 12, Bytes: 3456, ConcDirs: []int{4, 16}},
		Results: []results.CustomResult{
			{Path: "/ws/x_conc4.json", Concurrency: 4, Valid: true, Metrics: map[string]float64{"num_requests_successful": 812, "request_throughput": 0.25, "other": 1}},
			{Path: "/ws/x_conc16.json", Concurrency: 16, Note: "num_requests_successful is missing or 0", Metrics: map[string]float64{"b": 1, "a": 2}},
		}})
	for _, out := range []string{s.Text(), s.Markdown()} {
		for _, want := range []string{
			"benchmark: custom command bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh",
			"custom workload: 12 files, 3456 bytes in /runs/r/logs/agentic (conc_4, conc_16)",
			"c4 x_conc4.json: num_requests_successful=812 request_throughput=0.25; valid",
			"c16 x_conc16.json: fields: a, b; INVALID: num_requests_successful is missing or 0",
		} {
			if !strings.Contains(out, want) && !strings.Contains(out, mdText(want)) {
				t.Errorf("summary lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "o benchmark points") {
			t.Errorf("a custom run is reported as having no benchmark:\n%s", out)
		}
	}
}

func TestSummaryNamesClient(t *testing.T) {
	s := Summary{Name: "x", Benchmark: &BenchmarkInfo{Type: "sa-bench", Client: "sa-bench", ClientReason: "benchmark.custom_tokenizer a.B: the native client has no tokenizer"}}
	if want := "benchmark client: sa-bench (benchmark.custom_tokenizer a.B: the native client has no tokenizer)"; !strings.Contains(s.Text(), want) {
		t.Errorf("summary lacks %q:\n%s", want, s.Text())
	}
}

// TestSummaryNamesSrtctlType: one of srtctl's other benchmark types is
// reported with the command that ran it.
func TestSummaryNamesSrtctlType(t *testing.T) {
	s := Summary{Name: "x", Benchmark: &BenchmarkInfo{Type: "gpqa", Script: "/runs/r/bin/slurmbench srtctl-bench gpqa http://localhost:8000"}}
	if want := "benchmark: gpqa, as srtctl runs it: /runs/r/bin/slurmbench srtctl-bench gpqa http://localhost:8000"; !strings.Contains(s.Text(), want) {
		t.Errorf("summary lacks %q:\n%s", want, s.Text())
	}
}
