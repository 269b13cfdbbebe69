// Package cliargs is the command line's plumbing around urfave/cli v2:
// flags after positional arguments, unknown commands and flags refused
// with the Closest name, required flags, counts and conflicting flags
// checked, every usage error one line and exit 2.
package cliargs

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/suggest"
)

func configErrorf(format string, args ...any) error {
	return exitcode.Errorf(exitcode.Config, format, args...)
}

// urfave/cli v2 stops reading flags at the first positional argument, so
// "slurmbench status 4242 --json" would see "--json" as a second JOBID.
// PrepareArgs finds the command an argv names and moves that command's
// flags (with their values) in front of its positional arguments; "--"
// still ends the flags. It also refuses an unknown command or subcommand
// with a suggestion, instead of urfave's "No help topic" and exit 3.

// PrepareArgs returns the argv to hand to app.Run, or a config error.
func PrepareArgs(app *cli.App, args []string) ([]string, error) {
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
			return append(append(out, names...), "--help"), nil // out already names path
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
	return append(out, Interleave(cmd.Flags, args[i:])...), nil
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
// exist, with the Closest existing name when one is close.
func unknownCommand(cmds []*cli.Command, path []string, name string) error {
	where := strings.Join(append([]string{"slurmbench"}, path...), " ")
	msg := fmt.Sprintf("unknown command %q", strings.Join(append(path, name), " "))
	if s := closestCommand(cmds, name); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", strings.Join(append(path, s), " "))
	}
	return configErrorf("%s ('%s --help' lists the commands)", msg, where)
}

// closestCommand is the command name closest to name: a prefix match, else the
// smallest edit distance within a third of the name's length (at least 2).
func closestCommand(cmds []*cli.Command, name string) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return Closest(names, name)
}

// Closest is the name Closest to name: a prefix match, else the smallest
// edit distance within a third of the name's length (at least 2).
func Closest(names []string, name string) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	for _, n := range names {
		if len(name) >= 2 && strings.HasPrefix(n, name) {
			return n
		}
	}
	best, bestDist := "", max(2, len(name)/3)+1
	for _, n := range names {
		if d := suggest.Distance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// Interleave puts flags (and the values of flags that take one) before the
// positional arguments, keeping each group's order. Everything after "--"
// is positional; "-" alone is a positional (stdin). An unknown flag is
// kept as one token for the parser to refuse.
func Interleave(flags []cli.Flag, args []string) []string {
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

// UsageError makes a flag that does not parse a config error (exit 2, one
// line) instead of urfave/cli's usage dump on stdout and exit 1. An unknown
// flag is named as typed on a command line (--name) with the Closest flag
// of the command when one is close.
func UsageError(c *cli.Context, err error, _ bool) error {
	where := "slurmbench"
	var flags []cli.Flag
	if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
		where, flags = "slurmbench "+CommandPath(c), c.Command.Flags
	} else {
		flags = c.App.Flags
	}
	if m := unknownFlag.FindStringSubmatch(err.Error()); m != nil {
		msg := "unknown flag " + dashed(m[1])
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		if s := Closest(names, m[1]); s != "" {
			msg += "; did you mean " + dashed(s) + "?"
		}
		return exitcode.Errorf(exitcode.Config, "%s (see %s --help)", msg, where)
	}
	msg := notNumber.ReplaceAllString(err.Error(), `--$2: "$1" is not a number`)
	msg = badValue.ReplaceAllString(msg, "--$1:")
	return exitcode.Errorf(exitcode.Config, "%s (see %s --help)", msg, where)
}

// badValue is urfave's `invalid value "V" for flag -name:`: the flag is
// named as typed (--name) and the parser's message quotes V itself.
var notNumber = regexp.MustCompile(`^invalid value "(.*)" for flag -+([\w-]{2,}): parse error$`)

var badValue = regexp.MustCompile(`^invalid value ".*" for flag -+([\w-]{2,}):`)

var unknownFlag = regexp.MustCompile(`^flag provided but not defined: -+(\S+)`)

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// CommandPath is the command's full name, "runs ls" (urfave's FullName
// leaves the parent out of a subcommand's usage error).
func CommandPath(c *cli.Context) string {
	var names []string
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != c.App.Name &&
			(len(names) == 0 || names[len(names)-1] != l.Command.Name) {
			names = append(names, l.Command.Name)
		}
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return strings.Join(names, " ")
}

func ForEachCommand(cmds []*cli.Command, fn func(*cli.Command)) {
	for _, c := range cmds {
		fn(c)
		ForEachCommand(c.Subcommands, fn)
	}
}

// RequireFlags replaces urfave/cli's required-flag check (a help dump and
// exit 1) with a config error naming the flag. The flag's help still says
// it is required.
func RequireFlags(c *cli.Command) {
	var required []string
	for _, f := range c.Flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			if f.Required {
				f.Required, f.Usage = false, f.Usage+" (required)"
				required = append(required, f.Name)
			}
		case *cli.IntFlag:
			if f.Required {
				f.Required, f.Usage = false, f.Usage+" (required)"
				required = append(required, f.Name)
			}
		}
	}
	if len(required) == 0 {
		return
	}
	before := c.Before
	c.Before = func(ctx *cli.Context) error {
		var missing []string
		for _, name := range required {
			if !ctx.IsSet(name) {
				missing = append(missing, "--"+name)
			}
		}
		if len(missing) > 0 {
			return configErrorf("%s: required (see slurmbench %s --help)", strings.Join(missing, ", "), CommandPath(ctx))
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
}

// minimum is the least value of each count flag, checked for every
// command that has it when the flag is given: a negative or zero count is
// refused naming the flag, not discovered later as "allocation has -1
// nodes". Flags not listed (mock-engine's exit codes) take any value.
var Minimum = map[string]int{
	"nodes": 1, "gpus": 1, "isl": 1, "osl": 1, "conc": 1, "ctx": 0, "gen": 0,
	"point": 0, "num-prompts": 0, "warmups": 0, "concurrency": 0, "limit": 0, "context-length": 0,
	"prefill-gpus": 0, "decode-gpus": 0, "default-max-tokens": 1, "eos-after": 0,
	"exit-after-requests": 0, "hang-after-requests": 0,
}

// conflicts are flag pairs a command refuses together: one would be
// ignored.
var Conflicts = [][2]string{{"json", "brief"}}

// CheckFlags refuses counts below their minimum and conflicting flags
// before the command runs.
func CheckFlags(c *cli.Command) {
	before := c.Before
	c.Before = func(ctx *cli.Context) error {
		var errs []string
		for _, f := range c.Flags {
			if f, ok := f.(*cli.IntFlag); ok && ctx.IsSet(f.Name) {
				if lo, ok := Minimum[f.Name]; ok && ctx.Int(f.Name) < lo {
					errs = append(errs, fmt.Sprintf("--%s %d: must be at least %d", f.Name, ctx.Int(f.Name), lo))
				}
			}
		}
		for _, pair := range Conflicts {
			if ctx.IsSet(pair[0]) && ctx.IsSet(pair[1]) && HasFlag(c, pair[0]) && HasFlag(c, pair[1]) {
				errs = append(errs, fmt.Sprintf("--%s and --%s: give one, not both", pair[0], pair[1]))
			}
		}
		if len(errs) > 0 {
			return configErrorf("%s (see slurmbench %s --help)", strings.Join(errs, "; "), CommandPath(ctx))
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
}

func HasFlag(c *cli.Command, name string) bool {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
