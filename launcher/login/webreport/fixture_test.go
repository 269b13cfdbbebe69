package webreport

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/power"
	"github.com/slurmbench/slurmbench/results/resultstest"
)

// fixtureConcs are the fixture's points: the demo's topology, 2P1D on
// 12 GPUs (8 prefill + 4 decode), at two concurrencies.
var fixtureConcs = []int{8, 32}

const fixtureStart = 1796521700.0

func stagedName(conc int) string {
	return fmt.Sprintf("demo_sa-bench_isl_1024_osl_128_conc%d_gpus_12_ctx_8_gen_4.json", conc)
}

// writeFixture lays out a stage directory as a run stages it: the
// summary, the manifest, each point's result and requests file, and a
// power package whose samples cover both points' windows.
func writeFixture(t *testing.T, failed bool) string {
	t.Helper()
	dir := t.TempDir()
	strict, flex, se := 0.95, 0.95, 0.006
	sum := report.Summary{RunID: "mock-2p1d-20261206T034000Z", JobID: "42", Name: "mock-2p1d", Outcome: report.OutcomeSucceeded,
		Image: "10.77.0.1:5000/slurmbench/mock-engine:demo", ImageDigest: "sha256:" + strings.Repeat("ab", 32),
		GSM8K:       &report.EvalRow{Strict: &strict, Flexible: &flex, StrictStderr: &se, FlexStderr: &se, N: 1319, Threshold: 0.9, ThresholdSource: "default", Passed: true},
		StagedFiles: []string{stagedName(8), stagedName(32)}}
	if failed {
		sum = report.Summary{Name: "mock-2p1d", Outcome: report.OutcomeFailed, Class: "health_deadline", Phase: "health", Process: "decode_0",
			Host: "node3", FirstError: "RuntimeError: CUDA out of memory <alloc>", Message: "the engines were not healthy within 30m0s",
			LastLines: []string{"loading weights", "RuntimeError: CUDA out of memory <alloc>"}, ExitCode: 7}
	}
	resultstest.WriteJSON(t, filepath.Join(dir, SummaryName), sum)
	if failed {
		return dir
	}
	m := results.Manifest{SchemaVersion: results.ManifestSchemaVersion, Provenance: results.Provenance{
		ImageRef: sum.Image, ImageDigest: sum.ImageDigest, RecipeSHA256: strings.Repeat("0f", 32), ProfilePath: "profiles/testcluster.toml",
		SlurmbenchVersion: "v0-test", SlurmVersion: "24.11.5", JobID: "42", Nodes: []string{"node1", "node2", "node3"},
		Overrides: []string{"benchmark.concurrencies=8x32"},
		Runtime: &results.Runtime{Processes: []results.RuntimeProcess{
			{Step: "prefill_0", Host: "node1", Argv: []string{"slurmbench", "mock-engine", "--mode", "prefill"}},
			{Step: "decode_0", Host: "node3", Argv: []string{"slurmbench", "mock-engine", "--mode", "decode"}},
		}},
		Extra: map[string]string{"RESULT_FILENAME": "demo"}}, Artifacts: []results.Artifact{}}
	resultstest.WriteJSON(t, filepath.Join(dir, results.ManifestName), m)

	// Power: 12 GPUs at 350 W (decode 300 W), one scrape a second.
	pdir := filepath.Join(dir, "LOGS", "power")
	var devs []power.ExpectedDevice
	var csv strings.Builder
	csv.WriteString(strings.Join(power.SamplesHeader, ",") + "\n")
	for node := 1; node <= 3; node++ {
		for g := range 4 {
			role := "prefill"
			if node == 3 {
				role = "decode"
			}
			devs = append(devs, power.ExpectedDevice{Hostname: fmt.Sprintf("node%d", node), GPUIndex: g, Assignments: []power.Assignment{{WorkerRole: role}}})
		}
	}
	for seq := range 60 {
		for _, d := range devs {
			w := 350.0
			if d.Assignments[0].WorkerRole == "decode" {
				w = 300 + float64(seq%5)
			}
			fmt.Fprintf(&csv, "1,%.1f,%d,%s,%d,GPU-%s-%d,%.1f\n", fixtureStart+float64(seq), seq, d.Hostname, d.GPUIndex, d.Hostname, d.GPUIndex, w)
		}
	}
	resultstest.WriteFile(t, filepath.Join(pdir, power.SamplesFile), csv.String())
	valid := true
	pm := power.Manifest{SchemaVersion: 1, Producer: power.Producer, Status: "complete", PublicationValid: &valid, ExpectedDevices: devs}
	for _, conc := range fixtureConcs {
		wf := power.WindowsDir + "/" + fmt.Sprintf("results_concurrency_%d_gpus_12_ctx_8_gen_4.json", conc)
		pm.WindowValidations = append(pm.WindowValidations, power.WindowValidation{BenchmarkType: "sa-bench", Concurrency: conc, WindowFile: &wf, CoverageValid: true})
	}
	resultstest.WriteJSON(t, filepath.Join(pdir, power.ManifestFile), pm)

	for i, conc := range fixtureConcs {
		start := fixtureStart + 5 + float64(i)*25
		end := start + 20
		res := resultstest.SABench(conc, map[string]any{
			"slurmbench_valid": true, "completed": conc*10 - 1, "benchmark_start_time_unix": start, "benchmark_end_time_unix": end,
			"request_goodput:": float64(conc) / 2, "median_ttft_ms": 50.0 + float64(i), "median_tpot_ms": 10.0 + float64(i)*2,
			"p90_ttft_ms": 55.0, "p99_ttft_ms": 60.0, "p99_tpot_ms": 12.0, "median_itl_ms": 10.0, "p99_itl_ms": 14.0,
			"median_e2el_ms": 1200.0, "p99_e2el_ms": 1400.0,
			"total_token_throughput": 6800.0 * float64(i+1), "output_throughput": 740.0 * float64(i+1),
		})
		resultstest.WriteJSON(t, filepath.Join(dir, stagedName(conc)), res)
		var recs []results.RequestRecord
		for k := range conc * 10 {
			ttft, e2e := 45+float64(k%13), 1150+float64(k%17)*5
			first, stop := start+ttft/1000, start+e2e/1000
			rec := results.RequestRecord{Index: k, StartUnix: start, FirstUnix: &first, EndUnix: &stop, InputTokens: 1000, OutputTokens: 128,
				TTFTms: &ttft, E2Ems: &e2e, ITL: &results.ITLStats{Count: 127, Mean: 9.5 + float64(k%7)*0.2, Median: 10, P99: 13, Max: 20}, Status: results.RequestOK}
			if k == 3 {
				rec = results.RequestRecord{Index: k, StartUnix: start, InputTokens: 1000, Status: results.RequestFailed, Error: "HTTP 503"}
			}
			recs = append(recs, rec)
		}
		if err := results.WriteRequests(results.RequestsPath(filepath.Join(dir, stagedName(conc))), recs); err != nil {
			t.Fatal(err)
		}
		win := power.WindowRecord{SchemaVersion: 1, BenchmarkType: "sa-bench", Concurrency: conc, StartUnix: start, EndUnix: &end, Status: "completed"}
		resultstest.WriteJSON(t, filepath.Join(pdir, power.WindowsDir, fmt.Sprintf("results_concurrency_%d_gpus_12_ctx_8_gen_4.json", conc)), win)
	}
	return dir
}
