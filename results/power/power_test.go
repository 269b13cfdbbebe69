package power

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/mockengine"
)

func TestParseScrape(t *testing.T) {
	const head = "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
	tests := []struct {
		name    string
		body    string
		gpus    []int
		reasons []Reason
	}{
		{"mock exporter", mockengine.NewDCGMExporter(mockengine.DCGMOptions{Hostname: "n1", GPUs: []int{0, 1, 2, 3}, Watts: 250}).Body(), []int{0, 1, 2, 3}, nil},
		{"timestamp and escapes", head + `DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-a",modelName="B\"200\\x"} 1.5e2 1700000000000` + "\n", []int{1}, nil},
		{"no power metric", "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"x\"} 40\n", nil, []Reason{PowerMetricMissing}},
		{"MIG instance", head + `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",GPU_I_ID="3"} 100` + "\n", nil, []Reason{MIGInstanceUnsupported}},
		{"no gpu label", head + `DCGM_FI_DEV_POWER_USAGE{UUID="GPU-a"} 100` + "\n", nil, []Reason{GPUIndexMissing}},
		{"no UUID", head + `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID=" "} 100` + "\n", nil, []Reason{GPUUUIDMissing}},
		{"negative and NaN", head + `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="a"} -1` + "\n" + `DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="b"} NaN` + "\n", nil, []Reason{InvalidPowerValue}},
		{"one GPU twice drops it", head + `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="a"} 1` + "\n" + `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="a"} 2` + "\n" + `DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="b"} 2` + "\n", []int{1}, []Reason{DuplicatePowerMetric}},
		// Past any GPU: 1e308 W made the energy +Inf J.
		{"absurd power", head + `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="a"} 1e308` + "\n" + `DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="b"} 700` + "\n", []int{1}, []Reason{InvalidPowerValue}},
		// One scrape used to be able to report 274,185 GPUs.
		{"GPU index past a node", head + `DCGM_FI_DEV_POWER_USAGE{gpu="64",UUID="a"} 100` + "\n" + `DCGM_FI_DEV_POWER_USAGE{gpu="99999",UUID="b"} 100` + "\n" + `DCGM_FI_DEV_POWER_USAGE{gpu="63",UUID="c"} 100` + "\n", []int{63}, []Reason{UnexpectedDevice}},
		{"not exposition", "<html>oops</html>\n", nil, []Reason{EndpointParseError}},
		{"unterminated label", head + `DCGM_FI_DEV_POWER_USAGE{gpu="0 100` + "\n", nil, []Reason{EndpointParseError}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseScrape(tc.body)
			var gpus []int
			for _, r := range got.Readings {
				gpus = append(gpus, r.GPUIndex)
			}
			if !slices.Equal(gpus, tc.gpus) {
				t.Errorf("GPUs = %v, want %v", gpus, tc.gpus)
			}
			if !slices.Equal(got.Reasons, tc.reasons) {
				t.Errorf("reasons = %v, want %v", got.Reasons, tc.reasons)
			}
		})
	}
}

func TestReadSamplesIsStrict(t *testing.T) {
	header := strings.Join(SamplesHeader, ",") + "\r\n"
	tests := []struct {
		name    string
		content string
		rows    int
		reasons []Reason
	}{
		{"good", header + "1,10.5,0,n1,0,GPU-a,100.0\r\n1,11.5,1,n1,0,GPU-a,100.0\r\n", 2, nil},
		{"header", "a,b\r\n", 0, []Reason{SamplesCSVHeader}},
		{"malformed row", header + "1,10.5,0,n1,0,GPU-a,-3\r\n1,x,0,n1,1,GPU-b,1\r\n1,10.5,0,n1,2,GPU-c,1\r\n", 1, []Reason{SamplesCSVMalformed}},
		{"duplicate key", header + "1,10.5,0,n1,0,GPU-a,1\r\n1,10.6,0,n1,0,GPU-a,1\r\n", 1, []Reason{DuplicateSampleRow}},
		{"time goes back", header + "1,10.5,0,n1,0,GPU-a,1\r\n1,10.5,1,n1,0,GPU-a,1\r\n", 2, []Reason{TimestampNonMonotonic}},
		{"wrong schema", header + "2,10.5,0,n1,0,GPU-a,1\r\n", 0, []Reason{SamplesCSVMalformed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), SamplesFile)
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			rows, rs := ReadSamples(p)
			if len(rows) != tc.rows || !slices.Equal(rs, tc.reasons) {
				t.Errorf("got %d rows %v, want %d rows %v", len(rows), rs, tc.rows, tc.reasons)
			}
		})
	}
	if _, rs := ReadSamples(filepath.Join(t.TempDir(), "none.csv")); !slices.Equal(rs, []Reason{SamplesCSVMissing}) {
		t.Errorf("missing file: %v", rs)
	}
}

