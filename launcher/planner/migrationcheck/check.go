// Package migrationcheck proves a schema-2 migration plans as its original
// does (migrate --verify): both documents are planned with the same inputs
// and the plans compared field by field. It consumes the planner, which
// knows nothing of migrations.
package migrationcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/planner"
)

// Check is what Verify compared: the configs the file
// plans to (each config of an override file), and those both documents
// refuse alike (a field slurmbench does not run, or one srtctl refuses).
type Check struct {
	Configs, Refused int
}

// MismatchError is a migrated document that plans differently
// from its original, or fails where the original plans.
type MismatchError struct {
	Path, Variant string
	Diffs         []string
}

func (e *MismatchError) Error() string {
	where := e.Path
	if e.Variant != "" {
		where += ":" + e.Variant
	}
	const show = 5
	d := e.Diffs
	more := ""
	if len(d) > show {
		d, more = d[:show], fmt.Sprintf(" (and %d more)", len(e.Diffs)-show)
	}
	return fmt.Sprintf("%s: the migrated recipe plans differently: %s%s", where, strings.Join(d, "; "), more)
}

// Verify proves that the schema-1 document v1 and its migration
// v2 (both read as path, with opt; opt.Overrides are v1's, already written
// into v2) plan alike: every config of the file
// (each variant of an override file) is planned from both with the same
// inputs, and the plans must be equal but for how the recipe was spelled
// (the recipe's hash, which keys each override section set, loading
// warnings, the schema version read). A config the original refuses by a
// typed refusal (a field srtctl refuses, a feature slurmbench does not run,
// a key set twice) has no plan to compare: it is counted as Refused, as
// srtctl's verify skips it. in supplies everything but the profile
// (profileFor) and the recipe.
func Verify(path string, v1, v2 []byte, opt recipe.Options, in planner.Inputs, profileFor func(*recipe.Recipe) (*profile.Profile, error)) (Check, error) {
	var check Check
	variants := []string{opt.Variant}
	if _, err := recipe.ParseWith(path, v1, opt); err != nil {
		var ve *recipe.VariantError
		if !errors.As(err, &ve) || opt.Variant != "" {
			if recipe.RefusedField(err) != "" {
				// Nothing to compare: srtctl's verify skips such a file.
				check.Refused++
				return check, nil
			}
			return check, fmt.Errorf("reading the original: %w", err)
		}
		variants = ve.Variants
	}
	for _, v := range variants {
		o := opt
		o.Variant = v
		// --set/--unset edits are the original's: the migration has them
		// written in already.
		o2 := o
		o2.Overrides = nil
		a, _, errA := planOf(path, v1, o, in, profileFor)
		b, schemaB, errB := planOf(path, v2, o2, in, profileFor)
		switch {
		case errA != nil && recipe.RefusedField(errA) != "":
			check.Refused++
			continue
		case errA != nil:
			return check, fmt.Errorf("planning the original: %w", errA)
		case errB != nil:
			return check, &MismatchError{Path: path, Variant: v, Diffs: []string{"the migration does not plan: " + errB.Error()}}
		case schemaB != 2:
			return check, &MismatchError{Path: path, Variant: v, Diffs: []string{fmt.Sprintf("the migration was read as schema %d, not 2", schemaB)}}
		}
		if diffs := diffJSON(a, b, ""); len(diffs) > 0 {
			return check, &MismatchError{Path: path, Variant: v, Diffs: diffs}
		}
		check.Configs++
	}
	return check, nil
}

