// Package generate is `slurmbench generate`: one bound recipe per
// srt-slurm point of a master config's keys, plus a manifest.json mapping
// each file to its matrix point and its cluster, as InferenceX's
// `infx generate` writes them (inferencex-e2e/infx/srt_slurm/generate.py@e0ab9519
// generate_recipes; RECIPES.md § Recipe fragments). Launch-time edits (the
// job name, the health-check floor, runtime --set values) are not applied.
//
// The points and the clusters' facts come through two narrow interfaces,
// Points and Clusters: the master reader expands today's rows (each
// naming the one cluster its runner label schedules on) and the
// runners.yaml reader gives that cluster's binder facts.
package generate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
)

// Point is one srt-slurm point of a master config.
type Point struct {
	Key    string // the config key
	Runner string // the row's runner label
	// Recipe is the row's srt-recipe: the file relative to InferenceX's
	// tree (srt-recipe-dir joined with the file), then :selector if any.
	Recipe string
	// Matrix is the point as the matrix generator writes it (a JSON
	// object, its keys in the generator's order): the manifest's "matrix"
	// and, with the variant, what names the file.
	Matrix json.RawMessage
	Lane   fragment.Lane
	Power  bool
	Binder fragment.Point
	// Cluster is the one cluster the runner label schedules on ("" when
	// its runners span several: the manifest's cluster is then null and
	// '@fabric' references stay as written); GPUsPerNode its node's GPUs.
	Cluster     string
	GPUsPerNode int
}

// Points expands the master config's keys (globs) into their srt-slurm
// points, in the generator's order; a key without one is an error.
type Points interface {
	Points(ctx context.Context, keys []string) ([]Point, error)
}

// Clusters gives a cluster's binder facts (fabric, power exporter port,
// AgentX client paths) by id.
type Clusters interface {
	Cluster(ctx context.Context, id string) (fragment.Cluster, error)
}

// Options are `generate`'s.
type Options struct {
	Root   string // InferenceX's tree (inferencex-e2e/): configs/srt-recipes/ and the recipes
	Keys   []string
	Out    string // an empty or absent directory
	Points Points
	// Clusters gives each point's cluster facts; nil knows a cluster's id
	// and GPUs per node only, so a recipe that names a '@fabric' value or
	// a power row on a cluster fails, naming the field.
	Clusters Clusters
	Stdout   io.Writer
}

// Record is one manifest entry (generate.py's keys and order).
type Record struct {
	File      string          `json:"file"`
	ConfigKey string          `json:"config-key"`
	Variant   *string         `json:"variant"`
	Cluster   *string         `json:"cluster"`
	Matrix    json.RawMessage `json:"matrix"`
}

// Manifest is manifest.json: InferenceX's one key, recipes. Missing is
// not written there: it is what kept points out (MissingInputsError).
type Manifest struct {
	Recipes []Record  `json:"recipes"`
	Missing []Missing `json:"-"`
}

// Missing is one input of InferenceX's tree that points need and the tree
// given lacks — a recipe file, or a lane's shared (or the telemetry)
// block — and the points it kept out.
type Missing struct {
	Input  string   // relative to the tree (configs/srt-recipes/agentic-multi.yaml)
	What   string   // "recipe", or the block's role (fragment.MissingBlockError.What)
	Points int      // how many points need it
	Keys   []string // their config keys, in the generator's order
}

// MissingInputsError is generate's error when inputs of some points are
// not in the tree: every other point was written, with the manifest;
// this names what is missing and how many points of which keys it kept
// out. InferenceX's generator fails on the same tree (its master
// validation refuses a row whose recipe does not exist, validation.py
// _check_srt_recipe, and composing a point reads its lane's block,
// generate.py@02d0272d generate_recipes), so the command still ends
// non-zero: the output is partial.
type MissingInputsError struct {
	Root    string
	Written int
	Missing []Missing
}

