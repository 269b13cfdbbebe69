package results

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/results/resultname"
)

// MaxStagedNameLen is the longest staged result name. InferenceX's
// process_result.py writes power_validation_<name> next to each result
// (through an atomic ".tmp"), and that name must fit in NAME_MAX = 255 bytes
// (docs/run-directory.md).
const MaxStagedNameLen = 255 - len("power_validation_") - len(".tmp")

// Point identifies one SA-Bench measurement: a concurrency on a topology.
// PrefillGPUs and DecodeGPUs are the _ctx_ and _gen_ numbers of a
// disaggregated point; both are 0 for an aggregated one.
type PointID struct {
	Concurrency int
	GPUs        int // total GPUs serving the point
	PrefillGPUs int // "ctx"
	DecodeGPUs  int // "gen"
}

// Disaggregated reports whether the point has a prefill/decode split.
func (p PointID) Disaggregated() bool { return p.PrefillGPUs != 0 || p.DecodeGPUs != 0 }

// Validate checks the numbers a result name carries.
func (p PointID) Validate() error {
	if p.Concurrency < 1 {
		return fmt.Errorf("concurrency %d: must be at least 1", p.Concurrency)
	}
	if p.GPUs < 1 {
		return fmt.Errorf("gpus %d: must be at least 1", p.GPUs)
	}
	if !p.Disaggregated() {
		return nil
	}
	if p.PrefillGPUs < 1 || p.DecodeGPUs < 1 {
		return fmt.Errorf("ctx %d, gen %d: a disaggregated point needs at least one GPU on each side", p.PrefillGPUs, p.DecodeGPUs)
	}
	// srt-slurm computes TOTAL as PREFILL + DECODE;
	// a name that disagrees with itself would mislabel the per-GPU numbers.
	if p.PrefillGPUs+p.DecodeGPUs != p.GPUs {
		return fmt.Errorf("gpus %d is not ctx %d + gen %d", p.GPUs, p.PrefillGPUs, p.DecodeGPUs)
	}
	return nil
}

// Label is the short human name of a point, e.g. "ctx16/gen8 c2048" or
// "gpus8 c64" for an aggregated one.
func (p PointID) Label() string {
	if p.Disaggregated() {
		return fmt.Sprintf("ctx%d/gen%d c%d", p.PrefillGPUs, p.DecodeGPUs, p.Concurrency)
	}
	return fmt.Sprintf("gpus%d c%d", p.GPUs, p.Concurrency)
}

// topology is the "_gpus_<T>[_ctx_<P>_gen_<D>]" part shared by both name forms.
func (p PointID) topology() string {
	s := "_gpus_" + strconv.Itoa(p.GPUs)
	if p.Disaggregated() {
		s += "_ctx_" + strconv.Itoa(p.PrefillGPUs) + "_gen_" + strconv.Itoa(p.DecodeGPUs)
	}
	return s
}

// ConfigName is the per-ISL/OSL directory srt-slurm's sa-bench writes
// into and the InferenceX launchers stage from, sa-bench_isl_<ISL>_osl_<OSL>:
// the "config" of a staged name.
func ConfigName(inputLen, outputLen int) string {
	return fmt.Sprintf("sa-bench_isl_%d_osl_%d", inputLen, outputLen)
}

// RawName is the file name SA-Bench writes for a point in its results
// directory (srt-slurm sa-bench/bench.sh; docs/run-directory.md):
// results_concurrency_<C>_gpus_<T>[_ctx_<P>_gen_<D>].json.
func RawName(p PointID) (string, error) {
	if err := p.Validate(); err != nil {
		return "", fmt.Errorf("result name: %w", err)
	}
	return "results_concurrency_" + strconv.Itoa(p.Concurrency) + p.topology() + ".json", nil
}

