package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// urfave/cli v2 stops reading flags at the first positional argument, so
// "slurmbench status 4242 --json" would see "--json" as a second JOBID.
// prepareArgs finds the command an argv names and moves that command's
// flags (with their values) in front of its positional arguments; "--"
// still ends the flags. It also refuses an unknown command or subcommand
// with a suggestion, instead of urfave's "No help topic" and exit 3.

// prepareArgs returns the argv to hand to app.Run, or a config error.
func prepareArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	out := []string{args[0]}
	i := 1
	// Global flags (--help, --version) come before the command.
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		out = append(out, args[i])
		i++
	}
	if i >= len(args) || args[i] == "--" {
		return append(out, args[i:]...), nil
	}
	cmds := app.Commands
	var path []string // command names so far, for messages
	var cmd *cli.Command
	for i < len(args) {
		name := args[i]
		if name == "help" || name == "h" {
			// "help CMD [SUB]" is "CMD [SUB] --help", which urfave/cli
			// only does one level deep; the names must exist.
			names, err := findCommand(cmds, args[i+1:])
			if err != nil || len(names) == 0 {
				return append(out, args[i:]...), err
			}
			return append(append(append(out, path...), names...), "--help"), nil
		}
		next := lookupCommand(cmds, name)
		if next == nil {
			return nil, unknownCommand(cmds, path, name)
		}
		out = append(out, name)
		path = append(path, name)
		cmd = next
		i++
		if len(cmd.Subcommands) == 0 || i >= len(args) || strings.HasPrefix(args[i], "-") {
			break
		}
		cmds = cmd.Subcommands
	}
	if cmd.SkipFlagParsing {
		return append(out, args[i:]...), nil
	}
	return append(out, interleave(cmd.Flags, args[i:])...), nil
}

// findCommand returns the leading names of args (after "help") that name
// a command and its subcommands, refusing one that names nothing.
func findCommand(cmds []*cli.Command, args []string) ([]string, error) {
	var path []string
	for _, name := range args {
		if strings.HasPrefix(name, "-") || cmds == nil {
			break
		}
		cmd := lookupCommand(cmds, name)
		if cmd == nil {
			return nil, unknownCommand(cmds, path, name)
		}
		path = append(path, name)
		cmds = cmd.Subcommands
	}
	return path, nil
}

func lookupCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// unknownCommand is the config error for a command name that does not
// exist, with the closest existing name when one is close.
func unknownCommand(cmds []*cli.Command, path []string, name string) error {
	where := strings.Join(append([]string{"slurmbench"}, path...), " ")
	msg := fmt.Sprintf("unknown command %q", strings.Join(append(path, name), " "))
	if s := suggest(cmds, name); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", strings.Join(append(path, s), " "))
	}
	return configErrorf("%s ('%s --help' lists the commands)", msg, where)
}

// suggest is the command name closest to name: a prefix match, else the
// smallest edit distance within a third of the name's length (at least 2).
func suggest(cmds []*cli.Command, name string) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if len(name) >= 2 && strings.HasPrefix(n, name) {
			return n
		}
	}
	best, bestDist := "", max(2, len(name)/3)+1
	for _, n := range names {
		if d := editDistance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is Levenshtein's distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// interleave puts flags (and the values of flags that take one) before the
// positional arguments, keeping each group's order. Everything after "--"
// is positional; "-" alone is a positional (stdin). An unknown flag is
// kept as one token for the parser to refuse.
func interleave(flags []cli.Flag, args []string) []string {
	takesValue := map[string]bool{"help": false, "h": false}
	for _, f := range flags {
		tv := true
		if df, ok := f.(cli.DocGenerationFlag); ok {
			tv = df.TakesValue()
		}
		for _, n := range f.Names() {
			takesValue[n] = tv
		}
	}
	var opts, pos, rest []string
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			dashdash, rest = true, args[i+1:]
			i = len(args)
		case a == "-" || !strings.HasPrefix(a, "-"):
			pos = append(pos, a)
		default:
			opts = append(opts, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if takesValue[name] && i+1 < len(args) {
				i++
				opts = append(opts, args[i])
			}
		}
	}
	if dashdash {
		// Flags, "--", then every positional: the parser stops at "--".
		return append(append(append(opts, "--"), pos...), rest...)
	}
	return append(opts, pos...)
}
