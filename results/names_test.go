package results

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slurmbench/slurmbench/results/resultname"
)

var (
	p4p1d = PointID{Concurrency: 2048, GPUs: 24, PrefillGPUs: 16, DecodeGPUs: 8}
	pAgg  = PointID{Concurrency: 64, GPUs: 8}
)

// A RESULT_FILENAME as InferenceX's workflow computes it (180 bytes with
// the recipe fingerprint).
const exampleResultFilename = "dsr1_8k1k_fp4_dynamo-sglang_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw4_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_disagg-true_spec-mtp_conc2048_b200-dgxc-slurm_7_recipe-0123456789abcdef"

func TestRawName(t *testing.T) {
	tests := []struct {
		p    PointID
		want string
	}{
		{p4p1d, "results_concurrency_2048_gpus_24_ctx_16_gen_8.json"},
		{pAgg, "results_concurrency_64_gpus_8.json"},
	}
	for _, tt := range tests {
		got, err := RawName(tt.p)
		if err != nil || got != tt.want {
			t.Errorf("RawName(%+v) = %q, %v; want %q", tt.p, got, err, tt.want)
		}
	}
}

func TestStagedNameShortIsUpstreamName(t *testing.T) {
	tests := []struct {
		rf, config string
		p          PointID
		want       string
	}{
		// Unbounded names are byte-identical to the launchers'.
		{"RF", "sa-bench_isl_8192_osl_1024", p4p1d, "RF_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json"},
		{"RF", "sa-bench_isl_1024_osl_1024", pAgg, "RF_sa-bench_isl_1024_osl_1024_conc64_gpus_8.json"},
		{"a_conc9_gpus_9", "sa-bench_custom_x", PointID{Concurrency: 1, GPUs: 2, PrefillGPUs: 1, DecodeGPUs: 1}, "a_conc9_gpus_9_sa-bench_custom_x_conc1_gpus_2_ctx_1_gen_1.json"},
	}
	for _, tt := range tests {
		got, err := StagedName(tt.rf, tt.config, tt.p)
		if err != nil || got != tt.want {
			t.Errorf("StagedName(%q, %q, %+v) = %q, %v; want %q", tt.rf, tt.config, tt.p, got, err, tt.want)
		}
	}
}

// checkBounded asserts every property of the bounding rule for one input.
func checkBounded(t *testing.T, rf, config string, p PointID) string {
	t.Helper()
	got, err := StagedName(rf, config, p)
	if err != nil {
		t.Fatalf("StagedName(len %d): %v", len(rf), err)
	}
	raw, _ := RawName(p)
	tail := "_conc" + strings.TrimPrefix(strings.TrimSuffix(raw, ".json"), "results_concurrency_") + ".json"
	full := rf + "_" + config + tail
	if n := len("power_validation_" + got + ".tmp"); n > 255 {
		t.Errorf("full %d bytes: power_validation_<name>.tmp is %d bytes", len(full), n)
	}
	if !strings.HasSuffix(got, tail) {
		t.Errorf("full %d bytes: %q lost its numeric tail %q", len(full), got, tail)
	}
	if !utf8.ValidString(got) {
		t.Errorf("full %d bytes: %q is not valid UTF-8", len(full), got)
	}
	// The workflow's globs: RESULT_FILENAME is never cut.
	if !strings.HasPrefix(got, rf+"_") {
		t.Errorf("full %d bytes: %q does not start with RESULT_FILENAME + \"_\" (%d bytes)", len(full), got, len(rf))
	}
	if len(full) <= MaxStagedNameLen {
		if got != full {
			t.Errorf("full %d bytes fits but was changed to %q", len(full), got)
		}
	} else {
		// result_filename.py hashes the config alone, 20 hex digits.
		sum := sha256.Sum256([]byte(config))
		hash := hex.EncodeToString(sum[:])[:20]
		mid, ok := strings.CutSuffix(strings.TrimPrefix(got, rf+"_"), "-"+hash+tail)
		if !ok {
			t.Fatalf("full %d bytes: %q does not end in -%s + tail", len(full), got, hash)
		}
		// What stands for config is a prefix of it, filling the name up
		// to the bound but for a character cut in two.
		if !strings.HasPrefix(config, mid) {
			t.Errorf("full %d bytes: %q stands for config %q", len(full), mid, config)
		}
		if utf8.ValidString(config) && len(got) <= MaxStagedNameLen-utf8.UTFMax {
			t.Errorf("full %d bytes: bounded name is %d bytes, wastes room", len(full), len(got))
		}
	}
	again, _ := StagedName(rf, config, p)
	if again != got {
		t.Errorf("not deterministic: %q then %q", got, again)
	}
	pn, err := ParseName(got)
	if err != nil {
		t.Fatalf("ParseName(%q): %v", got, err)
	}
	if pn.PointID != p || pn.Form != StagedForm {
		t.Errorf("ParseName(%q) = %+v, want %+v staged", got, pn, p)
	}
	return got
}

