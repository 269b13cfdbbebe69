// Package resultname is InferenceX's rule for the names of staged result
// files (inferencex-e2e/infx/results/result_filename.py, stored id
// 67435549678): a component bounded with a hash of itself (Compact), the
// row's RESULT_FILENAME (ResultStem) and one point's file name
// (PointFilename). Names only: package results stages the files.
package resultname

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// compactHashLen is how many hex digits of sha256(value) replace the cut
// end of an over-long name component: InferenceX's result_filename.py
// (inferencex-e2e/infx/results/result_filename.py, stored id 67435549678,
// compact) uses 20, after a "-".
const compactHashLen = 20

// stemBudget is the bound result_stem puts on RESULT_FILENAME_BASE plus
// its "_recipe-<fingerprint>": room left for the point suffixes,
// power_validation_, .json and the atomic .tmp.
const stemBudget = 120

// Compact bounds one file-name component to budget bytes, as InferenceX's
// result_filename.compact does (inferencex-e2e/infx/results/result_filename.py,
// stored id 67435549678): a value that fits is returned unchanged; a longer
// one keeps its first budget-21 bytes (a character cut in two is dropped)
// followed by "-" and the first 20 hex digits of sha256(value). An empty
// value, or one holding '/', '\\', CR, LF or NUL, is refused; so is a long
// value when budget leaves no room for the hash suffix.
func Compact(value string, budget int) (string, error) {
	if err := CheckComponent("name component", value); err != nil {
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
	if err := CheckComponent("result filename", stem); err != nil {
		return "", err
	}
	if err := CheckComponent("config", config); err != nil {
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

// CheckComponent rejects what cannot be part of one file name. Backslash and
// line breaks are refused too, as InferenceX's result_filename.py does.
func CheckComponent(field, value string) error {
	if value == "" {
		return fmt.Errorf("%s: must not be empty", field)
	}
	if i := strings.IndexAny(value, "/\x00\\\r\n"); i >= 0 {
		return fmt.Errorf("%s %q: must not contain %q", field, value, value[i])
	}
	return nil
}
