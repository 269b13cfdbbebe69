package results

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// NameOptions are `results name`'s flags; a nil field is a flag not given.
type NameOptions struct {
	Args                   []string
	ResultFilename, Config *string
	Conc, GPUs             *int
	Ctx, Gen               *int // prefill and decode GPUs: both or neither
}

// WriteName is `results name`: it prints the staged name of one point's
// result file, or refuses (exit 2) what StagedName would not name.
func WriteName(w io.Writer, o NameOptions) error {
	if len(o.Args) > 0 {
		return exitcode.Errorf(exitcode.Config, "results name: unexpected argument %q", o.Args[0])
	}
	for _, f := range []struct {
		name  string
		given bool
	}{{"result-filename", o.ResultFilename != nil}, {"config", o.Config != nil}, {"conc", o.Conc != nil}, {"gpus", o.GPUs != nil}} {
		if !f.given {
			return exitcode.Errorf(exitcode.Config, "results name: --%s is required", f.name)
		}
	}
	if (o.Ctx != nil) != (o.Gen != nil) {
		return exitcode.Errorf(exitcode.Config, "results name: --ctx and --gen go together")
	}
	p := PointID{Concurrency: *o.Conc, GPUs: *o.GPUs}
	if o.Ctx != nil {
		p.PrefillGPUs, p.DecodeGPUs = *o.Ctx, *o.Gen
		if p.PrefillGPUs < 1 || p.DecodeGPUs < 1 {
			return exitcode.Errorf(exitcode.Config, "results name: --ctx %d --gen %d: both must be at least 1", p.PrefillGPUs, p.DecodeGPUs)
		}
	}
	name, err := StagedName(*o.ResultFilename, *o.Config, p)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "results name: %w", err)
	}
	_, err = fmt.Fprintln(w, name)
	return err
}

// WriteParsed is `results parse`: for each name the point numbers the
// workflow sets for process_result.py (an aggregated point is all
// prefill), as shell assignments or one JSON object per name. A name that
// does not parse is refused (exit 2), never an empty number.
func WriteParsed(w io.Writer, names []string, asJSON bool) error {
	if len(names) == 0 {
		return exitcode.Errorf(exitcode.Config, "results parse: no name given")
	}
	for _, arg := range names {
		pn, err := ParseName(arg)
		if err != nil {
			return exitcode.Errorf(exitcode.Config, "results parse: %w", err)
		}
		prefill, decode := pn.PrefillGPUs, pn.DecodeGPUs
		if !pn.Disaggregated() {
			prefill, decode = pn.GPUs, 0
		}
		if asJSON {
			b, err := json.Marshal(map[string]any{
				"name": arg, "form": pn.Form.String(), "prefix": pn.Prefix,
				"concurrency": pn.Concurrency, "gpus": pn.GPUs,
				"prefill_gpus": prefill, "decode_gpus": decode, "disaggregated": pn.Disaggregated(),
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(w, string(b))
			continue
		}
		fmt.Fprintf(w, "CONC=%d GPUS=%d PREFILL_GPUS=%d DECODE_GPUS=%d\n", pn.Concurrency, pn.GPUs, prefill, decode)
	}
	return nil
}