// TestStagedNameBoundary walks every RESULT_FILENAME length from 1 byte
// to past the bound, for a disaggregated and an aggregated point: up to
// the bound every name keeps RESULT_FILENAME whole (checkBounded), the
// full name crosses MaxStagedNameLen on the way (config shortened to a
// prefix and its hash, then to the hash alone), and beyond it StagedName
// refuses naming both lengths.
func TestStagedNameBoundary(t *testing.T) {
	config := "sa-bench_isl_8192_osl_1024"
	seen := map[string]int{}
	for _, p := range []PointID{p4p1d, pAgg} {
		base, _ := StagedName("X", config, p)
		tailLen := len(base) - len("X_") - len(config)
		// The longest stem leaves config its 21-byte "-<hash>" stand-in.
		maxRF := MaxStagedNameLen - tailLen - 1 - 21
		sawShort, sawHashOnly := false, false
		for n := 1; n <= maxRF+20; n++ {
			rf := "dsr1_" + strings.Repeat("r", n) // vary the stem as well as its length
			rf = rf[len(rf)-n:]
			got, err := StagedName(rf, config, p)
			if n > maxRF {
				var tl *NameTooLongError
				if !errors.As(err, &tl) || tl.ResultFilenameLen != n || tl.MaxResultFilenameLen != maxRF {
					t.Fatalf("%d-byte RESULT_FILENAME (max %d): got %q, %v; want a NameTooLongError naming both lengths", n, maxRF, got, err)
				}
				for _, want := range []string{strconv.Itoa(n) + " bytes", strconv.Itoa(maxRF) + " bytes"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q does not name %q", err, want)
					}
				}
				continue
			}
			got = checkBounded(t, rf, config, p)
			if prev, dup := seen[got]; dup {
				t.Errorf("lengths %d and %d give the same name %q", prev, n, got)
			}
			seen[got] = n
			if full := n + 1 + len(config) + tailLen; full > MaxStagedNameLen {
				sawShort = true
				if strings.HasPrefix(got[n+1:], "-") {
					sawHashOnly = true
				}
			}
		}
		if !sawShort || !sawHashOnly {
			t.Errorf("%+v: the walk never shortened config (%v) or replaced it by the hash alone (%v)", p, sawShort, sawHashOnly)
		}
	}
	if MaxStagedNameLen != 234 {
		t.Errorf("MaxStagedNameLen = %d, want 255 - 17 - 4 = 234", MaxStagedNameLen)
	}
}

