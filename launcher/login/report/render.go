package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slurmbench/slurmbench/launcher/diagnose"
)

// columns are the point table's headings, shared by Markdown and Text;
// goodputColumn goes before Valid when a point has a goodput.
var columns = []string{
	"Point", "Conc", "GPUs (P+D)", "Completed", "Total tok/s/GPU", "Output tok/s/GPU",
	"Median TTFT (ms)", "Median TPOT (ms)", "Median E2E (s)", "Valid",
}

const goodputColumn = "Goodput (req/s)"

// hasGoodput says whether the table shows the goodput column.
func (s Summary) hasGoodput() bool {
	for _, r := range s.Points {
		if r.Goodput != nil {
			return true
		}
	}
	return false
}

// tableColumns are the headings of s's point table.
func (s Summary) tableColumns() []string {
	if !s.hasGoodput() {
		return columns
	}
	cols := slices.Clone(columns[:len(columns)-1])
	return append(cols, goodputColumn, columns[len(columns)-1])
}

// Markdown renders the summary as a GitHub step summary section: a heading
// with the run's name and outcome, the point table, the gsm8k line, where
// the run lives, and on failure its class, first error and message.
func (s Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s %s: %s\n\n", outcomeMark(s.Outcome), mdText(firstNonEmpty(s.Name, "slurmbench run")), mdText(outcomeWord(s.Outcome)))

	if len(s.Points) > 0 {
		cols := s.tableColumns()
		b.WriteString("| " + strings.Join(cols, " | ") + " |\n")
		b.WriteString("|:--|" + strings.Repeat("--:|", len(cols)-2) + ":--|\n")
		for _, r := range s.Points {
			cells := append([]string{mdText(r.Label)}, numberCells(r, "—", s.hasGoodput())...)
			valid := "✅"
			if !r.Valid {
				valid = "❌ " + mdText(firstNonEmpty(r.Note, "invalid"))
			} else if r.Note != "" {
				valid += " " + mdText(r.Note)
			}
			cells = append(cells, valid)
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		b.WriteString("\n")
	} else if s.Custom == nil && len(s.Artifacts) == 0 {
		b.WriteString("_No benchmark points._\n\n")
	}
	for _, line := range append(s.customLines(), s.artifactLines()...) {
		b.WriteString("- " + mdText(line) + "\n")
	}
	for _, line := range s.powerLines() {
		b.WriteString("- " + mdText(line) + "\n")
	}

	if line := s.evalLine(); line != "" {
		b.WriteString("**gsm8k:** " + mdText(line) + "\n\n")
	}

	if s.JobID != "" {
		b.WriteString("- **Job:** " + codeSpan(s.JobID) + "\n")
	}
	if s.RunID != "" {
		b.WriteString("- **Run:** " + codeSpan(s.RunID) + "\n")
	}
	if s.RunDir != "" {
		b.WriteString("- **Run dir:** " + codeSpan(s.RunDir) + "\n")
	}
	if s.Image != "" || s.ImageDigest != "" {
		img := codeSpan(firstNonEmpty(s.Image, "?"))
		if s.ImageDigest != "" {
			img += " @ " + codeSpan(s.ImageDigest)
		}
		b.WriteString("- **Image:** " + img + "\n")
	}

	if len(s.StagedFiles) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Staged files (%d)</summary>\n\n", len(s.StagedFiles))
		for _, f := range s.StagedFiles {
			b.WriteString("- " + codeSpan(f) + "\n")
		}
		b.WriteString("\n</details>\n")
	}

	if s.failed() {
		b.WriteString("\n**Failure:** " + mdText(s.failureLine()) + "\n")
		if msg := clean(s.Message); msg != "" {
			b.WriteString("\n")
			for _, line := range strings.Split(msg, "\n") {
				b.WriteString("> " + mdText(line) + "\n")
			}
		}
		if fe := clean(s.FirstError); fe != "" {
			fence := strings.Repeat("`", max(3, longestRun(fe, '`')+1))
			b.WriteString("\nFirst error:\n\n" + fence + "text\n" + fe + "\n" + fence + "\n")
		}
		if rl := clean(strings.Join(s.RuntimeLog, "\n")); rl != "" {
			fence := strings.Repeat("`", max(3, longestRun(rl, '`')+1))
			b.WriteString("\nruntime log:\n\n" + fence + "text\n" + rl + "\n" + fence + "\n")
		}
	}
	return b.String()
}

