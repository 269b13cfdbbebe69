package results

import (
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

func TestWriteName(t *testing.T) {
	s := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	full := func(edit func(*NameOptions)) NameOptions {
		o := NameOptions{ResultFilename: s("RF"), Config: s("sa-bench_isl_8192_osl_1024"), Conc: n(2048), GPUs: n(24)}
		if edit != nil {
			edit(&o)
		}
		return o
	}
	for _, tt := range []struct {
		name string
		o    NameOptions
		want string // stdout, or the error when it starts with "!"
	}{
		{"aggregated", full(nil), "RF_sa-bench_isl_8192_osl_1024_conc2048_gpus_24.json\n"},
		{"disaggregated", full(func(o *NameOptions) { o.Ctx, o.Gen = n(16), n(8) }), "RF_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json\n"},
		{"an argument", full(func(o *NameOptions) { o.Args = []string{"x"} }), `!results name: unexpected argument "x"`},
		{"no result filename", full(func(o *NameOptions) { o.ResultFilename = nil }), "!results name: --result-filename is required"},
		{"no config", full(func(o *NameOptions) { o.Config = nil }), "!results name: --config is required"},
		{"no conc", full(func(o *NameOptions) { o.Conc = nil }), "!results name: --conc is required"},
		{"no gpus", full(func(o *NameOptions) { o.GPUs = nil }), "!results name: --gpus is required"},
		{"ctx alone", full(func(o *NameOptions) { o.Ctx = n(16) }), "!results name: --ctx and --gen go together"},
		{"gen alone", full(func(o *NameOptions) { o.Gen = n(8) }), "!results name: --ctx and --gen go together"},
		{"zero ctx", full(func(o *NameOptions) { o.Ctx, o.Gen = n(0), n(24) }), "!results name: --ctx 0 --gen 24: both must be at least 1"},
		{"ctx+gen not gpus", full(func(o *NameOptions) { o.Ctx, o.Gen = n(16), n(9) }), "!gpus 24 is not ctx 16 + gen 9"},
		{"a slash", full(func(o *NameOptions) { o.ResultFilename = s("R/F") }), `!result filename "R/F": must not contain '/'`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := WriteName(&out, tt.o)
			if want, ok := strings.CutPrefix(tt.want, "!"); ok {
				if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), want) || out.Len() != 0 {
					t.Errorf("%v (exit %d), stdout %q; want exit 2 with %q and nothing printed", err, exitcode.Of(err), out.String(), want)
				}
				return
			}
			if err != nil || out.String() != tt.want {
				t.Errorf("%q, %v; want %q", out.String(), err, tt.want)
			}
		})
	}
}

func TestWriteParsed(t *testing.T) {
	for _, tt := range []struct {
		name  string
		names []string
		json  bool
		want  string // stdout, or the error when it starts with "!"
	}{
		{"raw aggregated and staged disaggregated", []string{"results_concurrency_64_gpus_8.json", "RF_cfg_conc2048_gpus_24_ctx_16_gen_8.json"}, false,
			"CONC=64 GPUS=8 PREFILL_GPUS=8 DECODE_GPUS=0\nCONC=2048 GPUS=24 PREFILL_GPUS=16 DECODE_GPUS=8\n"},
		{"json", []string{"RF_cfg_conc2048_gpus_24_ctx_16_gen_8.json"}, true,
			`{"concurrency":2048,"decode_gpus":8,"disaggregated":true,"form":"staged","gpus":24,"name":"RF_cfg_conc2048_gpus_24_ctx_16_gen_8.json","prefill_gpus":16,"prefix":"RF_cfg"}` + "\n"},
		{"json aggregated is all prefill", []string{"results_concurrency_64_gpus_8.json"}, true,
			`{"concurrency":64,"decode_gpus":0,"disaggregated":false,"form":"raw","gpus":8,"name":"results_concurrency_64_gpus_8.json","prefill_gpus":8,"prefix":""}` + "\n"},
		{"no name", nil, false, "!results parse: no name given"},
		{"not a name", []string{"RF_conc_gpus_.json"}, false, "!results parse: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := WriteParsed(&out, tt.names, tt.json)
			if want, ok := strings.CutPrefix(tt.want, "!"); ok {
				if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), want) {
					t.Errorf("%v (exit %d); want exit 2 with %q", err, exitcode.Of(err), want)
				}
				return
			}
			if err != nil || out.String() != tt.want {
				t.Errorf("%q, %v; want %q", out.String(), err, tt.want)
			}
		})
	}
}