func TestStagedNameLongInputs(t *testing.T) {
	// The workflow bounds RESULT_FILENAME to 120 bytes (result_stem); that
	// one stages to 182 bytes unbounded.
	stem, err := resultname.ResultStem(exampleResultFilename, "")
	if err != nil || len(stem) != 120 {
		t.Fatalf("ResultStem: %q, %v", stem, err)
	}
	got := checkBounded(t, stem, "sa-bench_isl_8192_osl_1024", p4p1d)
	if got != stem+"_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json" {
		t.Errorf("a 120-byte stem's name was changed: %q", got)
	}
	// A 180-byte one (no longer what the workflow passes) leaves config
	// too little room even for its hash.
	if _, err := StagedName(exampleResultFilename, "sa-bench_isl_8192_osl_1024", p4p1d); !errors.As(err, new(*NameTooLongError)) {
		t.Errorf("180-byte RESULT_FILENAME: %v, want a NameTooLongError", err)
	}
	// Long conc lists make long stems, then config is shortened.
	longConc := strings.Replace(exampleResultFilename, "conc2048", "conc1x2x4x8x16x32x64x128", 1)[:190]
	for _, c := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		p := PointID{Concurrency: c, GPUs: 24, PrefillGPUs: 16, DecodeGPUs: 8}
		checkBounded(t, longConc[:170], "sa-bench_isl_8192_osl_1024", p)
		checkBounded(t, longConc, "sa-bench_isl_8192_osl_1024", PointID{Concurrency: c, GPUs: 8})
	}
	// The same stem for two concurrencies must still give two names.
	a, _ := StagedName(longConc, "sa-bench_isl_8192_osl_1024", PointID{Concurrency: 1, GPUs: 8})
	b, _ := StagedName(longConc, "sa-bench_isl_8192_osl_1024", PointID{Concurrency: 2, GPUs: 8})
	if !strings.Contains(a, "-") || a == longConc+"_sa-bench_isl_8192_osl_1024_conc1_gpus_8.json" {
		t.Errorf("a 190-byte stem's config was not shortened: %q", a)
	}
	if a == b {
		t.Errorf("two concurrencies share the name %q", a)
	}
	// A huge config and huge numbers still leave a name.
	checkBounded(t, "rf", strings.Repeat("c", 600), PointID{Concurrency: 1 << 40, GPUs: 1 << 41, PrefillGPUs: 1 << 40, DecodeGPUs: 1 << 40})
	// Two configs that share their kept prefix stay apart by their hashes.
	c1, _ := StagedName(exampleResultFilename, strings.Repeat("c", 80)+"1", pAgg)
	c2, _ := StagedName(exampleResultFilename, strings.Repeat("c", 80)+"2", pAgg)
	if c1 == c2 {
		t.Errorf("two long configs share the name %q", c1)
	}
	// Multi-byte characters in RESULT_FILENAME stay whole (it is never
	// cut) and at the config's cut too.
	for pad := 0; pad < 4; pad++ {
		checkBounded(t, strings.Repeat("x", pad)+strings.Repeat("é", 75), "sa-bench_isl_1024_osl_1024", p4p1d)
		checkBounded(t, "rf"+strings.Repeat("x", pad), strings.Repeat("é", 150), p4p1d)
	}
	// The measurement: a 212-byte RESULT_FILENAME used to lose its
	// middle; now it stays whole or is refused.
	rf212 := strings.Repeat("r", 212)
	if got, err := StagedName(rf212, "sa-bench_isl_8192_osl_1024", pAgg); err == nil {
		if !strings.HasPrefix(got, rf212+"_") {
			t.Errorf("212-byte RESULT_FILENAME: %q", got)
		}
	} else if !errors.As(err, new(*NameTooLongError)) {
		t.Errorf("212-byte RESULT_FILENAME: %v", err)
	}
}

func TestStagedNameRejects(t *testing.T) {
	tests := []struct {
		rf, config string
		p          PointID
		wantErr    string
	}{
		{"a/b", "cfg", p4p1d, `result filename "a/b": must not contain '/'`},
		{"ab", "cf\x00g", p4p1d, `config "cf\x00g": must not contain '\x00'`},
		{"", "cfg", p4p1d, "result filename: must not be empty"},
		{"ab", "", p4p1d, "config: must not be empty"},
		{"ab", "c\nfg", p4p1d, `config "c\nfg": must not contain '\n'`},
		{"ab", "cfg", PointID{Concurrency: 0, GPUs: 8}, "concurrency 0: must be at least 1"},
		{"ab", "cfg", PointID{Concurrency: 8, GPUs: 0}, "gpus 0: must be at least 1"},
		{"ab", "cfg", PointID{Concurrency: 8, GPUs: 24, PrefillGPUs: 16}, "ctx 16, gen 0: a disaggregated point needs at least one GPU on each side"},
		{"ab", "cfg", PointID{Concurrency: 8, GPUs: 25, PrefillGPUs: 16, DecodeGPUs: 8}, "gpus 25 is not ctx 16 + gen 8"},
	}
	for _, tt := range tests {
		_, err := StagedName(tt.rf, tt.config, tt.p)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("StagedName(%q, %q, %+v) error = %v, want it to contain %q", tt.rf, tt.config, tt.p, err, tt.wantErr)
		}
	}
}

