package resultname

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// hash20 is "-" and the first 20 hex digits of sha256(s): the suffix
// result_filename.py's compact gives an over-long component.
func hash20(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "-" + hex.EncodeToString(sum[:])[:20]
}

// TestPointFilename covers every case of InferenceX's point_filename
// (inferencex-e2e/infx/results/result_filename.py, stored id 67435549678):
// the tail's two forms, the numbers' check, the config bound (fits, cut
// with a hash, cut to the hash alone, no room for the hash), and the
// components' character rules.
func TestPointFilename(t *testing.T) {
	const cfg = "sa-bench_isl_8192_osl_1024"
	// 234 - len(stem) - 1 - len(tail) - len(".json") bytes are left for config.
	stem := func(n int) string { return strings.Repeat("s", n) }
	tests := []struct {
		name                               string
		stem, config, conc, gpus, ctx, gen string
		want                               string
		wantErr                            string
		tooLong                            bool
	}{
		{name: "disaggregated", stem: "RF", config: cfg, conc: "2048", gpus: "24", ctx: "16", gen: "8",
			want: "RF_" + cfg + "_conc2048_gpus_24_ctx_16_gen_8.json"},
		{name: "aggregated", stem: "RF", config: cfg, conc: "64", gpus: "8",
			want: "RF_" + cfg + "_conc64_gpus_8.json"},
		{name: "zero ctx is a number", stem: "RF", config: cfg, conc: "1", gpus: "8", ctx: "0", gen: "8",
			want: "RF_" + cfg + "_conc1_gpus_8_ctx_0_gen_8.json"},
		{name: "leading zeros kept as given", stem: "RF", config: cfg, conc: "007", gpus: "8",
			want: "RF_" + cfg + "_conc007_gpus_8.json"},
		// The bound: the name is exactly 234 bytes when config just fits.
		{name: "config just fits", stem: stem(234 - 1 - len(cfg) - len("_conc64_gpus_8") - 5), config: cfg, conc: "64", gpus: "8",
			want: stem(234-1-len(cfg)-len("_conc64_gpus_8")-5) + "_" + cfg + "_conc64_gpus_8.json"},
		{name: "one byte over: config cut and hashed", stem: stem(234 - len(cfg) - len("_conc64_gpus_8") - 5), config: cfg, conc: "64", gpus: "8",
			want: stem(234-len(cfg)-len("_conc64_gpus_8")-5) + "_" + "sa-b-e9c6acf083d16f57fa7a" + "_conc64_gpus_8.json"},
		{name: "config cut to its hash alone", stem: stem(234 - 1 - 21 - len("_conc64_gpus_8") - 5), config: cfg, conc: "64", gpus: "8",
			want: stem(234-1-21-len("_conc64_gpus_8")-5) + "_-e9c6acf083d16f57fa7a_conc64_gpus_8.json"},
		{name: "no room for the hash", stem: stem(234 - 21 - len("_conc64_gpus_8") - 5), config: cfg, conc: "64", gpus: "8", tooLong: true},
		{name: "a short config fits where a hash would not", stem: stem(234 - 2 - len("_conc64_gpus_8") - 5), config: "c", conc: "64", gpus: "8",
			want: stem(234-2-len("_conc64_gpus_8")-5) + "_c_conc64_gpus_8.json"},
		// The numbers.
		{name: "empty conc", stem: "RF", config: cfg, conc: "", gpus: "8", wantErr: "ASCII digits"},
		{name: "conc with a letter", stem: "RF", config: cfg, conc: "8a", gpus: "8", wantErr: "ASCII digits"},
		{name: "negative gpus", stem: "RF", config: cfg, conc: "8", gpus: "-8", wantErr: "ASCII digits"},
		{name: "non-ASCII digits", stem: "RF", config: cfg, conc: "８", gpus: "8", wantErr: "ASCII digits"},
		{name: "ctx without gen", stem: "RF", config: cfg, conc: "8", gpus: "8", ctx: "4", wantErr: "ASCII digits"},
		{name: "gen without ctx", stem: "RF", config: cfg, conc: "8", gpus: "8", gen: "4", wantErr: "ASCII digits"},
		// The components.
		{name: "empty stem", stem: "", config: cfg, conc: "8", gpus: "8", wantErr: "result filename: must not be empty"},
		{name: "slash in stem", stem: "a/b", config: cfg, conc: "8", gpus: "8", wantErr: "must not contain '/'"},
		{name: "backslash in config", stem: "RF", config: `a\b`, conc: "8", gpus: "8", wantErr: `must not contain '\\'`},
		{name: "CR in config", stem: "RF", config: "a\rb", conc: "8", gpus: "8", wantErr: `must not contain '\r'`},
		{name: "empty config", stem: "RF", config: "", conc: "8", gpus: "8", wantErr: "config: must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PointFilename(tt.stem, tt.config, tt.conc, tt.gpus, tt.ctx, tt.gen)
			switch {
			case tt.tooLong:
				var tl *NameTooLongError
				if !errors.As(err, &tl) || tl.ResultFilenameLen != len(tt.stem) || tl.MaxResultFilenameLen != len(tt.stem)-1 {
					t.Fatalf("got %q, %v; want a NameTooLongError (%d bytes, at most %d)", got, err, len(tt.stem), len(tt.stem)-1)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
			default:
				if err != nil || got != tt.want {
					t.Fatalf("got %q, %v\nwant %q", got, err, tt.want)
				}
				if n := len("power_validation_" + got + ".tmp"); n > 255 {
					t.Errorf("power_validation_<name>.tmp is %d bytes", n)
				}
			}
		})
	}
}