// StagedName is the name InferenceX's launchers copy a point's result to
// (docs/run-directory.md):
//
//	<resultFilename>_<config>_conc<C>_gpus_<T>[_ctx_<P>_gen_<D>].json
//
// where config is the SA-Bench results directory's name, e.g.
// "sa-bench_isl_8192_osl_1024". It is PointFilename for the point's
// numbers (resultname.PointFilename): the same bytes InferenceX's point_filename gives, bounded the
// same way (only config is ever shortened). A name that cannot be formed
// because RESULT_FILENAME leaves config less room than its hash needs is a
// *NameTooLongError.
func StagedName(resultFilename, config string, p PointID) (string, error) {
	if err := p.Validate(); err != nil {
		return "", fmt.Errorf("result name: %w", err)
	}
	ctx, gen := "", ""
	if p.Disaggregated() {
		ctx, gen = strconv.Itoa(p.PrefillGPUs), strconv.Itoa(p.DecodeGPUs)
	}
	return resultname.PointFilename(resultFilename, config, strconv.Itoa(p.Concurrency), strconv.Itoa(p.GPUs), ctx, gen)
}

// NameTooLongError is a RESULT_FILENAME too long for a point's staged
// name (resultname's).
type NameTooLongError = resultname.NameTooLongError

// NameForm tells the two result name forms apart.
type NameForm int

const (
	// RawForm is SA-Bench's own name, results_concurrency_<C>_gpus_<T>[...].json.
	RawForm NameForm = iota + 1
	// StagedForm is a launcher's name, <prefix>_conc<C>_gpus_<T>[...].json.
	StagedForm
)

func (f NameForm) String() string {
	switch f {
	case RawForm:
		return "raw"
	case StagedForm:
		return "staged"
	}
	return "unknown"
}

// ParsedName is what ParseName recovers from a result file name.
type ParsedName struct {
	PointID
	Form NameForm
	// Prefix is everything before "_conc<C>" in a staged name: RESULT_FILENAME
	// and the SA-Bench config, or their bounded form. Empty for raw names.
	Prefix string
}

// ErrNotResultName is returned (wrapped) by ParseName for a name that is not
// a point result name at all, as opposed to one that is malformed.
var ErrNotResultName = errors.New("not a result name")

// The numeric tail is anchored at the end, so whatever the free prefix holds
// (underscores, digits, even "_gpus_") cannot shift the numbers.
var (
	rawNameRE    = regexp.MustCompile(`^results_concurrency_([0-9]+)_gpus_([0-9]+)(?:_ctx_([0-9]+)_gen_([0-9]+))?\.json$`)
	stagedNameRE = regexp.MustCompile(`^(.+)_conc([0-9]+)_gpus_([0-9]+)(?:_ctx_([0-9]+)_gen_([0-9]+))?\.json$`)
)

// ParseName recovers the point from a raw or staged result file name (a base
// name, not a path), bounded or not.
func ParseName(name string) (ParsedName, error) {
	if strings.ContainsAny(name, "/\x00") {
		return ParsedName{}, fmt.Errorf("result name %q: must be a base name without '/' or NUL", name)
	}
	var out ParsedName
	var nums []string
	if m := rawNameRE.FindStringSubmatch(name); m != nil {
		out.Form, nums = RawForm, m[1:]
	} else if m := stagedNameRE.FindStringSubmatch(name); m != nil {
		out.Form, out.Prefix, nums = StagedForm, m[1], m[2:]
	} else {
		return ParsedName{}, fmt.Errorf("result name %q: %w", name, ErrNotResultName)
	}
	fields := [...]string{"concurrency", "gpus", "ctx", "gen"}
	vals := [4]int{}
	for i, s := range nums {
		if s == "" {
			continue
		}
		v, err := parseCount(s)
		if err != nil {
			return ParsedName{}, fmt.Errorf("result name %q: %s: %w", name, fields[i], err)
		}
		vals[i] = v
	}
	out.PointID = PointID{Concurrency: vals[0], GPUs: vals[1], PrefillGPUs: vals[2], DecodeGPUs: vals[3]}
	if nums[2] != "" && (vals[2] == 0 || vals[3] == 0) {
		return ParsedName{}, fmt.Errorf("result name %q: ctx %d, gen %d: a disaggregated point needs at least one GPU on each side", name, vals[2], vals[3])
	}
	if err := out.PointID.Validate(); err != nil {
		return ParsedName{}, fmt.Errorf("result name %q: %w", name, err)
	}
	return out, nil
}

// parseCount accepts canonical decimal numbers only, so each point has
// exactly one name.
func parseCount(s string) (int, error) {
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero", s)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return v, nil
}