func TestParseName(t *testing.T) {
	tests := []struct {
		name       string
		want       PointID
		wantForm   NameForm
		wantPrefix string
		wantErr    string
	}{
		// HAPPY PATH
		{name: "results_concurrency_2048_gpus_24_ctx_16_gen_8.json", want: p4p1d, wantForm: RawForm},
		{name: "results_concurrency_64_gpus_8.json", want: pAgg, wantForm: RawForm},
		{name: "RF_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json", want: p4p1d, wantForm: StagedForm, wantPrefix: "RF_sa-bench_isl_8192_osl_1024"},
		{name: "RF_sa-bench_isl_1024_osl_1024_conc64_gpus_8.json", want: pAgg, wantForm: StagedForm, wantPrefix: "RF_sa-bench_isl_1024_osl_1024"},
		// A stem that itself contains the tail's words cannot shift the numbers.
		{name: "x_conc1_gpus_2_ctx_7_gen_9_y_conc64_gpus_8.json", want: pAgg, wantForm: StagedForm, wantPrefix: "x_conc1_gpus_2_ctx_7_gen_9_y"},
		// SAD PATH
		{name: "results_2025-01-01T00-00-00.json", wantErr: "not a result name"},
		{name: "RF_conc2048_gpus_24_ctx_16.json", wantErr: "not a result name"},
		{name: "RF_conc2048_gpus_24.jsonl", wantErr: "not a result name"},
		{name: "RF_conc02048_gpus_24.json", wantErr: `concurrency: "02048" has a leading zero`},
		{name: "RF_conc0_gpus_24.json", wantErr: "concurrency 0: must be at least 1"},
		{name: "RF_conc8_gpus_24_ctx_16_gen_9.json", wantErr: "gpus 24 is not ctx 16 + gen 9"},
		{name: "RF_conc8_gpus_16_ctx_16_gen_0.json", wantErr: "ctx 16, gen 0: a disaggregated point"},
		{name: "RF_conc99999999999999999999_gpus_24.json", wantErr: "out of range"},
		{name: "dir/RF_conc8_gpus_8.json", wantErr: "must be a base name"},
	}
	for _, tt := range tests {
		got, err := ParseName(tt.name)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseName(%q) error = %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseName(%q): %v", tt.name, err)
			continue
		}
		if got.PointID != tt.want || got.Form != tt.wantForm || got.Prefix != tt.wantPrefix {
			t.Errorf("ParseName(%q) = %+v, want %+v %v %q", tt.name, got, tt.want, tt.wantForm, tt.wantPrefix)
		}
	}
	if _, err := ParseName("notes.json"); !errors.Is(err, ErrNotResultName) {
		t.Errorf("ParseName(notes.json) = %v, want ErrNotResultName", err)
	}
}

func TestPointLabel(t *testing.T) {
	if got := p4p1d.Label(); got != "ctx16/gen8 c2048" {
		t.Errorf("Label = %q", got)
	}
	if got := pAgg.Label(); got != "gpus8 c64" {
		t.Errorf("Label = %q", got)
	}
}

// FuzzStagedName checks the bounding invariants on arbitrary components;
// `go test` runs the seeds, `go test -fuzz=FuzzStagedName` explores.
func FuzzStagedName(f *testing.F) {
	f.Add(exampleResultFilename, "sa-bench_isl_8192_osl_1024", 2048, 16, 8)
	f.Add("short", "cfg", 1, 0, 0)
	f.Add(strings.Repeat("é", 130), "sa-bench_custom_ü", 64, 4, 4)
	f.Fuzz(func(t *testing.T, rf, config string, conc, ctx, gen int) {
		p := PointID{Concurrency: conc, GPUs: ctx + gen, PrefillGPUs: ctx, DecodeGPUs: gen}
		if ctx == 0 && gen == 0 {
			p.GPUs = 8
		}
		got, err := StagedName(rf, config, p)
		if err != nil {
			return
		}
		if len("power_validation_"+got+".tmp") > 255 {
			t.Fatalf("%q is too long", got)
		}
		pn, err := ParseName(got)
		if err != nil || pn.PointID != p {
			t.Fatalf("ParseName(%q) = %+v, %v; want %+v", got, pn, err, p)
		}
	})
}

func TestConfigName(t *testing.T) {
	if got := ConfigName(8192, 1024); got != "sa-bench_isl_8192_osl_1024" {
		t.Errorf("ConfigName = %s", got)
	}
}