// Text renders the same numbers as a fixed-width table for a terminal,
// without Markdown: the one "slurmbench run" prints at the end.
func (s Summary) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", textLine(firstNonEmpty(s.Name, "slurmbench run")), outcomeWord(s.Outcome))
	var where []string
	if s.JobID != "" {
		where = append(where, "job "+textLine(s.JobID))
	}
	if s.RunID != "" {
		where = append(where, "run "+textLine(s.RunID))
	}
	if s.RunDir != "" {
		where = append(where, "dir "+textLine(s.RunDir))
	}
	if len(where) > 0 {
		b.WriteString(strings.Join(where, ", ") + "\n")
	}
	if s.Image != "" || s.ImageDigest != "" {
		img := "image " + textLine(firstNonEmpty(s.Image, "?"))
		if s.ImageDigest != "" {
			img += " @ " + textLine(s.ImageDigest)
		}
		b.WriteString(img + "\n")
	}
	b.WriteString("\n")

	if len(s.Points) > 0 {
		rows := [][]string{s.tableColumns()}
		for _, r := range s.Points {
			cells := append([]string{textLine(r.Label)}, numberCells(r, "-", s.hasGoodput())...)
			valid := "yes"
			if !r.Valid {
				valid = "no: " + textLine(firstNonEmpty(r.Note, "invalid"))
			} else if r.Note != "" {
				valid += ": " + textLine(r.Note)
			}
			rows = append(rows, append(cells, valid))
		}
		writeTable(&b, rows)
	} else if s.Custom == nil && len(s.Artifacts) == 0 {
		b.WriteString("no benchmark points\n")
	}
	for _, line := range append(s.customLines(), s.artifactLines()...) {
		b.WriteString(textLine(line) + "\n")
	}
	for _, line := range s.powerLines() {
		b.WriteString(textLine(line) + "\n")
	}

	if line := s.evalLine(); line != "" {
		b.WriteString("\ngsm8k: " + line + "\n")
	}
	if s.failed() {
		b.WriteString("\nfailure: " + s.failureLine() + "\n")
		if msg := clean(s.Message); msg != "" {
			b.WriteString("message:" + indent(msg) + "\n")
		}
		if fe := clean(s.FirstError); fe != "" {
			b.WriteString("first error:" + indent(fe) + "\n")
		}
		if rl := clean(strings.Join(s.RuntimeLog, "\n")); rl != "" {
			b.WriteString("runtime log:" + indent(rl) + "\n")
		}
	}
	return b.String()
}

// writeTable pads every column to its widest cell: the first (the point's
// name) and the last (validity, which may carry a note) left-aligned, the
// numbers right-aligned. The last column is not padded.
func writeTable(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	last := len(rows[0]) - 1
	for _, row := range rows {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == last:
				b.WriteString(c)
			case i == 0:
				b.WriteString(c + pad + "  ")
			default:
				b.WriteString(pad + c + "  ")
			}
		}
		b.WriteString("\n")
	}
}

// numberCells are the columns between the label and Valid (with the
// goodput column when goodput is set).
func numberCells(r PointRow, none string, goodput bool) []string {
	gpus := strconv.Itoa(r.GPUs)
	if r.PrefillGPUs > 0 || r.DecodeGPUs > 0 {
		gpus = fmt.Sprintf("%d (%d+%d)", r.GPUs, r.PrefillGPUs, r.DecodeGPUs)
	}
	cells := []string{strconv.Itoa(r.Concurrency), gpus}
	if !r.HasResult {
		for range len(columns) - len(cells) - 2 { // all but label, the two above and Valid
			cells = append(cells, none)
		}
		if goodput {
			cells = append(cells, none)
		}
		return cells
	}
	cells = append(cells,
		fmt.Sprintf("%d/%d", r.Completed, r.NumPrompts),
		fixed(r.TputPerGPU, 1),
		fixed(r.OutputPerGPU, 1),
		fixed(r.MedianTTFTms, 2),
		fixed(r.MedianTPOTms, 2),
		fixed(r.MedianE2Ems/1000, 3),
	)
	if goodput {
		g := none
		if r.Goodput != nil {
			g = fixed(*r.Goodput, 2)
		}
		cells = append(cells, g)
	}
	return cells
}

