package launch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/migrate"
	"github.com/slurmbench/slurmbench/launcher/planner"
	"github.com/slurmbench/slurmbench/launcher/planner/migrationcheck"
)

// migrator holds what every file of one migrate invocation shares.
type migrator struct {
	ctx        context.Context
	o          MigrateOptions
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
	check     migrationcheck.Check
	already   bool // schema 2 already
	notRecipe bool // a YAML file that is no recipe
	err       error
}

// MigrateOptions are migrate's flags.
type MigrateOptions struct {
	IO
	File                   string
	InPlace, Verify, Quiet bool
	AllowDuplicateKeys     bool
	Profile, Workspace     string
	Overrides              []recipe.Override
}

// Migrate is `slurmbench migrate`: schema 1 to schema 2, for a FILE (printed,
// or replaced atomically with InPlace) or every recipe below a DIR (one
// status line each; InPlace writes only when every file migrated), each
// verified to plan alike with Verify.
func Migrate(ctx context.Context, o MigrateOptions) error {
	target, err := filepath.Abs(o.File)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "-f: %v", err)
	}
	st, err := os.Stat(target)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "-f: %v", err)
	}
	m := &migrator{ctx: ctx, o: o, verify: o.Verify,
		opt: migrate.Options{AllowDuplicateKeys: o.AllowDuplicateKeys, Overrides: o.Overrides}}
	if st.IsDir() && len(m.opt.Overrides) > 0 {
		return exitcode.Errorf(exitcode.Config, "--set/--unset apply to one recipe file, not a directory (-f %s)", o.File)
	}
	if m.verify {
		m.in = planner.Inputs{ResolveImage: ResolveImage, Binary: "/slurmbench"}
		if ws := o.Workspace; ws != "" {
			abs, err := profile.Canonical(ws)
			if err != nil {
				return exitcode.Errorf(exitcode.Config, "--workspace: %v", err)
			}
			m.in.Workspace = abs
		}
		if p := o.Profile; p != "" {
			prof, err := profile.LoadContext(ctx, p)
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
			m.profileFor = migrationcheck.SyntheticProfiles(dir)
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
	out.data, out.err = readlimit.ReadFileContext(m.ctx, path, recipe.MaxInputBytes)
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
	out.check, out.err = migrationcheck.Verify(path, out.data, out.res.Text, opt, m.in, m.profileFor)
	return out
}

// exitOf classifies a failed migration: a migration that plans differently
// is slurmbench's bug (exit 1); anything else is the input's (exit 2).
func exitOf(err error) error {
	var mm *migrationcheck.MismatchError
	if errors.As(err, &mm) {
		return exitcode.With(exitcode.Internal, err)
	}
	return exitcode.With(exitcode.Config, err)
}

func (m *migrator) notes(r migrated) {
	if m.o.Quiet || r.res == nil {
		return
	}
	for _, n := range r.res.Notes {
		fmt.Fprintf(m.o.Stderr, "%s: %s\n", r.path, n)
	}
}

func (m *migrator) file(path string) error {
	r := m.one(path)
	if r.err != nil {
		return exitOf(r.err)
	}
	if r.notRecipe {
		return exitcode.Errorf(exitcode.Config, "%s: not a recipe (none of name, model, resources, backend, engine, roles or base at its top level)", path)
	}
	if r.already {
		if m.o.InPlace {
			return exitcode.Errorf(exitcode.Config, "%s: already schema 2; nothing to migrate (refusing --in-place)", path)
		}
		fmt.Fprintf(m.o.Stderr, "%s: already schema 2; printed as it is\n", path)
		_, err := m.o.Stdout.Write(r.data)
		return err
	}
	m.notes(r)
	if m.verify {
		fmt.Fprintf(m.o.Stderr, "%s: verified: %s\n", path, checkText(r.check))
	}
	if !m.o.InPlace {
		_, err := m.o.Stdout.Write(r.res.Text)
		return err
	}
	if err := ReplaceFile(path, r.data, r.res.Text); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	fmt.Fprintf(m.o.Stderr, "%s: migrated to schema 2\n", path)
	return nil
}

func checkText(c migrationcheck.Check) string {
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
		return exitcode.Errorf(exitcode.Config, "-f %s: %v", root, err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return exitcode.Errorf(exitcode.Config, "-f %s: no *.yaml or *.yml files below it", root)
	}
	w := m.o.Stdout
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
		if m.o.InPlace {
			return exitcode.Errorf(exitcode.Config, "%d of %d file(s) failed; nothing was written", failed, len(files))
		}
		return exitcode.Errorf(exitcode.Config, "%d of %d file(s) failed", failed, len(files))
	}
	if !m.o.InPlace {
		return nil
	}
	for _, r := range results {
		if err := ReplaceFile(r.path, r.data, r.res.Text); err != nil {
			return exitcode.With(exitcode.Config, err)
		}
	}
	fmt.Fprintf(w, "%d file(s) migrated in place\n", len(results))
	return nil
}

// ReplaceFile atomically replaces path, whose content was read as was,
// with data, keeping its mode; a file changed since it was read is left
// alone (someone else is editing it).
func ReplaceFile(path string, was, data []byte) error {
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