// TestCompact covers compact's cases: fits (at the budget exactly), one
// byte over, a budget that leaves only the hash, one that leaves not even
// that, and a cut through a multi-byte character.
func TestCompact(t *testing.T) {
	long := strings.Repeat("b", 130)
	tests := []struct {
		value   string
		budget  int
		want    string
		wantErr bool
	}{
		{value: "abc", budget: 3, want: "abc"},
		{value: long, budget: 130, want: long},
		{value: long, budget: 129, want: long[:108] + "-122c32a264403fb510e4"},
		{value: long, budget: 21, want: "-122c32a264403fb510e4"},
		{value: long, budget: 20, wantErr: true},
		{value: "ab", budget: 1, wantErr: true},
		// 25 bytes of "é" (2 bytes each) keep 4 whole characters, not a half.
		{value: strings.Repeat("é", 30), budget: 30, want: strings.Repeat("é", 4) + hash20(strings.Repeat("é", 30))},
		{value: strings.Repeat("é", 30), budget: 31, want: strings.Repeat("é", 5) + hash20(strings.Repeat("é", 30))},
	}
	for _, tt := range tests {
		got, err := Compact(tt.value, tt.budget)
		if tt.wantErr {
			var ce *CompactError
			if !errors.As(err, &ce) {
				t.Errorf("Compact(%d bytes, %d) = %q, %v; want a CompactError", len(tt.value), tt.budget, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Compact(%d bytes, %d) = %q, %v; want %q", len(tt.value), tt.budget, got, err, tt.want)
		}
		if len(got) > tt.budget || !utf8.ValidString(got) {
			t.Errorf("Compact(%d bytes, %d) = %q: over budget or invalid UTF-8", len(tt.value), tt.budget, got)
		}
	}
	for _, bad := range []string{"", "a/b", "a\x00b", "a\nb"} {
		if _, err := Compact(bad, 100); err == nil {
			t.Errorf("Compact(%q) accepted", bad)
		}
	}
}

// TestResultStem: RESULT_FILENAME_BASE alone, with "_recipe-<fp>", and
// compacted to 120 bytes when longer.
func TestResultStem(t *testing.T) {
	base := "dsr1_1k1k_fp8_sglang"
	long := strings.Repeat("x", 110)
	fp := strings.Repeat("f", 64)
	tests := []struct{ base, fp, want string }{
		{base, "", base},
		{base, "0123abcd", base + "_recipe-0123abcd"},
		{strings.Repeat("y", 120), "", strings.Repeat("y", 120)},
		{long, fp, (long + "_recipe-" + fp)[:99] + hash20(long+"_recipe-"+fp)},
	}
	for _, tt := range tests {
		got, err := ResultStem(tt.base, tt.fp)
		if err != nil || got != tt.want {
			t.Errorf("ResultStem(%q, %q) = %q, %v; want %q", tt.base, tt.fp, got, err, tt.want)
		}
		if len(got) > 120 {
			t.Errorf("ResultStem = %d bytes", len(got))
		}
	}
	if _, err := ResultStem("", ""); err == nil {
		t.Error("ResultStem of an empty base accepted")
	}
}
