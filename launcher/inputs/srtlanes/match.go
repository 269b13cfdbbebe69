// Package srtlanes holds InferenceX's launch policy tables keyed by cluster
// id — the multi-node srt-slurm lanes (SRT_LANES), which multi-node
// requests run srtctl's native lane (NATIVE_SRT_LANES) and the single-node
// time bumps (SALLOC_TIME_BUMPS) — and the rules that read a row for one
// request: which requests it refuses, the setup script, mounts, recipe
// edits, eval metadata and job time limit it gives them. The rows are
// InferenceX's facts, each cited where it is read; the code is written
// here. It knows nothing of runners.yaml: package runners resolves a
// lane's volumes to host paths.
package srtlanes

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Request is what a Match reads of a launch: the workflow's variables
// (infx/launch/policy.py@3b798abf, Match.__call__ reads model_prefix,
// precision, framework, spec_decoding, is_agentic, is_multinode and
// model of the LaunchRequest) and what the rules besides a Match read
// (EVAL_ONLY, RUN_EVAL, CONC, SALLOC_TIME_LIMIT).
type Request struct {
	ModelPrefix, Precision, Framework string // MODEL_PREFIX, PRECISION, FRAMEWORK
	SpecDecoding                      string // SPEC_DECODING
	Model                             string // MODEL
	Agentic                           bool   // IS_AGENTIC=1
	MultiNode                         bool   // IS_MULTINODE=true
	RunEval, EvalOnly                 bool   // RUN_EVAL, EVAL_ONLY
	// Conc is CONC (0 unset): the single-node time bump's threshold reads it.
	Conc int
	// SallocTimeLimit is SALLOC_TIME_LIMIT in minutes (0 unset).
	SallocTimeLimit int
}

// Match is a predicate over a Request: every field set must hold, an
// unset one (nil, "") matches anything (policy.py@3b798abf, Match).
type Match struct {
	Prefixes, Precisions, Frameworks, Specs []string // one of them (MODEL_PREFIX, ...)
	Agentic, MultiNode                      *bool
	// ModelGlob is fnmatch's case-sensitive pattern over MODEL.
	ModelGlob string
}

// Always is the Match of every request (Match() in the table).
var Always = Match{}

// Matches says whether r is a request m selects.
func (m Match) Matches(r Request) bool {
	in := func(set []string, v string) bool { return set == nil || slices.Contains(set, v) }
	return in(m.Prefixes, r.ModelPrefix) && in(m.Precisions, r.Precision) &&
		in(m.Frameworks, r.Framework) && in(m.Specs, r.SpecDecoding) &&
		(m.Agentic == nil || *m.Agentic == r.Agentic) &&
		(m.MultiNode == nil || *m.MultiNode == r.MultiNode) &&
		(m.ModelGlob == "" || FnmatchCase(m.ModelGlob, r.Model))
}

// anyOf is the table's any_of: a set of values, one of which must match.
func anyOf(v ...string) []string { return v }

func yes() *bool { t := true; return &t }
func no() *bool  { f := false; return &f }

var (
	globMu    sync.Mutex
	globCache = map[string]*regexp.Regexp{}
)

// FnmatchCase is Python's fnmatch.fnmatchcase: the whole of name matches
// pattern, where * is any run of characters (a '/' too), ? one character,
// [seq] one of seq and [!seq] one not in it; an unclosed '[' is itself.
func FnmatchCase(pattern, name string) bool {
	globMu.Lock()
	re, ok := globCache[pattern]
	if !ok {
		re = regexp.MustCompile(translate(pattern))
		globCache[pattern] = re
	}
	globMu.Unlock()
	return re.MatchString(name)
}

// translate turns an fnmatch pattern into an anchored regular expression
// (the rules of Python's fnmatch.translate, written here).
func translate(pat string) string {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i + 1
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`)
				continue
			}
			body := rs[i+1 : j]
			i = j
			var cls strings.Builder
			if len(body) > 0 && body[0] == '!' {
				cls.WriteString("^")
				body = body[1:]
			}
			for _, r := range body {
				if r == '\\' || r == ']' || r == '[' || r == '^' {
					cls.WriteRune('\\')
				}
				cls.WriteRune(r)
			}
			b.WriteString("[" + cls.String() + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`\z`)
	return b.String()
}