// evalLine is the gsm8k result in words, "" when there is nothing to say.
func (s Summary) evalLine() string {
	ev := s.GSM8K
	if ev == nil {
		if s.EvalExpected {
			return "no result"
		}
		return ""
	}
	if len(s.GSM8KBatch) > 0 {
		parts := make([]string, len(s.GSM8KBatch))
		for i, r := range s.GSM8KBatch {
			parts[i] = fmt.Sprintf("c%d %s", r.Concurrency, evalText(&r))
		}
		return strings.Join(parts, "; ")
	}
	return evalText(ev)
}

func evalText(ev *EvalRow) string {
	return fmt.Sprintf("strict-match %s, flexible-extract %s, n=%d: %s",
		withStderr(ev.Strict, ev.StrictStderr), withStderr(ev.Flexible, ev.FlexStderr), ev.N, ev.Verdict)
}

func withStderr(v, se *float64) string {
	s := score4(v)
	if v != nil && se != nil {
		s += " ± " + score4(se)
	}
	return s
}

func score4(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fixed(*v, 4)
}

func fixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func (s Summary) failed() bool {
	return s.Outcome != OutcomeSucceeded && (s.Outcome != "" || s.Class != "" || s.Message != "" || s.FirstError != "" || s.ExitCode != 0)
}

// failureLine is class, place and exit code of a failure in one line.
func (s Summary) failureLine() string {
	parts := []string{"class " + textLine(firstNonEmpty(s.Class, string(diagnose.Unknown)))}
	if s.Phase != "" {
		parts = append(parts, "phase "+textLine(s.Phase))
	}
	if s.Process != "" {
		parts = append(parts, "process "+textLine(s.Process))
	}
	if s.ExitCode != 0 {
		parts = append(parts, "exit code "+strconv.Itoa(s.ExitCode))
	}
	return strings.Join(parts, ", ")
}

func outcomeMark(o string) string {
	switch o {
	case OutcomeSucceeded:
		return "✅"
	case "":
		return "❔"
	default:
		return "❌"
	}
}

func outcomeWord(o string) string { return firstNonEmpty(textLine(o), "outcome unknown") }

// ansiEscape matches terminal escape sequences (CSI colours, OSC titles)
// that engine logs carry into a first error line.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;:?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)

// clean drops terminal escapes and control characters (stray carriage
// returns) except newlines and tabs, and trims blank edges.
func clean(s string) string {
	s = ansiEscape.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case unicode.IsControl(r), r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
	return strings.Trim(s, " \n")
}

// textLine is clean on one line.
func textLine(s string) string { return strings.ReplaceAll(clean(s), "\n", " ") }

// indent follows a "label:": the text on the same line, or a multi-line
// text below it, indented.
func indent(s string) string {
	if !strings.Contains(s, "\n") {
		return " " + s
	}
	return "\n  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// mdText makes s literal Markdown text on one line, safe inside a table
// cell or at the start of a line. CommonMark allows a backslash before any
// ASCII punctuation; it is put before every character with inline meaning
// ("|" too, which GitHub splits table cells on), and before what would
// start a block (heading, list, quote, numbered item) at the beginning.
func mdText(s string) string {
	s = strings.TrimSpace(textLine(s)) // leading spaces would start a code block
	var b strings.Builder
	digits := true // only digits so far: "1." or "1)" would start a list
	for i, r := range s {
		switch {
		case strings.ContainsRune("\\`*_[]<>|~&", r),
			i == 0 && strings.ContainsRune("#+-=", r),
			i > 0 && digits && (r == '.' || r == ')'):
			b.WriteByte('\\')
		}
		digits = digits && r >= '0' && r <= '9'
		b.WriteRune(r)
	}
	return b.String()
}

// codeSpan puts s in a code span whose fence is longer than any backtick
// run inside it (CommonMark), padded when s starts or ends with a backtick.
func codeSpan(s string) string {
	s = textLine(s)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func longestRun(s string, c rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// EvalLine is the gsm8k result in words ("" when there is none), as the
// text summary says it.
func (s Summary) EvalLine() string { return s.evalLine() }
