package plan

import (
	"strconv"
	"strings"
)

// argvWidth is the widest line render writes an argv on; a longer argv
// continues on the next lines ("\" at each break), a flag kept with its
// value, so an engine's 600-column command reads as a list of options.
const argvWidth = 100

// WrapArgv is QuoteArgv broken into lines of at most width columns
// counting indent (a group longer than that stays whole): each
// continuation line starts with indent, and the first is expected after a
// label as wide as indent. Breaks fall between words, never between a
// flag and its value.
func WrapArgv(argv []string, width int, indent string) string {
	one := QuoteArgv(argv)
	if len(indent)+len(one) <= width {
		return one
	}
	// Groups: a word, or a flag with the value that follows it.
	var groups []string
	for i := 0; i < len(argv); i++ {
		g := quoteWord(argv[i])
		if strings.HasPrefix(argv[i], "-") && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			i++
			g += " " + quoteWord(argv[i])
		}
		groups = append(groups, g)
	}
	var lines []string
	line := ""
	for _, g := range groups {
		switch {
		case line == "":
			line = g
		case len(indent)+len(line)+1+len(g)+2 > width: // room for " \"
			lines = append(lines, line)
			line = g
		default:
			line += " " + g
		}
	}
	lines = append(lines, line)
	return strings.Join(lines, " \\\n"+indent)
}

func quoteWord(a string) string {
	if a == "" || strings.ContainsAny(a, " \t\n\r\"'\\$`") {
		return strconv.Quote(a)
	}
	return a
}
