package gsm8k

import (
	"fmt"
	"regexp"
	"strings"
)

// FilterFallback is what lm-eval's regex filter yields when nothing matches.
const FilterFallback = "[invalid]"

// Scorer applies a task's two filters and its exact_match metric. It is safe
// for concurrent use.
type Scorer struct {
	strict   *regexp.Regexp
	flexible *regexp.Regexp
	ignore   []pyReplacer
	lower    bool
}

// NewScorer compiles the task's filter and normalisation patterns.
func NewScorer(t Task) (*Scorer, error) {
	strict, err := regexp.Compile(t.StrictRegex)
	if err != nil {
		return nil, fmt.Errorf("compiling strict-match pattern %q: %w", t.StrictRegex, err)
	}
	flexible, err := regexp.Compile(t.FlexibleRegex)
	if err != nil {
		return nil, fmt.Errorf("compiling flexible-extract pattern %q: %w", t.FlexibleRegex, err)
	}
	s := &Scorer{strict: strict, flexible: flexible, lower: t.IgnoreCase}
	for _, p := range t.RegexesToIgnore {
		r, err := newPyReplacer(p)
		if err != nil {
			return nil, fmt.Errorf("compiling regexes_to_ignore entry %q: %w", p, err)
		}
		s.ignore = append(s.ignore, r)
	}
	return s, nil
}

// Filter runs the named filter ("strict-match" or "flexible-extract") on a
// response: regex with group_select -1, then take_first.
func (s *Scorer) Filter(name, resp string) string {
	switch name {
	case FilterStrict:
		return regexFilter(s.strict, -1, resp)
	case FilterFlexible:
		return regexFilter(s.flexible, -1, resp)
	}
	panic("gsm8k: unknown filter " + name)
}

// ExactMatch is lm-eval's exact_match (the HF evaluate port): every
// regexes_to_ignore pattern is removed from both strings in order, both are
// lower-cased when ignore_case is set, and the result is 1 when they are equal.
func (s *Scorer) ExactMatch(prediction, reference string) float64 {
	if s.Normalize(prediction) == s.Normalize(reference) {
		return 1
	}
	return 0
}

// Normalize is the string exact_match compares.
func (s *Scorer) Normalize(v string) string {
	for _, r := range s.ignore {
		v = r.remove(v)
	}
	if s.lower {
		v = strings.ToLower(v)
	}
	return v
}

// regexFilter is lm-eval's RegexFilter on one response: re.findall, pick
// match[group_select] with Python's negative indexing, take the first
// non-empty group when the pattern has several (findall returns a tuple),
// then strip. No match gives the fallback.
func regexFilter(re *regexp.Regexp, groupSelect int, resp string) string {
	matches := re.FindAllStringSubmatch(resp, -1)
	if len(matches) == 0 {
		return FilterFallback
	}
	i := groupSelect
	if i < 0 {
		i += len(matches)
	}
	if i < 0 || i >= len(matches) {
		// Python raises IndexError here; lm-eval would abort the run.
		return FilterFallback
	}
	m := matches[i]
	var picked string
	switch len(m) - 1 {
	case 0:
		picked = m[0]
	case 1:
		picked = m[1]
	default:
		for _, g := range m[1:] {
			if g != "" {
				picked = g
				break
			}
		}
	}
	return strings.TrimSpace(picked)
}

// pyReplacer is re.sub(pattern, "", s) with Python's meaning of a trailing
// "$": end of string or just before a final newline. Go's "$" (without the m
// flag) only matches at the very end, so a trailing "$" becomes "(\n?)\z" and
// the captured newline is put back.
type pyReplacer struct {
	re   *regexp.Regexp
	repl string
}

func newPyReplacer(pattern string) (pyReplacer, error) {
	goPattern, repl := pattern, ""
	if endsWithAnchor(pattern) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return pyReplacer{}, err
		}
		goPattern = pattern[:len(pattern)-1] + `(\n?)\z`
		repl = fmt.Sprintf("${%d}", re.NumSubexp()+1)
	}
	re, err := regexp.Compile(goPattern)
	if err != nil {
		return pyReplacer{}, err
	}
	return pyReplacer{re: re, repl: repl}, nil
}

func (r pyReplacer) remove(s string) string {
	if r.repl == "" {
		return r.re.ReplaceAllLiteralString(s, "")
	}
	return r.re.ReplaceAllString(s, r.repl)
}

// endsWithAnchor reports whether pattern ends in an unescaped "$".
func endsWithAnchor(pattern string) bool {
	if !strings.HasSuffix(pattern, "$") {
		return false
	}
	backslashes := 0
	for i := len(pattern) - 2; i >= 0 && pattern[i] == '\\'; i-- {
		backslashes++
	}
	return backslashes%2 == 0
}