func (e *MissingInputsError) Error() string {
	n := 0
	for _, m := range e.Missing {
		n += m.Points
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d points not generated (the other %d are): their inputs are not in %s:", n, e.Written, e.Root)
	for _, m := range e.Missing {
		fmt.Fprintf(&b, "\n  %s (%s): %d points of %s", m.Input, m.What, m.Points, strings.Join(m.Keys, ", "))
	}
	return b.String()
}

// Run binds every point and writes the recipes and the manifest into
// o.Out. A point whose recipe or lane block is not in the tree is left
// out and named (MissingInputsError, after everything else is written);
// any other failure writes nothing.
func Run(ctx context.Context, o Options) (*Manifest, error) {
	if err := emptyDir(o.Out); err != nil {
		return nil, err
	}
	points, err := o.Points.Points(ctx, o.Keys)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var m Manifest
	missing := map[string]int{} // input → index in m.Missing
	for _, p := range points {
		rec, data, err := bindOne(ctx, o, p)
		if input, what, ok := missingInput(err); ok {
			i, seen := missing[input]
			if !seen {
				i = len(m.Missing)
				missing[input] = i
				m.Missing = append(m.Missing, Missing{Input: input, What: what})
			}
			mi := &m.Missing[i]
			mi.Points++
			if len(mi.Keys) == 0 || mi.Keys[len(mi.Keys)-1] != p.Key {
				mi.Keys = append(mi.Keys, p.Key)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s (runner %s, %s): %w", p.Key, p.Runner, p.Recipe, err)
		}
		files[rec.File] = data
		m.Recipes = append(m.Recipes, rec)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := atomicfile.WriteFile(filepath.Join(o.Out, n), files[n], atomicfile.Options{Overwrite: true}); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(o.Out, "manifest.json"), buf.Bytes(), atomicfile.Options{Overwrite: true}); err != nil {
		return nil, err
	}
	if o.Stdout != nil {
		fmt.Fprintf(o.Stdout, "%d bound recipes and manifest.json in %s\n", len(m.Recipes), o.Out)
	}
	if len(m.Missing) > 0 {
		return &m, &MissingInputsError{Root: o.Root, Written: len(m.Recipes), Missing: m.Missing}
	}
	return &m, nil
}

// missingInput says whether a point's err is its input missing from the
// tree: the recipe file it names, or its lane's block
// (fragment.MissingBlockError).
func missingInput(err error) (input, what string, ok bool) {
	if err == nil {
		return "", "", false
	}
	var mb *fragment.MissingBlockError
	if errors.As(err, &mb) {
		return mb.Block, mb.What, true
	}
	var nr *noRecipeError
	if errors.As(err, &nr) {
		return nr.file, "recipe", true
	}
	var ms *fragment.MissingSetupScriptError
	if errors.As(err, &ms) {
		return "setup_script " + ms.Script, "in none of " + strings.Join(fragment.ConfigsDirs, ", ") + " or their patches/", true
	}
	return "", "", false
}

// noRecipeError is a point whose recipe file is not in the tree.
type noRecipeError struct{ file, root string }

func (e *noRecipeError) Error() string {
	return fmt.Sprintf("recipe %s is not in this tree (%s)", e.file, e.root)
}

// bindOne composes and binds one point and checks the bound recipe reads
// as slurmbench runs it.
func bindOne(ctx context.Context, o Options, p Point) (Record, []byte, error) {
	file, selector, _ := strings.Cut(p.Recipe, ":")
	path := filepath.Join(o.Root, file)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return Record{}, nil, &noRecipeError{file: file, root: o.Root}
	}
	placed := p.Cluster != ""
	cluster := fragment.Cluster{ID: p.Cluster, GPUsPerNode: p.GPUsPerNode, Fabric: fragment.Fabric{Unread: true}}
	if placed && o.Clusters != nil {
		c, err := o.Clusters.Cluster(ctx, p.Cluster)
		if err != nil {
			return Record{}, nil, err
		}
		cluster = c
	}
	needsCluster := p.Lane.MultiNode && (p.Lane.Agentic || p.Power)
	if needsCluster && !placed {
		return Record{}, nil, fmt.Errorf("runner %q must schedule on one cluster to bind the cluster's power telemetry and AgentX client paths", p.Runner)
	}
	power := p.Power && p.Lane.MultiNode
	if power && cluster.PowerExporterPort <= 0 {
		return Record{}, nil, fmt.Errorf("cluster %s sets no srt-slurm.power-exporter-port for the power row's DCGM exporter", cluster.ID)
	}
	blocks, err := fragment.LoadBlocks(ctx, o.Root, p.Lane, power, cluster.PowerExporterPort)
	if err != nil {
		return Record{}, nil, err
	}
	frag := &recipe.Fragment{Blocks: blocks, Input: fragment.Input{Lane: p.Lane, Point: p.Binder, Cluster: cluster}, KeepFabric: !placed}
	b, err := recipe.LoadBound(ctx, path, recipe.Options{Variant: selector, Fragment: frag})
	if err != nil {
		return Record{}, nil, err
	}
	if err := fragment.CheckSetupScript(o.Root, b.Doc); err != nil {
		return Record{}, nil, err
	}
	data, err := fragment.Marshal(b.Doc)
	if err != nil {
		return Record{}, nil, err
	}
	if placed {
		// What srtctl would be handed must read as slurmbench runs it.
		if _, err := recipe.Parse(path+" (bound)", data); err != nil {
			return Record{}, nil, err
		}
	}
	rec := Record{ConfigKey: p.Key, Matrix: p.Matrix}
	if b.Selector != "" {
		rec.Variant = &b.Selector
	}
	if placed {
		rec.Cluster = &cluster.ID
	}
	name, err := FileName(p.Key, p.Matrix, rec.Variant)
	if err != nil {
		return Record{}, nil, err
	}
	rec.File = name
	return rec, data, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// FileName is generate.py's: the key with unsafe characters as _, then 12
// hex of the SHA-256 of json.dumps({"point": matrix, "variant": variant},
// sort_keys=True).
func FileName(key string, matrix json.RawMessage, variant *string) (string, error) {
	var point any
	dec := json.NewDecoder(bytes.NewReader(matrix))
	dec.UseNumber()
	if err := dec.Decode(&point); err != nil {
		return "", fmt.Errorf("the matrix point is not JSON: %w", err)
	}
	var v any
	if variant != nil {
		v = *variant
	}
	// json.dumps(..., sort_keys=True) with its default separators.
	identity, err := pyjson.AppendSorted(nil, map[string]any{"point": point, "variant": v}, pyjson.Default)
	if err != nil {
		return "", fmt.Errorf("the matrix point is not JSON: %w", err)
	}
	sum := sha256.Sum256(identity)
	return unsafeName.ReplaceAllString(key, "_") + "-" + hex.EncodeToString(sum[:])[:12] + ".yaml", nil
}

// emptyDir refuses an output that holds anything (generate.py: "Output
// directory must be empty").
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--out %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("--out %s: the output directory must be empty", dir)
	}
	return nil
}
