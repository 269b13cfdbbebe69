package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// helpExample is one "slurmbench ..." line of a command's --help.
type helpExample struct {
	command string   // the command whose help shows it
	line    string   // as written
	env     []string // NAME=VALUE prefixes
	args    []string // after "slurmbench", before any pipe
}

// helpExamples extracts every example: the lines after "Examples" in each
// command's description, with "\" continuations joined.
func helpExamples(t *testing.T) []helpExample {
	t.Helper()
	var out []helpExample
	cliargs.ForEachCommand(newApp().Commands, func(c *cli.Command) {
		_, text, ok := strings.Cut("\n"+c.Description, "\nExamples")
		if !ok {
			return
		}
		_, text, _ = strings.Cut(text, ":\n")
		text = strings.ReplaceAll(text, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if ex, ok := parseExample(line); ok {
				ex.command = c.FullName()
				out = append(out, ex)
			}
		}
	})
	return out
}

var envWord = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=[^$( ]*$`)

// parseExample splits "[NAME=VALUE ...] slurmbench ARGS [| filter]". A
// prefix that is not plain NAME=VALUE words (a $(...) substitution) is
// left out of env.
func parseExample(line string) (helpExample, bool) {
	i := strings.Index(" "+line, " slurmbench ")
	if i < 0 {
		return helpExample{}, false
	}
	ex := helpExample{line: line}
	for _, w := range strings.Fields(line[:i]) {
		if envWord.MatchString(w) {
			ex.env = append(ex.env, w)
		}
	}
	cmd, _, _ := strings.Cut(line[i+len("slurmbench "):], " | ")
	ex.args = strings.Fields(cmd)
	return ex, true
}

// runnable are the commands whose examples run for real here: they need no
// cluster. The others are parsed with their actions stubbed, their files
// must exist and their profiles load, and run's examples are rendered.
var runnable = map[string]bool{"render": true, "results": true, "mock-answer-key": true, "migrate": true}

// TestHelpExamplesRun: every example in every command's --help works against
// this repository's own files, run from its root.
func TestHelpExamplesRun(t *testing.T) {
	clearRenderEnv(t)
	examples := helpExamples(t)
	if len(examples) < 20 {
		t.Fatalf("found %d help examples; the extraction is broken", len(examples))
	}
	root := repoRoot(t)
	t.Chdir(root)
	for _, ex := range examples {
		t.Run(ex.line, func(t *testing.T) {
			for _, kv := range ex.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			if len(ex.args) == 0 {
				t.Fatal("no command")
			}
			// migrate runs for real unless it would rewrite a file.
			inPlace := ex.args[0] == "migrate" && strings.Contains(ex.line, "--in-place")
			if ex.args[0] == "help" || runnable[ex.args[0]] && !inPlace {
				if _, errOut, code := runCLI(t, ex.args...); code != 0 {
					t.Errorf("exit %d: %s", code, errOut)
				}
				return
			}
			checkExampleFiles(t, root, ex.args)
			if err := parseOnly(ex.args); err != nil {
				t.Errorf("does not parse: %v", err)
			}
			if ex.args[0] == "run" {
				// The point it would run plans from these files.
				args := renderArgs(t, ex.args[1:])
				if _, errOut, code := runCLI(t, append([]string{"render"}, args...)...); code != 0 {
					t.Errorf("render of the same point: exit %d: %s", code, errOut)
				}
			}
		})
	}
}

// parseOnly runs argv through main's argument preparation and urfave/cli
// with every action stubbed: flags, required flags and subcommands are
// checked, nothing is contacted.
func parseOnly(args []string) error {
	app := newApp()
	app.Writer, app.ErrWriter = &strings.Builder{}, &strings.Builder{}
	cliargs.ForEachCommand(app.Commands, func(c *cli.Command) {
		if c.Action != nil {
			c.Action = func(*cli.Context) error { return nil }
		}
	})
	argv, err := cliargs.PrepareArgs(app, append([]string{"slurmbench"}, args...))
	if err != nil {
		return err
	}
	return app.Run(argv)
}

// checkExampleFiles: arguments that name repository files exist, and
// profiles load.
func checkExampleFiles(t *testing.T, root string, args []string) {
	t.Helper()
	for i, a := range args {
		if !strings.HasPrefix(a, "profiles/") && !strings.HasPrefix(a, "examples/") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, a)); err != nil {
			t.Errorf("names %s, which is not in the repository", a)
			continue
		}
		if i > 0 && (args[i-1] == "-p" || args[i-1] == "--profile") {
			if _, err := profile.Load(filepath.Join(root, a)); err != nil {
				t.Errorf("profile %s: %v", a, err)
			}
		}
	}
}

// renderArgs keeps the flags render knows (with their values) from run's
// arguments.
func renderArgs(t *testing.T, args []string) []string {
	t.Helper()
	known := map[string]bool{}
	for _, f := range renderCommand().Flags {
		for _, n := range f.Names() {
			known[n] = true
		}
	}
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, _ := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		takesValue := !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-")
		if known[name] {
			out = append(out, args[i])
			if takesValue {
				out = append(out, args[i+1])
			}
		}
		if takesValue {
			i++
		}
	}
	return out
}

// The checks can fail: an unknown flag does not parse, and an example's
// environment prefix and pipe are told apart from its arguments.
func TestHelpExampleChecksCatchBreakage(t *testing.T) {
	if err := parseOnly([]string{"status", "--jsn", "4242"}); exitcode.Of(err) != exitcode.Config {
		t.Errorf("an unknown flag parsed: %v", err)
	}
	ex, ok := parseExample(`SLURM_JWT=$(scontrol token lifespan=600 | cut -d= -f2) slurmbench ping --rest-url http://h:6820`)
	if !ok || len(ex.env) != 0 || strings.Join(ex.args, " ") != "ping --rest-url http://h:6820" {
		t.Errorf("parseExample: %+v", ex)
	}
	ex, _ = parseExample(`CONFIG_FILE=recipes/a.yaml slurmbench render -p p.toml --json | jq .gpus`)
	if strings.Join(ex.env, " ") != "CONFIG_FILE=recipes/a.yaml" || strings.Join(ex.args, " ") != "render -p p.toml --json" {
		t.Errorf("parseExample: %+v", ex)
	}
}
