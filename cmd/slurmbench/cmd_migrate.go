package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/inputs/recipe"
	"github.com/slurmbench/slurmbench/inputs/recipe/migrate"
	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/login/launch"
	"github.com/slurmbench/slurmbench/planner"
)

func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "migrate",
		Usage:     "rewrite schema-1 recipes into schema 2 (srt-slurm 2.x), keeping comments and key order",
		UsageText: "slurmbench migrate -f FILE|DIR [--in-place] [--verify [-p PROFILE]] [--set KEY=VALUE] [--unset KEY]",
		Description: `Rewrites a recipe in srt-slurm c88ef731's layout (schema 1: backend:,
resources.<role>_nodes, infra:, dynamo.version/hash/wheel, ...) into srt-slurm
2.x's schema 2 (engine:, roles:, placement:, services:, dynamo.source), rule by
rule as srt-slurm's own migrator does; an override file (base: +
override_*/zip_override_*) is rewritten section by section. Comments and key
order are kept (the YAML is re-indented by two spaces). What moved, and what
was deliberately left as it was, is listed on stderr.

-f FILE prints the migrated recipe on stdout and changes nothing; a file that
is already schema 2 is printed as it is. With --in-place the file is replaced
atomically (a complete new file or the old one, never half of one), keeping
its mode; a file already schema 2 is refused (exit 2).

-f DIR walks every *.yaml and *.yml below it. Without --in-place nothing is
written: one status line per file (migrate, already schema 2, or the error).
With --in-place every schema-1 file is migrated (and verified, with --verify)
in memory first, and the files are written only if all of them succeeded;
schema-2 files are left as they are.

--verify proves each migration: every config of the file is planned from the
original and from the migrated document, and the plans must be equal but for
the recipe's spelling (exit 1 on a difference, nothing written). The plans use
-p PROFILE, or without it a profile made up per recipe (its gpus_per_node,
every model and container alias mapped).

--set and --unset (a FILE only) edit the original before it is migrated, as
for render.

Examples (from the repository's root):
  slurmbench migrate -f examples/mock-2p1d.yaml
  slurmbench migrate -f examples/mock-2p1d.yaml --verify -p profiles/testcluster.toml
  slurmbench migrate -f examples --verify
  slurmbench migrate -f examples/mock-2p1d.yaml --set health_check.max_attempts=120
  cp examples/mock-2p1d.yaml /tmp/r.yaml && slurmbench migrate -f /tmp/r.yaml --in-place --verify`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the recipe `FILE`, or a `DIR` of recipes", Required: true},
			&cli.BoolFlag{Name: "in-place", Usage: "replace the file(s) with the migration (atomically; a schema-2 FILE is refused)"},
			&cli.BoolFlag{Name: "verify", Usage: "plan the original and the migration and require equal plans"},
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "cluster profile the --verify plans use (default: one made up per recipe)"},
			&cli.StringFlag{Name: "workspace", Usage: "the InferenceX checkout the --verify plans name (custom benchmarks run from it)", EnvVars: []string{"SLURMBENCH_WORKSPACE", "GITHUB_WORKSPACE"}},
			&cli.BoolFlag{Name: "allow-duplicate-keys", Usage: "accept a recipe that sets a key twice, keeping the last as srtctl does"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "do not list what moved"},
		}, overrideFlags()...),
		OnUsageError: cliargs.UsageError,
		Action:       runMigrate,
	}
}

// migrator holds what every file of one migrate invocation shares.
type migrator struct {
	c          *cli.Context
	verify     bool
	opt        migrate.Options
	profileFor func(*recipe.Recipe) (*profile.Profile, error)
	in         planner.Inputs
}

// migrated is one file's outcome.
type migrated struct {
	path      string
	data      []byte // the original
	res       *migrate.Result
	check     planner.MigrationCheck
	already   bool // schema 2 already
	notRecipe bool // a YAML file that is no recipe
	err       error
}

func runMigrate(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("migrate takes no arguments, got %q (did you mean -f?)", c.Args().First())
	}
	target, err := filepath.Abs(c.String("file"))
	if err != nil {
		return configErrorf("-f: %v", err)
	}
	st, err := os.Stat(target)
	if err != nil {
		return configErrorf("-f: %v", err)
	}
	m := &migrator{c: c, verify: c.Bool("verify"),
		opt: migrate.Options{AllowDuplicateKeys: c.Bool("allow-duplicate-keys"), Overrides: overridesOf(c)}}
	if st.IsDir() && len(m.opt.Overrides) > 0 {
		return configErrorf("--set/--unset apply to one recipe file, not a directory (-f %s)", c.String("file"))
	}
	if m.verify {
		m.in = planner.Inputs{ResolveImage: launch.ResolveImage, Binary: "/slurmbench"}
		if ws := c.String("workspace"); ws != "" {
			abs, err := profile.Canonical(ws)
			if err != nil {
				return configErrorf("--workspace: %v", err)
			}
			m.in.Workspace = abs
		}
		if p := c.String("profile"); p != "" {
			prof, err := profile.LoadContext(c.Context, p)
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			m.profileFor = func(*recipe.Recipe) (*profile.Profile, error) { return prof, nil }
		} else {
			dir, err := os.MkdirTemp("", "slurmbench-verify-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			m.profileFor = planner.SyntheticProfiles(dir)
			if m.in.Workspace == "" {
				// Custom benchmarks run from the InferenceX checkout; their
				// plan names it and reads nothing from it.
				m.in.Workspace = dir
			}
		}
	}
	if st.IsDir() {
		return m.dir(target)
	}
	return m.file(target)
}