// planOf plans one config and returns it as generic JSON, without what
// only records the recipe's spelling, and the schema it was read as.
func planOf(path string, data []byte, opt recipe.Options, in planner.Inputs, profileFor func(*recipe.Recipe) (*profile.Profile, error)) (any, int, error) {
	r, err := recipe.ParseWith(path, data, opt)
	if err != nil {
		return nil, 0, err
	}
	in.Recipe = r
	if in.Profile, err = profileFor(r); err != nil {
		return nil, 0, err
	}
	if in.RunID == "" {
		in.RunID = r.Name + "-verify"
	}
	pl, err := planner.Build(in)
	if err != nil {
		return nil, 0, err
	}
	pl.Recipe.SHA256, pl.Recipe.Origins, pl.Recipe.Warnings, pl.Recipe.Schema, pl.Recipe.Overrides = "", nil, nil, 0, nil
	b, err := json.Marshal(pl)
	if err != nil {
		return nil, 0, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, 0, err
	}
	return out, r.SchemaVersion, nil
}

// diffJSON lists where a and b differ, as dotted paths with both values.
func diffJSON(a, b any, at string) []string {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range x {
				keys[k] = true
			}
			for k := range y {
				keys[k] = true
			}
			var out []string
			for _, k := range profile.SortedKeys(keys) {
				out = append(out, diffJSON(x[k], y[k], joinPath(at, k))...)
			}
			return out
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) == len(y) {
			var out []string
			for i := range x {
				out = append(out, diffJSON(x[i], y[i], fmt.Sprintf("%s[%d]", at, i))...)
			}
			return out
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) == string(jb) {
		return nil
	}
	return []string{fmt.Sprintf("%s: %s (original) vs %s (migrated)", at, clipJSON(ja), clipJSON(jb))}
}

func joinPath(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

func clipJSON(b []byte) string {
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

// SyntheticProfiles returns profiles written under dir for planning
// recipes with no cluster of their own at hand (migrate --verify without
// --profile): one per resources.gpus_per_node (4 when the recipe omits it,
// srtctl's default), mapping every model and container alias a recipe names
// to a path of its own, so each recipe plans as it would on a cluster
// that has them.
func SyntheticProfiles(dir string) func(*recipe.Recipe) (*profile.Profile, error) {
	var mu sync.Mutex
	cache := map[string]*profile.Profile{}
	return func(r *recipe.Recipe) (*profile.Profile, error) {
		gpn := 4
		if r.Resources.GPUsPerNode != nil {
			gpn = *r.Resources.GPUsPerNode
		}
		models := map[string]bool{}
		if p := r.Model.Path; p != "" && !strings.HasPrefix(p, "hf:") && !filepath.IsAbs(p) {
			models[p] = true
		}
		containers := map[string]bool{}
		for _, c := range []string{r.Model.Container, r.Frontend.NginxContainer} {
			if c != "" && !strings.ContainsAny(c, "/:@") {
				containers[c] = true
			}
		}
		var text strings.Builder
		fmt.Fprintf(&text, "cluster = \"verify-%d\"\n[slurm]\nrest_url = \"http://slurmrestd:6820\"\npartition = \"batch\"\ngpus_per_node = %d\n", gpn, gpn)
		fmt.Fprintf(&text, "[paths]\nruns_dir = \"/shared/runs\"\nsquash_dir = \"/shared/squash\"\n[models]\n")
		for _, a := range profile.SortedKeys(models) {
			fmt.Fprintf(&text, "%s = %s\n", strconv.Quote(a), strconv.Quote("/models/"+strings.ReplaceAll(a, "/", "_")))
		}
		text.WriteString("[containers]\n")
		for _, c := range profile.SortedKeys(containers) {
			fmt.Fprintf(&text, "%s = %s\n", strconv.Quote(c), strconv.Quote("/containers/"+c+".sqsh"))
		}
		mu.Lock()
		defer mu.Unlock()
		if p := cache[text.String()]; p != nil {
			return p, nil
		}
		file := filepath.Join(dir, fmt.Sprintf("verify-%d.toml", len(cache)))
		if err := os.WriteFile(file, []byte(text.String()), 0o600); err != nil {
			return nil, fmt.Errorf("writing the verification profile: %w", err)
		}
		p, err := profile.Load(file)
		if err != nil {
			return nil, fmt.Errorf("the verification profile: %w", err)
		}
		cache[text.String()] = p
		return p, nil
	}
}
