package power

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// The workflow's consumer of a power package is InferenceX's multinode
// aggregator (utils/aggregate_power_multinode.py, through
// process_result.py). What it decided for one package `make demo` staged is
// recorded in ../shared/data/facts/power-aggregator: as published (the
// producer name refused) and with its pinned producer name replaced by
// slurmbench's (published, with the aggregate's energy figures). The
// project's own recheck and energy must reach the same verdicts, the same
// reasons and the same numbers on that package.

type aggregatorFacts struct {
	dir     string
	logs    string // the staged LOGS directory
	result  map[string]any
	sidecar func(t *testing.T, variant string) map[string]any
	agg     func(t *testing.T, variant string) map[string]json.Number
}

func loadAggregatorFacts(t *testing.T) aggregatorFacts {
	t.Helper()
	dir := shareddata.Path(t, "data", "facts", "power-aggregator")
	const name = "demo_mock-2p1d_sa-bench_isl_1024_osl_128_conc8_gpus_12_ctx_8_gen_4.json"
	read := func(t *testing.T, p string, v any) {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(strings.NewReader(string(b)))
		d.UseNumber()
		if err := d.Decode(v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	f := aggregatorFacts{dir: dir, logs: filepath.Join(dir, "input", "LOGS")}
	read(t, filepath.Join(dir, "input", name), &f.result)
	f.sidecar = func(t *testing.T, variant string) map[string]any {
		var m map[string]any
		read(t, filepath.Join(dir, variant, "power_validation_"+name), &m)
		return m
	}
	f.agg = func(t *testing.T, variant string) map[string]json.Number {
		var raw map[string]any
		read(t, filepath.Join(dir, variant, "agg_"+name), &raw)
		out := map[string]json.Number{}
		for k, v := range raw {
			if n, ok := v.(json.Number); ok {
				out[k] = n
			}
		}
		return out
	}
	return f
}

func strs(v any) []string {
	out := []string{}
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestRecheckGivesTheConsumersVerdicts(t *testing.T) {
	f := loadAggregatorFacts(t)
	power := filepath.Join(f.logs, "power")
	for _, c := range []struct {
		variant string
		accept  []string
	}{
		{"as-published", []string{SrtSlurmProducer}},
		{"producer-replaced", []string{Producer}},
	} {
		t.Run(c.variant, func(t *testing.T) {
			side := f.sidecar(t, c.variant)
			v, err := Recheck(power, f.logs, c.accept...)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := side["power_valid"].(bool); v.Valid != want {
				t.Errorf("valid %v, the consumer said %v", v.Valid, want)
			}
			if want := strs(side["reasons"]); !slices.Equal(nonNil(v.Reasons), want) {
				t.Errorf("reasons %q, the consumer said %q", v.Reasons, want)
			}
			if want := strs(side["failures"]); !slices.Equal(nonNil(v.Failures), want) {
				t.Errorf("failures %q, the consumer said %q", v.Failures, want)
			}
			agg := f.agg(t, c.variant)
			if n, _ := agg["power_valid"].Int64(); (n == 1) != v.Valid {
				t.Errorf("agg power_valid %d, recheck valid %v", n, v.Valid)
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestEnergyGivesTheConsumersAggregate: the published aggregate's energy
// figures, each to the digits the consumer wrote.
func TestEnergyGivesTheConsumersAggregate(t *testing.T) {
	f := loadAggregatorFacts(t)
	power := filepath.Join(f.logs, "power")
	m, err := ReadManifest(filepath.Join(power, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	num := func(k string) int {
		n, err := f.result[k].(json.Number).Int64()
		if err != nil {
			t.Fatalf("result %s: %v", k, err)
		}
		return int(n)
	}
	e, err := WindowEnergy(power, m, num("max_concurrency"), num("total_output_tokens"))
	if err != nil {
		t.Fatal(err)
	}
	p := e.Point(num("completed"), num("total_input_tokens"))
	agg := f.agg(t, "producer-replaced")
	for field, got := range map[string]float64{
		"avg_power_w":                    p.AvgPowerW,
		"avg_total_gpu_power_w":          p.AvgTotalGPUPowerW,
		"total_gpu_energy_j":             p.TotalJoules,
		"joules_per_successful_query":    p.JoulesPerQuery,
		"joules_per_input_token":         p.JoulesPerInputToken,
		"joules_per_output_token":        p.JoulesPerOutputToken,
		"joules_per_total_token":         p.JoulesPerTotalToken,
		"prefill_gpu_energy_j":           p.PrefillJoules,
		"prefill_avg_power_w":            p.PrefillAvgPowerW,
		"prefill_joules_per_input_token": p.PrefillJoulesPerIn,
		"decode_gpu_energy_j":            p.DecodeJoules,
		"decode_avg_power_w":             p.DecodeAvgPowerW,
		"decode_joules_per_output_token": p.DecodeJoulesPerOut,
	} {
		want, ok := agg[field]
		if !ok {
			t.Errorf("the consumer's aggregate has no %s", field)
			continue
		}
		if !sameToDigits(got, want) {
			t.Errorf("%s = %v, the consumer wrote %s", field, got, want)
		}
	}
	if got, want := p.DecodeJoulesPerOut, 1.876823; math.Abs(got-want) > 5e-7 {
		t.Errorf("decode J per output token %v, want %v (the facts' README)", got, want)
	}
}

// sameToDigits: got rounds to want at want's own number of decimals.
func sameToDigits(got float64, want json.Number) bool {
	w, err := want.Float64()
	if err != nil {
		return false
	}
	digits := 0
	if _, frac, ok := strings.Cut(want.String(), "."); ok {
		digits = len(frac)
	}
	half := 0.5 * math.Pow(10, -float64(digits))
	return math.Abs(got-w) <= half*(1+1e-9)
}

func TestSameToDigits(t *testing.T) {
	for _, c := range []struct {
		got  float64
		want string
		ok   bool
	}{
		{1.8768234, "1.876823", true}, {1.8768236, "1.876823", false}, {350, "350.0", true}, {350.06, "350.0", false},
		{51248.534, "51248.53", true}, {51248.536, "51248.53", false},
	} {
		if got := sameToDigits(c.got, json.Number(c.want)); got != c.ok {
			t.Errorf("sameToDigits(%v, %s) = %v", c.got, c.want, got)
		}
	}
}

// A package the collector wrote here, fresh: the recheck refuses it only
// for the producer name when the consumer pins srt-slurm's, publishes it
// when slurmbench's name is accepted, and refuses it again once a device's
// samples are gone; the energy equals wattage × GPUs × window / tokens.
func TestRecheckOnAFreshPackage(t *testing.T) {
	c := newCluster(t, 350, nil)
	logDir := t.TempDir()
	s, err := NewSession(settings(t, c, logDir, []int{8}))
	if err != nil {
		t.Fatal(err)
	}
	if ready, err := startReady(t, s); !ready || err != nil {
		t.Fatalf("Start: %v %v", ready, err)
	}
	benchPoint(t, s, logDir, 8, 600*time.Millisecond, true)
	time.Sleep(150 * time.Millisecond)
	if out, err := s.Stop(false); err != nil || !out.PublicationValid {
		t.Fatalf("Stop: %+v %v", out, err)
	}
	powerDir := filepath.Join(logDir, "power")
	v, err := Recheck(powerDir, logDir, SrtSlurmProducer)
	if err != nil {
		t.Fatal(err)
	}
	if v.Valid || !slices.Equal(v.Reasons, []string{ConsumerRecomputeInvalid, ConsumerVerdictMismatch}) || len(v.Failures) != 2 ||
		v.Failures[0] != "producer is '"+Producer+"', expected '"+SrtSlurmProducer+"'" {
		t.Errorf("pinned to srt-slurm: %+v, want refused for the producer only", v)
	}
	if v, err := Recheck(powerDir, logDir, SrtSlurmProducer, Producer); err != nil || !v.Valid || len(v.Reasons) != 0 {
		t.Errorf("slurmbench accepted: %+v %v, want valid", v, err)
	}
	m, err := ReadManifest(filepath.Join(powerDir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	e, err := WindowEnergy(powerDir, m, 8, 640*8)
	if err != nil {
		t.Fatal(err)
	}
	want := 350 * 12 * e.WindowSeconds / float64(640*8)
	if math.Abs(e.JoulesPerToken-want)/want > 0.01 {
		t.Errorf("J/output token %v, want wattage×GPUs×window/tokens = %v within 1%%", e.JoulesPerToken, want)
	}
	// One GPU's rows gone: the recomputed verdict differs from the stored one.
	samples := filepath.Join(powerDir, SamplesFile)
	b, err := os.ReadFile(samples)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var kept []string
	gone := m.ExpectedDevices[0]
	for i, l := range lines {
		col := strings.Split(l, ",")
		if i > 0 && len(col) == 7 && col[3] == gone.Hostname && col[4] == strconv.Itoa(gone.GPUIndex) {
			continue
		}
		kept = append(kept, l)
	}
	if len(kept) == len(lines) {
		t.Fatalf("no row of %s/GPU %d to drop in\n%s", gone.Hostname, gone.GPUIndex, lines[:2])
	}
	if err := os.WriteFile(samples, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := Recheck(powerDir, logDir, Producer); err != nil || v.Valid || !slices.Contains(v.Reasons, ConsumerVerdictMismatch) {
		t.Errorf("a device's samples dropped: %+v %v, want refused as a verdict mismatch", v, err)
	}
}
