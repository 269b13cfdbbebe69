package planner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/internal/shareddata"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// srtctlRun is what ../shared/data/srtctl-reference recorded of srtctl's
// orchestrator for one recipe: the allocation and every srun it made.
type srtctlRun struct {
	JobID     string            `json:"job_id"`
	Nodelist  []string          `json:"nodelist"`
	NodeIPs   map[string]string `json:"node_ips"`
	OutputDir string            `json:"output_dir"`
	SrunCalls []struct {
		Argv []string `json:"argv"`
	} `json:"srun_calls"`
	// GeneratedFiles are the files srtctl wrote for the job, by path under
	// its output directory (logs/nginx.conf, logs/mooncake_store_config.json).
	GeneratedFiles map[string]string `json:"generated_files"`
}

// srtctlReferenceLists name the reference's recipes: the first 25, then
// the 21 that use the fields those do not.
var srtctlReferenceLists = []string{"RECIPES.list", "FEATURES.list"}

// srtctlRecordings counts the reference's recordings (one JSON file per
// recipe at its top level).
func srtctlRecordings(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(shareddata.Path(t, "data", "srtctl-reference"), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no srtctl recordings: %v", err)
	}
	return len(files)
}

// srtctlCase is one reference recipe: what srtctl ran, and slurmbench's
// plan for it (nil when slurmbench refuses the recipe by field).
type srtctlCase struct {
	Rel     string
	Run     srtctlRun
	Plan    *plan.Plan
	Refused string // the field, when refused
}

// srtctlCases loads every recipe of ../shared/data/srtctl-reference with
// srtctl's record and slurmbench's plan on a profile with srtctl's settings
// (model aliases under /models, gpus_per_node from the recipe).
func srtctlCases(t *testing.T) []srtctlCase { return srtctlCasesForm(t, false) }

