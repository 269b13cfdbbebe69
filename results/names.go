package results

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxStagedNameLen is the longest staged result name. InferenceX's
// process_result.py writes power_validation_<name> next to each result
// (through an atomic ".tmp"), and that name must fit in NAME_MAX = 255 bytes
// (docs/run-directory.md).
const MaxStagedNameLen = 255 - len("power_validation_") - len(".tmp")

// compactHashLen is how many hex digits of sha256(value) replace the cut
// end of an over-long name component: InferenceX's result_filename.py
// (inferencex-e2e/infx/results/result_filename.py, stored id 67435549678,
// compact) uses 20, after a "-".
const compactHashLen = 20

// stemBudget is the bound result_stem puts on RESULT_FILENAME_BASE plus
// its "_recipe-<fingerprint>": room left for the point suffixes,
// power_validation_, .json and the atomic .tmp.
const stemBudget = 120

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
// numbers: the same bytes InferenceX's point_filename gives, bounded the
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
	return PointFilename(resultFilename, config, strconv.Itoa(p.Concurrency), strconv.Itoa(p.GPUs), ctx, gen)
}

// Compact bounds one file-name component to budget bytes, as InferenceX's
// result_filename.compact does (inferencex-e2e/infx/results/result_filename.py,
// stored id 67435549678): a value that fits is returned unchanged; a longer
// one keeps its first budget-21 bytes (a character cut in two is dropped)
// followed by "-" and the first 20 hex digits of sha256(value). An empty
// value, or one holding '/', '\\', CR, LF or NUL, is refused; so is a long
// value when budget leaves no room for the hash suffix.
func Compact(value string, budget int) (string, error) {
	if err := checkComponent("name component", value); err != nil {
		return "", err
	}
	if len(value) <= budget {
		return value, nil
	}
	sum := sha256.Sum256([]byte(value))
	suffix := "-" + hex.EncodeToString(sum[:])[:compactHashLen]
	if budget < len(suffix) {
		return "", &CompactError{Len: len(value), Budget: budget}
	}
	return validPrefix(value, budget-len(suffix)) + suffix, nil
}

// validPrefix is value's first n bytes without a trailing partial UTF-8
// character (Python's decode(errors="ignore") of a cut encoding).
func validPrefix(value string, n int) string {
	cut := value[:n]
	for len(cut) > 0 {
		r, size := utf8.DecodeLastRuneInString(cut)
		if r != utf8.RuneError || size > 1 {
			break
		}
		cut = cut[:len(cut)-1]
	}
	return strings.ToValidUTF8(cut, "")
}

// CompactError is a component too long for a budget that leaves no room
// for its hash suffix (result_filename.py: "Result suffix leaves no
// filename identity budget").
type CompactError struct{ Len, Budget int }

func (e *CompactError) Error() string {
	return fmt.Sprintf("a %d-byte component must be shortened to %d bytes, less than its %d-byte hash suffix", e.Len, e.Budget, compactHashLen+1)
}

// ResultStem is InferenceX's RESULT_FILENAME for a row (result_stem in
// result_filename.py, which the workflow runs as `python3 -m
// infx.results.result_filename`): RESULT_FILENAME_BASE, plus
// "_recipe-<fingerprint>" when the row has a recipe fingerprint, bounded to
// 120 bytes by Compact.
func ResultStem(base, fingerprint string) (string, error) {
	value := base
	if fingerprint != "" {
		value += "_recipe-" + fingerprint
	}
	s, err := Compact(value, stemBudget)
	if err != nil {
		return "", fmt.Errorf("result stem: %w", err)
	}
	return s, nil
}

// PointFilename is InferenceX's point_filename (result_filename.py): the
// staged name of one point,
//
//	<stem>_<config>_conc<conc>_gpus_<gpus>[_ctx_<ctx>_gen_<gen>].json
//
// conc and gpus (and ctx and gen when either is given) must be non-empty
// ASCII decimal strings; the ctx/gen part is written when ctx is
// non-empty. config is Compact-ed to what is left of 255 bytes once
// "power_validation_" + stem + "_" + tail + ".json.tmp" is counted (tail
// being the numeric part, "_conc…"): the stem and the numbers are never
// cut, so the workflow's ${RESULT_FILENAME}_*.json and GPU-count parsing
// keep working.
func PointFilename(stem, config, conc, gpus, ctx, gen string) (string, error) {
	if err := checkComponent("result filename", stem); err != nil {
		return "", err
	}
	if err := checkComponent("config", config); err != nil {
		return "", err
	}
	numbers := []string{conc, gpus}
	if ctx != "" || gen != "" {
		numbers = append(numbers, ctx, gen)
	}
	for _, n := range numbers {
		if !asciiDecimal(n) {
			return "", fmt.Errorf("result name: point numbers conc %q, gpus %q, ctx %q, gen %q: each must be ASCII digits", conc, gpus, ctx, gen)
		}
	}
	tail := "_conc" + conc + "_gpus_" + gpus
	if ctx != "" {
		tail += "_ctx_" + ctx + "_gen_" + gen
	}
	budget := 255 - len("power_validation_"+stem+"_"+tail+".json.tmp")
	short, err := Compact(config, budget)
	var ce *CompactError
	if errors.As(err, &ce) {
		// The most stem this config and tail leave room for.
		room := min(len(config), compactHashLen+1)
		return "", &NameTooLongError{ResultFilenameLen: len(stem), MaxResultFilenameLen: len(stem) + budget - room, Tail: tail + ".json"}
	}
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	return stem + "_" + short + tail + ".json", nil
}

// asciiDecimal is Python's s.isascii() and s.isdecimal(): non-empty, digits only.
func asciiDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// NameTooLongError is a RESULT_FILENAME too long for a point's staged
// name: what it leaves of 255 bytes (with power_validation_ in front and
// .json.tmp behind) is too little for the config part even shortened to
// its hash, and RESULT_FILENAME itself is never cut (the workflow globs
// ${RESULT_FILENAME}_*.json).
type NameTooLongError struct {
	ResultFilenameLen    int
	MaxResultFilenameLen int // for this point's tail and config
	Tail                 string
}

func (e *NameTooLongError) Error() string {
	return fmt.Sprintf("result filename is %d bytes, longer than the %d bytes a staged name leaves it for point %s (power_validation_<name>.tmp must fit in 255 bytes, and RESULT_FILENAME is never cut: the workflow globs ${RESULT_FILENAME}_*.json); shorten it by %d bytes",
		e.ResultFilenameLen, e.MaxResultFilenameLen, strings.TrimSuffix(strings.TrimPrefix(e.Tail, "_"), ".json"), e.ResultFilenameLen-e.MaxResultFilenameLen)
}

// checkComponent rejects what cannot be part of one file name. Backslash and
// line breaks are refused too, as InferenceX's result_filename.py does.
func checkComponent(field, value string) error {
	if value == "" {
		return fmt.Errorf("%s: must not be empty", field)
	}
	if i := strings.IndexAny(value, "/\x00\\\r\n"); i >= 0 {
		return fmt.Errorf("%s %q: must not contain %q", field, value, value[i])
	}
	return nil
}

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