func TestValidateDevices(t *testing.T) {
	dev := func(host string, gpu int, role string) ExpectedDevice {
		return ExpectedDevice{Hostname: host, GPUIndex: gpu, Assignments: []Assignment{{WorkerRole: role}}}
	}
	obs := func(host string, gpu int, uuids ...string) ObservedDevice {
		return ObservedDevice{Hostname: host, GPUIndex: gpu, GPUUUIDs: uuids}
	}
	two := ExpectedDevice{Hostname: "n1", GPUIndex: 0, Assignments: []Assignment{{WorkerRole: RolePrefill}, {WorkerRole: RoleDecode}}}
	tests := []struct {
		name     string
		expected []ExpectedDevice
		observed []ObservedDevice
		want     []Reason
	}{
		{"exact", []ExpectedDevice{dev("n1", 0, RolePrefill)}, []ObservedDevice{obs("n1", 0, "a")}, nil},
		{"nothing expected", nil, nil, []Reason{ExpectedDeviceMissing}},
		{"missing", []ExpectedDevice{dev("n1", 0, RolePrefill), dev("n1", 1, RolePrefill)}, []ObservedDevice{obs("n1", 0, "a")}, []Reason{ExpectedDeviceMissing}},
		{"unexpected", []ExpectedDevice{dev("n1", 0, RolePrefill)}, []ObservedDevice{obs("n1", 0, "a"), obs("n2", 0, "b")}, []Reason{UnexpectedDevice}},
		{"uuid changed", []ExpectedDevice{dev("n1", 0, RolePrefill)}, []ObservedDevice{obs("n1", 0, "a", "b")}, []Reason{GPUUUIDChanged}},
		{"uuid on two GPUs", []ExpectedDevice{dev("n1", 0, RolePrefill), dev("n1", 1, RolePrefill)}, []ObservedDevice{obs("n1", 0, "a"), obs("n1", 1, "a")}, []Reason{GPUUUIDChanged}},
		{"two roles on one GPU", []ExpectedDevice{two}, []ObservedDevice{obs("n1", 0, "a")}, []Reason{ConflictingWorkerRoles}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ValidateDevices(tc.expected, tc.observed); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// cluster is three mock nodes of four GPUs: two prefill workers and one
// decode worker, each exporter on its own httptest server.
type cluster struct {
	endpoints []Endpoint
	devices   []ExpectedDevice
	watts     float64
}

func newCluster(t *testing.T, watts float64, stall map[string][2]time.Duration) cluster {
	t.Helper()
	c := cluster{watts: watts}
	roles := []struct {
		host  string
		role  string
		index int
	}{{"node1", RolePrefill, 0}, {"node2", RolePrefill, 1}, {"node3", RoleDecode, 0}}
	for _, r := range roles {
		opt := mockengine.DCGMOptions{Hostname: r.host, GPUs: []int{0, 1, 2, 3}, Watts: watts}
		if s, ok := stall[r.host]; ok {
			opt.StallAfter, opt.StallFor = s[0], s[1]
		}
		srv := httptest.NewServer(mockengine.NewDCGMExporter(opt))
		t.Cleanup(srv.Close)
		c.endpoints = append(c.endpoints, Endpoint{Hostname: r.host, URL: srv.URL + "/metrics"})
		for g := 0; g < 4; g++ {
			c.devices = append(c.devices, ExpectedDevice{Hostname: r.host, GPUIndex: g,
				Assignments: []Assignment{{WorkerRole: r.role, WorkerIndex: r.index, WorkerProcess: 0}}})
		}
	}
	return c
}

func settings(t *testing.T, c cluster, logDir string, concs []int) Settings {
	var windows []ExpectedWindow
	for _, conc := range concs {
		windows = append(windows, ExpectedWindow{BenchmarkType: BenchmarkTypeSABench, Concurrency: conc})
	}
	return Settings{
		PowerDir: filepath.Join(logDir, "power"), ResultRoot: logDir, JobID: "42", RunName: "test",
		Interval: 100 * time.Millisecond, StartupTimeout: 5 * time.Second, RequestTimeout: 2 * time.Second,
		JoinTimeout: 12 * time.Second, ExporterImage: "mock-dcgm-exporter", ExporterPort: 9400,
		ExporterCommand: "slurmbench mock-dcgm-exporter", ProducerVersion: "test", ProducerCommit: "0123abc",
		Endpoints: c.endpoints, ExpectedDevices: c.devices, ExpectedWindows: windows,
	}
}

// benchPoint plays the benchmark client: the window goes running, the
// measured period passes, the result is saved, the window completes with the
// same numbers. It returns the result's path.
func benchPoint(t *testing.T, s *Session, logDir string, conc int, measured time.Duration, complete bool) string {
	t.Helper()
	dir := filepath.Join(logDir, "sa-bench_isl_128_osl_64")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, fmt.Sprintf("results_concurrency_%d_gpus_12_ctx_8_gen_4.json", conc))
	w, err := NewWindowWriter(s.WindowDir(), logDir, file, BenchmarkTypeSABench, conc)
	if err != nil || w == nil {
		t.Fatalf("window writer: %v", err)
	}
	start := unix(time.Now())
	if err := w.MarkRunning(start); err != nil {
		t.Fatal(err)
	}
	time.Sleep(measured)
	if !complete {
		return file
	}
	end := unix(time.Now())
	dur := end - start
	res := map[string]any{
		"backend": "dynamo", "max_concurrency": conc, "duration": dur,
		"benchmark_start_time_unix": start, "benchmark_end_time_unix": end,
		"completed": 10 * conc, "total_input_tokens": 1280 * conc, "total_output_tokens": 640 * conc,
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.MarkCompleted(start, end, dur); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestSessionWritesAValidPackage(t *testing.T) {
	c := newCluster(t, 300, nil)
	logDir := t.TempDir()
	s, err := NewSession(settings(t, c, logDir, []int{8, 32}))
	if err != nil {
		t.Fatal(err)
	}
	ready, err := startReady(t, s)
	if err != nil || !ready {
		t.Fatalf("Start: ready=%v err=%v", ready, err)
	}
	benchPoint(t, s, logDir, 8, 400*time.Millisecond, true)
	benchPoint(t, s, logDir, 32, 400*time.Millisecond, true)
	time.Sleep(150 * time.Millisecond) // a sample after the last end
	out, err := s.Stop(false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusComplete || !out.PublicationValid || out.FailJob || len(out.Reasons) != 0 {
		t.Fatalf("outcome = %+v", out)
	}
	m, err := ReadManifest(filepath.Join(logDir, "power", ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if m.Producer != Producer || m.SampleRowCount == 0 || len(m.ObservedDevices) != 12 || len(m.WindowValidations) != 2 {
		t.Fatalf("manifest: producer %q rows %d observed %d windows %d", m.Producer, m.SampleRowCount, len(m.ObservedDevices), len(m.WindowValidations))
	}
	for _, v := range m.WindowValidations {
		if !v.CoverageValid || len(v.MaxGapSeconds) != 12 {
			t.Errorf("window c%d: %+v", v.Concurrency, v)
		}
	}
	e, err := WindowEnergy(filepath.Join(logDir, "power"), m, 8, 640*8)
	if err != nil {
		t.Fatal(err)
	}
	want := c.watts * 12 * e.WindowSeconds / float64(640*8)
	if math.Abs(e.JoulesPerToken-want)/want > 0.01 {
		t.Errorf("J/token = %v, want %v within 1%%", e.JoulesPerToken, want)
	}
	if p := e.AvgPowerW(RolePrefill); math.Abs(p-c.watts) > 0.01 {
		t.Errorf("prefill average power = %v W, want %v", p, c.watts)
	}
}

func TestSessionVerdicts(t *testing.T) {
	t.Run("exporter stalled beyond the gap", func(t *testing.T) {
		c := newCluster(t, 200, map[string][2]time.Duration{"node2": {300 * time.Millisecond, 3500 * time.Millisecond}})
		logDir := t.TempDir()
		set := settings(t, c, logDir, []int{8})
		set.RequestTimeout = 5 * time.Second // the stall answers late, it does not time out
		set.JoinTimeout = 30 * time.Second
		s, err := NewSession(set)
		if err != nil {
			t.Fatal(err)
		}
		if ready, err := startReady(t, s); !ready || err != nil {
			t.Fatalf("Start: %v %v", ready, err)
		}
		benchPoint(t, s, logDir, 8, 4500*time.Millisecond, true)
		time.Sleep(200 * time.Millisecond)
		out, err := s.Stop(false)
		if err != nil {
			t.Fatal(err)
		}
		if out.PublicationValid || !slices.Contains(out.Reasons, SampleGapExceeded) || out.FailJob {
			t.Fatalf("outcome = %+v, want invalid with %s and the job not failed", out, SampleGapExceeded)
		}
	})
	t.Run("a window never completed", func(t *testing.T) {
		c := newCluster(t, 200, nil)
		logDir := t.TempDir()
		set := settings(t, c, logDir, []int{8, 16})
		set.Required = true
		s, err := NewSession(set)
		if err != nil {
			t.Fatal(err)
		}
		if ready, err := startReady(t, s); !ready || err != nil {
			t.Fatalf("Start: %v %v", ready, err)
		}
		benchPoint(t, s, logDir, 8, 200*time.Millisecond, false)
		out, err := s.Stop(false)
		if err != nil {
			t.Fatal(err)
		}
		if out.PublicationValid || !slices.Contains(out.Reasons, WindowIncomplete) || !slices.Contains(out.Reasons, WindowMissing) || !out.FailJob {
			t.Fatalf("outcome = %+v, want incomplete + missing, and a required package failing the job", out)
		}
		b, _ := os.ReadFile(filepath.Join(logDir, "power", WindowsDir, "results_concurrency_8_gpus_12_ctx_8_gen_4.json"))
		if !strings.Contains(string(b), `"interrupted"`) {
			t.Errorf("running window not converted: %s", b)
		}
	})
	t.Run("no exporter answers", func(t *testing.T) {
		logDir := t.TempDir()
		c := cluster{endpoints: []Endpoint{{Hostname: "node1", URL: "http://127.0.0.1:1/metrics"}},
			devices: []ExpectedDevice{{Hostname: "node1", GPUIndex: 0, Assignments: []Assignment{{WorkerRole: RoleAgg}}}}}
		set := settings(t, c, logDir, []int{8})
		set.StartupTimeout = 300 * time.Millisecond
		set.Required = true
		s, err := NewSession(set)
		if err != nil {
			t.Fatal(err)
		}
		if ready, _ := startReady(t, s); ready {
			t.Fatal("ready without an exporter")
		}
		out, _ := s.Stop(false)
		if out.Status != StatusFailed || !slices.Contains(out.Reasons, ExporterStartupTimeout) || !out.FailJob {
			t.Fatalf("outcome = %+v", out)
		}
	})
}

func startReady(t *testing.T, s *Session) (bool, error) {
	t.Helper()
	if err := s.Start(t.Context()); err != nil {
		return false, err
	}
	return s.WaitReady(t.Context())
}
