// Package completion writes shell completion scripts (bash, zsh, fish) for
// a command tree: command and subcommand names, and each command's flags.
// The scripts are static (generated from the tree, nothing runs at
// completion time), so completing never starts the program.
package completion

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Command is one node of the tree.
type Command struct {
	Name  string
	Usage string
	Flags []Flag
	Subs  []Command
}

// Flag is one of a command's flags; File says its value is a path.
type Flag struct {
	Name  string // without dashes; one letter is a short flag
	Usage string
	Value bool // takes a value
}

// Shells lists what Write accepts.
var Shells = []string{"bash", "zsh", "fish"}

// Write writes the completion script of prog for shell.
func Write(w io.Writer, shell, prog string, cmds []Command) error {
	switch shell {
	case "bash":
		return writeBash(w, prog, cmds, false)
	case "zsh":
		return writeBash(w, prog, cmds, true)
	case "fish":
		return writeFish(w, prog, cmds)
	}
	return fmt.Errorf("shell %q: want one of %s", shell, strings.Join(Shells, ", "))
}

// paths lists every command path ("", "runs", "runs ls") with what
// completes after it: subcommand names, then flags.
func paths(prefix string, cmds []Command, out map[string][]string, valueFlags map[string][]string) {
	var words []string
	for _, c := range cmds {
		words = append(words, c.Name)
	}
	out[prefix] = append(out[prefix], words...)
	for _, c := range cmds {
		p := strings.TrimSpace(prefix + " " + c.Name)
		for _, f := range c.Flags {
			out[p] = append(out[p], dashes(f.Name))
			if f.Value {
				valueFlags[p] = append(valueFlags[p], dashes(f.Name))
			}
		}
		out[p] = append(out[p], "--help")
		paths(p, c.Subs, out, valueFlags)
	}
}

func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func fn(prog string) string {
	return "_" + strings.NewReplacer("-", "_", ".", "_").Replace(prog) + "_complete"
}

func writeBash(w io.Writer, prog string, cmds []Command, zsh bool) error {
	words := map[string][]string{}
	values := map[string][]string{}
	paths("", cmds, words, values)
	keys := make([]string, 0, len(words))
	for k := range words {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	if zsh {
		fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s (through bashcompinit)\nautoload -U +X bashcompinit && bashcompinit\n", prog, prog)
	} else {
		fmt.Fprintf(&b, "# bash completion for %s\n", prog)
	}
	fmt.Fprintf(&b, `%s() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    case "${path:+$path }$w" in
`, fn(prog))
	for _, k := range keys {
		if k != "" {
			fmt.Fprintf(&b, "      %q) path=%q ;;\n", k, k)
		}
	}
	b.WriteString("    esac\n  done\n  case \"$path:$prev\" in\n")
	for _, k := range keys {
		if v := values[k]; len(v) > 0 {
			fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", casePattern(k, v))
		}
	}
	b.WriteString("  esac\n  local opts=\"\"\n  case \"$path\" in\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "    %q) opts=%q ;;\n", k, strings.Join(words[k], " "))
	}
	fmt.Fprintf(&b, "  esac\n  COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n}\ncomplete -o default -F %s %s\n", fn(prog), prog)
	_, err := io.WriteString(w, b.String())
	return err
}

// casePattern matches "PATH:FLAG" for each of flags.
func casePattern(path string, flags []string) string {
	var alts []string
	for _, f := range flags {
		alts = append(alts, fmt.Sprintf("%q", path+":"+f))
	}
	return strings.Join(alts, "|")
}

func writeFish(w io.Writer, prog string, cmds []Command) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s\ncomplete -c %s -f\n", prog, prog)
	var walk func(parents []string, cmds []Command)
	walk = func(parents []string, cmds []Command) {
		var names []string
		for _, c := range cmds {
			names = append(names, c.Name)
		}
		cond := "__fish_use_subcommand"
		if len(parents) > 0 {
			cond = fmt.Sprintf("__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s", parents[len(parents)-1], strings.Join(names, " "))
		}
		for _, c := range cmds {
			fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", prog, fishQuote(cond), c.Name, fishQuote(firstLine(c.Usage)))
		}
		for _, c := range cmds {
			for _, f := range c.Flags {
				opt := "-l " + f.Name
				if len(f.Name) == 1 {
					opt = "-s " + f.Name
				}
				if f.Value {
					opt += " -r -F"
				}
				fmt.Fprintf(&b, "complete -c %s -n %s %s -d %s\n", prog, fishQuote("__fish_seen_subcommand_from "+c.Name), opt, fishQuote(firstLine(f.Usage)))
			}
			walk(append(parents, c.Name), c.Subs)
		}
	}
	walk(nil, cmds)
	_, err := io.WriteString(w, b.String())
	return err
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