// srtctlCasesForm is srtctlCases with each recipe read as written (schema
// 1) or, migrated, in its schema-2 form (migratedRecipe).
func srtctlCasesForm(t *testing.T, migrated bool) []srtctlCase {
	t.Helper()
	refDir := shareddata.Path(t, "data", "srtctl-reference")
	var rels []string
	for _, name := range srtctlReferenceLists {
		list, err := os.ReadFile(filepath.Join(refDir, name))
		if err != nil {
			t.Fatalf("reading the srtctl reference's recipe list: %v", err)
		}
		rels = append(rels, strings.Fields(string(list))...)
	}
	root := corpusRoot(t)
	loaded := map[string]*recipe.Recipe{}
	var cases []srtctlCase
	for _, rel := range rels {
		c := srtctlCase{Rel: rel}
		r, err := loadRecipeForm(t, filepath.Join(root, rel), migrated)
		switch {
		case err == nil:
			loaded[rel] = r
		case recipe.RefusedField(err) != "":
			c.Refused = recipe.RefusedField(err)
		default:
			t.Fatalf("%s: %v", rel, err)
		}
		data, err := os.ReadFile(filepath.Join(refDir, strings.ReplaceAll(strings.TrimSuffix(rel, ".yaml"), "/", "__")+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &c.Run); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		cases = append(cases, c)
	}
	profiles := corpusProfiles(t, loaded)
	for i := range cases {
		r, ok := loaded[cases[i].Rel]
		if !ok {
			continue
		}
		pln, err := Build(inputs(profiles[deref(r.Resources.GPUsPerNode, srtctlDefaultGPUsPerNode)], r))
		switch {
		case err == nil:
			cases[i].Plan = pln
		case recipe.RefusedField(err) != "":
			cases[i].Refused = recipe.RefusedField(err)
		default:
			t.Fatalf("%s: %v", cases[i].Rel, err)
		}
	}
	return cases
}

var (
	refWorker   = regexp.MustCompile(`^node\d+_(prefill|decode|agg)_w(\d+)$`)
	refFrontend = regexp.MustCompile(`^node\d+_(frontend_\d+|router_\d+|nginx)$`)
	refCVD      = regexp.MustCompile(`(?:^|\s)export CUDA_VISIBLE_DEVICES=([0-9,]+)`)
	refDevices  = regexp.MustCompile(`\s--device-ids ([0-9,]+)`)
)

// placement is where each process sits: name → node indices, and each
// worker node's GPU slices (CUDA_VISIBLE_DEVICES, or vLLM's --device-ids,
// when less than the node; several for vLLM's per-GPU DP ranks).
type placement struct {
	Nodes  int
	Where  map[string][]int
	Slices map[string]string // "name@node" → CUDA_VISIBLE_DEVICES
}

func refPlacement(t *testing.T, run srtctlRun, gpn int) placement {
	t.Helper()
	index := map[string]int{}
	for i, n := range run.Nodelist {
		index[n] = i
	}
	pl := placement{Nodes: len(run.Nodelist), Where: map[string][]int{}, Slices: map[string]string{}}
	for _, call := range run.SrunCalls {
		argv := call.Argv
		var out, nodelist string
		for i := 0; i+1 < len(argv); i++ {
			switch argv[i] {
			case "--output":
				out = strings.TrimSuffix(filepath.Base(argv[i+1]), ".out")
			case "--nodelist":
				nodelist = argv[i+1]
			}
		}
		var name string
		switch {
		case out == "infra" || out == "benchmark":
			name = out
		case refWorker.MatchString(out):
			m := refWorker.FindStringSubmatch(out)
			name = m[1] + "_w" + m[2]
		case refFrontend.MatchString(out):
			name = refFrontend.FindStringSubmatch(out)[1]
		default:
			continue
		}
		var nodes []int
		for _, n := range strings.Split(nodelist, ",") {
			i, ok := index[n]
			if !ok {
				t.Fatalf("srun %s on unknown node %q", out, n)
			}
			nodes = append(nodes, i)
		}
		pl.Where[name] = union(pl.Where[name], nodes)
		m := refCVD.FindStringSubmatch(argv[len(argv)-1])
		if m == nil {
			m = refDevices.FindStringSubmatch(argv[len(argv)-1])
		}
		if m != nil && strings.Count(m[1], ",")+1 < gpn {
			for _, n := range nodes {
				pl.addSlice(fmt.Sprintf("%s@%d", name, n), m[1])
			}
		}
	}
	return pl
}

// addSlice records one more GPU slice of a worker on a node, in sorted
// order.
func (pl placement) addSlice(key, slice string) {
	all := strings.Fields(pl.Slices[key])
	all = append(all, slice)
	sort.Strings(all)
	pl.Slices[key] = strings.Join(all, " ")
}

func planPlacement(pln *plan.Plan) placement {
	pl := placement{Nodes: pln.Nodes, Where: map[string][]int{}, Slices: map[string]string{}}
	for _, proc := range pln.Processes {
		name := proc.Name
		switch proc.Role {
		case plan.RoleInfra:
			name = "infra" // srtctl starts NATS and etcd in one step
		case plan.RolePrefill, plan.RoleDecode, plan.RoleAgg:
			name = fmt.Sprintf("%s_w%d", proc.Role, proc.Worker)
			if len(proc.GPUs) > 0 {
				for _, n := range proc.Nodes {
					pl.addSlice(fmt.Sprintf("%s@%d", name, n), plan.JoinInts(proc.GPUs))
				}
			}
		case plan.RoleEval:
			continue
		}
		pl.Where[name] = union(pl.Where[name], proc.Nodes)
	}
	return pl
}

func union(a, b []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, x := range append(append([]int(nil), a...), b...) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Ints(out)
	return out
}

// TestSrtctlReferencePlacement compares the allocation size, the node of
// every process and every GPU slice with what srtctl itself launched for
// the same recipes (../shared/data/srtctl-reference). Recipes slurmbench
// refuses by field are skipped and counted.
func TestSrtctlReferencePlacement(t *testing.T) {
	cases := srtctlCases(t)
	compared := 0
	var skipped []string
	for _, c := range cases {
		if c.Plan == nil {
			skipped = append(skipped, filepath.Base(c.Rel)+" ("+c.Refused+")")
			continue
		}
		pln := c.Plan
		t.Run(c.Rel, func(t *testing.T) {
			compared++
			want, got := refPlacement(t, c.Run, pln.GPUsPerNode), planPlacement(pln)
			if pln.Frontend == "sglang" {
				// Deliberate: srtctl starts NATS and etcd for an SGLang
				// router job, which uses neither (see TestSrtctlParity).
				delete(want.Where, "infra")
			}
			if len(want.Where) == 0 {
				t.Fatalf("reference names only %v: parsing it went wrong", want.Where)
			}
			if got.Nodes != want.Nodes {
				t.Errorf("nodes: slurmbench %d, srtctl %d", got.Nodes, want.Nodes)
			}
			for _, name := range sortedNames(want.Where, got.Where) {
				if !reflect.DeepEqual(got.Where[name], want.Where[name]) {
					t.Errorf("%s on nodes: slurmbench %v, srtctl %v", name, got.Where[name], want.Where[name])
				}
			}
			if !reflect.DeepEqual(got.Slices, want.Slices) {
				t.Errorf("GPU slices: slurmbench %v, srtctl %v", got.Slices, want.Slices)
			}
		})
	}
	sort.Strings(skipped)
	t.Logf("srtctl reference: %d recipes, %d compared, %d refused: %s", len(cases), compared, len(skipped), strings.Join(skipped, ", "))
	// The README states how many are compared; a change in what slurmbench
	// accepts must update it, and a reference that stops loading must not
	// pass by comparing nothing.
	wantCompared, wantTotal := readmeReferenceCounts(t)
	if compared != wantCompared || len(cases) != wantTotal {
		t.Errorf("compared %d of %d srtctl reference recipes; docs/recipes.md says %d of %d", compared, len(cases), wantCompared, wantTotal)
	}
}

// readmeReferenceCounts reads "N of the M srtctl reference recipes are
// compared" from docs/recipes.md (moved there from the README).
func readmeReferenceCounts(t *testing.T) (compared, total int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "recipes.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(\d+) of the (\d+) srtctl reference\s+recipes are\s+compared`).FindSubmatch(b)
	if m == nil {
		t.Fatal(`docs/recipes.md no longer says "N of the M srtctl reference recipes are compared"`)
	}
	compared, _ = strconv.Atoi(string(m[1]))
	total, _ = strconv.Atoi(string(m[2]))
	if compared == 0 {
		t.Fatal("docs/recipes.md says no srtctl reference recipe is compared")
	}
	return compared, total
}

func sortedNames(ms ...map[string][]int) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		// Numeric-aware enough for w2 < w10.
		a, b := out[i], out[j]
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	return out
}
