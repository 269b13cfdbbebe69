package report

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Enabled reports whether the process runs as a GitHub Actions step.
func Enabled(getenv func(string) string) bool {
	return getenv("GITHUB_ACTIONS") == "true"
}

// Group starts a collapsible group of log lines in the Actions log.
func Group(w io.Writer, title string) {
	_, _ = io.WriteString(w, "::group::"+escapeData(title)+"\n") // best effort, like the log it goes to
}

// EndGroup ends the group Group started.
func EndGroup(w io.Writer) {
	_, _ = io.WriteString(w, "::endgroup::\n")
}

// Error writes an error annotation; title may be empty.
func Error(w io.Writer, title, msg string) { command(w, "error", title, msg) }

// Warning writes a warning annotation; title may be empty.
func Warning(w io.Writer, title, msg string) { command(w, "warning", title, msg) }

// Notice writes a notice annotation; title may be empty.
func Notice(w io.Writer, title, msg string) { command(w, "notice", title, msg) }

// command writes one workflow command in a single write, so that lines of
// other writers sharing w cannot split it.
func command(w io.Writer, name, title, msg string) {
	line := "::" + name
	if title != "" {
		line += " title=" + escapeProperty(title)
	}
	_, _ = io.WriteString(w, line+"::"+escapeData(msg)+"\n")
}

// escapeData is @actions/core's escapeData: a message cannot end the
// command line early, so a newline in it cannot start a new command.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty is @actions/core's escapeProperty: escapeData plus the
// separators of the property list.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// Annotate writes the run's failure as an error annotation (the class and
// name as title, the message and first error as text); nothing when the
// run succeeded.
func (s Summary) Annotate(w io.Writer) {
	if !s.failed() {
		return
	}
	title := firstNonEmpty(s.Name, "slurmbench run") + " " + outcomeWord(s.Outcome)
	if s.Class != "" {
		title += " (" + textLine(s.Class) + ")"
	}
	var parts []string
	if s.Message != "" {
		parts = append(parts, clean(s.Message))
	}
	if s.FirstError != "" {
		parts = append(parts, "first error: "+clean(s.FirstError))
	}
	if len(parts) == 0 {
		parts = append(parts, s.failureLine())
	}
	Error(w, title, strings.Join(parts, "\n"))
}

// MaxStepSummaryBytes is GitHub's limit on one step's summary file; a
// larger summary is dropped by GitHub with an error annotation.
const MaxStepSummaryBytes = 1 << 20

// newDelimiter returns a heredoc delimiter; a variable so a test can force a
// collision with the value.
var newDelimiter = func() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("report: crypto/rand: " + err.Error()) // never fails on supported platforms
	}
	return "ghadelimiter_" + hex.EncodeToString(b[:])
}

// AppendOutputs appends kv to the $GITHUB_OUTPUT file at path, keys sorted:
// a single-line value as "key=value", any other with the runner's heredoc
// form ("key<<delimiter", the value, the delimiter), where the delimiter is
// random and occurs in neither key nor value. The runner reads lines, so a
// "\r\n" or lone "\r" inside a multi-line value comes back as "\n". Keys
// that are empty or hold "=", "<<" or a line break are refused, and nothing
// is written then.
func AppendOutputs(path string, kv map[string]string) error {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		if k == "" || strings.ContainsAny(k, "=\r\n") || strings.Contains(k, "<<") {
			return fmt.Errorf("GitHub output name %q: must be non-empty without '=', '<<' or line breaks", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := kv[k]
		if !strings.ContainsAny(v, "\r\n") {
			b.WriteString(k + "=" + v + "\n")
			continue
		}
		delim := newDelimiter()
		for tries := 0; strings.Contains(v, delim) || strings.Contains(k, delim); tries++ {
			if tries == 10 {
				return fmt.Errorf("GitHub output %q: no heredoc delimiter that its value does not contain", k)
			}
			delim = newDelimiter()
		}
		b.WriteString(k + "<<" + delim + "\n" + v + "\n" + delim + "\n")
	}
	if err := appendFile(path, b.String()); err != nil {
		return fmt.Errorf("writing step outputs: %w", err)
	}
	return nil
}

// AppendSummary appends markdown to the $GITHUB_STEP_SUMMARY file at path,
// ending it with a newline so that a later append starts a new block.
// A summary that would take the file past MaxStepSummaryBytes is refused.
func AppendSummary(path, markdown string) error {
	if !strings.HasSuffix(markdown, "\n") {
		markdown += "\n"
	}
	if path != "" {
		if fi, err := os.Stat(path); err == nil && fi.Size()+int64(len(markdown)) > MaxStepSummaryBytes {
			return fmt.Errorf("writing step summary: %d bytes would exceed GitHub's %d-byte limit", fi.Size()+int64(len(markdown)), MaxStepSummaryBytes)
		}
	}
	if err := appendFile(path, markdown); err != nil {
		return fmt.Errorf("writing step summary: %w", err)
	}
	return nil
}

// appendFile adds data to the end of path in one write: with O_APPEND the
// other steps' and processes' appends cannot interleave inside it.
func appendFile(path, data string) error {
	if path == "" {
		return errors.New("no file path (is the variable set?)")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(data))
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}