// one migrates (and verifies) one file in memory.
func (m *migrator) one(path string) migrated {
	out := migrated{path: path}
	out.data, out.err = readlimit.ReadFileContext(m.c.Context, path, recipe.MaxInputBytes)
	if out.err != nil {
		return out
	}
	out.res, out.err = migrate.Migrate(path, out.data, m.opt)
	var nr *migrate.NotRecipeError
	switch {
	case errors.Is(out.err, migrate.ErrAlreadySchema2):
		out.already, out.err = true, nil
		return out
	case errors.As(out.err, &nr):
		out.notRecipe, out.err = true, nil
		return out
	}
	if out.err != nil || !m.verify {
		return out
	}
	// The original as edited by --set/--unset: their values are in the
	// migration too.
	opt := recipe.Options{AllowDuplicateKeys: m.opt.AllowDuplicateKeys, Overrides: m.opt.Overrides}
	out.check, out.err = planner.VerifyMigration(path, out.data, out.res.Text, opt, m.in, m.profileFor)
	return out
}

// exitOf classifies a failed migration: a migration that plans differently
// is slurmbench's bug (exit 1); anything else is the input's (exit 2).
func exitOf(err error) error {
	var mm *planner.MigrationMismatchError
	if errors.As(err, &mm) {
		return exitcode.With(exitcode.Internal, err)
	}
	return exitcode.With(exitcode.Config, err)
}

func (m *migrator) notes(r migrated) {
	if m.c.Bool("quiet") || r.res == nil {
		return
	}
	for _, n := range r.res.Notes {
		fmt.Fprintf(m.c.App.ErrWriter, "%s: %s\n", r.path, n)
	}
}

func (m *migrator) file(path string) error {
	r := m.one(path)
	if r.err != nil {
		return exitOf(r.err)
	}
	if r.notRecipe {
		return configErrorf("%s: not a recipe (none of name, model, resources, backend, engine, roles or base at its top level)", path)
	}
	if r.already {
		if m.c.Bool("in-place") {
			return configErrorf("%s: already schema 2; nothing to migrate (refusing --in-place)", path)
		}
		fmt.Fprintf(m.c.App.ErrWriter, "%s: already schema 2; printed as it is\n", path)
		_, err := m.c.App.Writer.Write(r.data)
		return err
	}
	m.notes(r)
	if m.verify {
		fmt.Fprintf(m.c.App.ErrWriter, "%s: verified: %s\n", path, checkText(r.check))
	}
	if !m.c.Bool("in-place") {
		_, err := m.c.App.Writer.Write(r.res.Text)
		return err
	}
	if err := replaceFile(path, r.data, r.res.Text); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	fmt.Fprintf(m.c.App.ErrWriter, "%s: migrated to schema 2\n", path)
	return nil
}

func checkText(c planner.MigrationCheck) string {
	s := fmt.Sprintf("%d config(s) plan alike", c.Configs)
	if c.Refused > 0 {
		s += fmt.Sprintf(", %d refused by the original (nothing to compare)", c.Refused)
	}
	return s
}

func (m *migrator) dir(root string) error {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return configErrorf("-f %s: %v", root, err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return configErrorf("-f %s: no *.yaml or *.yml files below it", root)
	}
	w := m.c.App.Writer
	var results []migrated
	failed, todo, skipped := 0, 0, 0
	for _, f := range files {
		r := m.one(f)
		rel, _ := filepath.Rel(root, f)
		switch {
		case r.err != nil:
			failed++
			fmt.Fprintf(w, "%s: error: %v\n", rel, r.err)
		case r.already:
			fmt.Fprintf(w, "%s: already schema 2\n", rel)
		case r.notRecipe:
			skipped++
			fmt.Fprintf(w, "%s: not a recipe, skipped\n", rel)
		default:
			todo++
			status := fmt.Sprintf("migrate (%d change(s))", len(r.res.Notes))
			if m.verify {
				status += "; verified: " + checkText(r.check)
			}
			fmt.Fprintf(w, "%s: %s\n", rel, status)
			results = append(results, r)
		}
	}
	fmt.Fprintf(w, "%d file(s): %d to migrate, %d already schema 2, %d not recipes, %d failed\n", len(files), todo, len(files)-todo-failed-skipped, skipped, failed)
	if failed > 0 {
		if m.c.Bool("in-place") {
			return configErrorf("%d of %d file(s) failed; nothing was written", failed, len(files))
		}
		return configErrorf("%d of %d file(s) failed", failed, len(files))
	}
	if !m.c.Bool("in-place") {
		return nil
	}
	for _, r := range results {
		if err := replaceFile(r.path, r.data, r.res.Text); err != nil {
			return exitcode.With(exitcode.Config, err)
		}
	}
	fmt.Fprintf(w, "%d file(s) migrated in place\n", len(results))
	return nil
}

// replaceFile atomically replaces path, whose content was read as was,
// with data, keeping its mode; a file changed since it was read is left
// alone (someone else is editing it).
func replaceFile(path string, was, data []byte) error {
	st, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("replacing %s: not a regular file (a symlink?); migrate the file it points to", path)
	}
	now, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	if string(now) != string(was) {
		return fmt.Errorf("replacing %s: it changed while it was being migrated; run migrate again", path)
	}
	return atomicfile.WriteFile(path, data, atomicfile.Options{Overwrite: true, Perm: st.Mode().Perm()})
}
