// Package shellwords turns a command line a recipe gives into argv without
// a shell, refusing by name whatever would need one.
package shellwords

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ErrNeedsShell is matched (errors.Is) by Split's error for a command that
// parses but needs a shell: a sequence, a pipe, a redirection, a variable.
// The planner runs such a command as srtctl does (bash -l) from a script
// file written verbatim, so the plan still holds an argv.
var ErrNeedsShell = errors.New("needs a shell")

type shellError struct{ msg string }

func (e *shellError) Error() string        { return e.msg }
func (e *shellError) Is(target error) bool { return target == ErrNeedsShell }

func needsShell(format string, args ...any) error {
	return &shellError{fmt.Sprintf(format, args...)}
}

// Split splits a command line (a recipe's benchmark.command) into argv, once, with
// mvdan.cc/sh's bash parser. A real parser rather than a word lexer (such
// as github.com/google/shlex) because it knows the whole grammar: a command
// that needs a shell — a pipe, a list, a redirection, a substitution, a
// variable — is recognised and refused by name instead of being cut into
// words that mean something else. Only literal words (quoted or not) pass.
func Split(cmd string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, fmt.Errorf("not a shell command: %w", err)
	}
	if len(f.Stmts) != 1 {
		return nil, needsShell("holds %d commands; write one command (put a sequence in a script)", len(f.Stmts))
	}
	st := f.Stmts[0]
	switch {
	case st.Background || st.Coprocess || st.Negated:
		return nil, needsShell("uses &, coproc or !; write a plain command (put shell logic in a script)")
	case len(st.Redirs) > 0:
		return nil, needsShell("redirects (%s); the benchmark's output already goes to its log", redirOp(st.Redirs[0]))
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || call == nil {
		return nil, needsShell("is a shell construct (%T), not a plain command; put it in a script", st.Cmd)
	}
	if len(call.Assigns) > 0 {
		return nil, needsShell("sets %s= before the command; use benchmark.env", call.Assigns[0].Name.Value)
	}
	argv := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		s, ok := literalWord(w)
		if !ok {
			return nil, needsShell("word %q needs a shell to expand (a variable, substitution or glob); pass values through benchmark.env", wordText(cmd, w))
		}
		argv = append(argv, s)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("is empty")
	}
	return argv, nil
}

func redirOp(r *syntax.Redirect) string { return r.Op.String() }

func wordText(src string, w *syntax.Word) string {
	from, to := int(w.Pos().Offset()), int(w.End().Offset())
	if from < 0 || to > len(src) || from > to {
		return "?"
	}
	return src[from:to]
}

// literalWord is w's value when it has no expansion: plain, single-quoted
// and double-quoted literal parts only, and no glob or brace characters
// outside quotes.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[{~") {
				return "", false
			}
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescapeLit drops the backslashes of an unquoted literal (a\ b is "a b").
func unescapeLit(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble resolves the backslashes bash honours inside "…".
func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
