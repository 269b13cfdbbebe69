package matrix

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/slurmbench/slurmbench/launcher/inputs/master"
)

// PrintPlan writes the points, the grouping, the allocations and the
// GPU-hours the grouping saves.
func PrintPlan(w io.Writer, m *Matrix) error {
	if len(m.Points) > 0 && m.Points[0].Row != nil {
		return printToday(w, m)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tPOINT\tCONFIG_FILE\tCONC\tEVAL\tNODES\tGPUS\tALLOC")
	alloc := map[*Point]int{}
	for gi, g := range m.Groups {
		for _, p := range g.Points {
			alloc[p] = gi + 1
		}
	}
	for i, p := range m.Points {
		cf := p.ConfigFile
		if p.Selector != "" {
			cf += ":" + p.Selector
		}
		eval := "-"
		if p.RunEval {
			eval = fmt.Sprintf("@%d", p.EvalConc)
		}
		nodes, gpus := "?", fmt.Sprint(p.MatrixPoint.GPUs())
		if p.Plan != nil {
			nodes, gpus = fmt.Sprint(p.Plan.Slurm.Nodes), fmt.Sprint(p.Plan.Slurm.Nodes*p.Plan.Slurm.GPUsPerNode)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", i+1, p.Name(), cf, concText(p.Conc), eval, nodes, gpus, alloc[p])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range m.Points {
		if p.Err != nil {
			fmt.Fprintf(w, "not planned: %v\n", p.Err)
		}
	}
	for _, s := range m.Skipped {
		fmt.Fprintf(w, "not expanded: %s (line %d): %s\n", s.Key, s.Line, s.Reason)
	}
	fmt.Fprintln(w)
	shared := 0
	for gi, g := range m.Groups {
		if len(g.Points) < 2 {
			continue
		}
		shared++
		var names []string
		for _, p := range g.Points {
			names = append(names, p.Name())
		}
		fmt.Fprintf(w, "allocation %d (%d nodes, %d GPUs) runs %d points: %s\n", gi+1, g.Nodes(), g.GPUs(), len(g.Points), strings.Join(names, ", "))
	}
	if shared == 0 {
		fmt.Fprintln(w, "no two points serve identically: every point gets its own allocation")
	}
	fmt.Fprintf(w, "\n%d points in %d allocations (%d without grouping); %d not planned\n", len(m.Points), len(m.Groups), len(m.Points), m.Unplanned())
	fmt.Fprintf(w, "GPU-hours saved: %.1f of %.1f spent on setup without grouping (one setup of %s per allocation, on all its GPUs; --startup sets it)\n", m.SavedGPUHours(), m.SetupGPUHours(), m.Startup)
	return nil
}

func concText(c []int) string {
	s := make([]string, len(c))
	for i, v := range c {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, "x")
}

// PlanJSON is --plan --json: the same facts as PrintPlan.
type PlanJSON struct {
	Points      []PointJSON `json:"points"`
	Allocations int         `json:"allocations"`
	Unplanned   int         `json:"unplanned"`
	// Refused counts the unplanned points by reason.
	Refused map[string]int `json:"refused,omitempty"`
	// NotExpanded are an older layout's entries that make no point.
	NotExpanded   []string `json:"not_expanded,omitempty"`
	StartupHours  float64  `json:"startup_hours"`
	SavedGPUHours float64  `json:"saved_gpu_hours"`
}

// PointJSON is one point of PlanJSON.
type PointJSON struct {
	Name       string `json:"name"`
	Key        string `json:"key"`
	ConfigFile string `json:"config_file"`
	Conc       []int  `json:"conc"`
	RunEval    bool   `json:"run_eval"`
	EvalConc   int    `json:"eval_conc,omitempty"`
	Nodes      int    `json:"nodes,omitempty"`
	GPUs       int    `json:"gpus"`
	Allocation int    `json:"allocation"`
	Error      string `json:"error,omitempty"`
	// Today's layout.
	Kind        string `json:"kind,omitempty"`
	SrtRecipe   string `json:"srt_recipe,omitempty"`
	Fingerprint string `json:"recipe_fingerprint,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Cluster     string `json:"cluster,omitempty"`
	// Row is the generator's row: every field the workflow and the binder
	// take for the point.
	Row map[string]any `json:"row,omitempty"`
}

// JSON is the plan as PlanJSON.
func (m *Matrix) JSON() PlanJSON {
	out := PlanJSON{Allocations: len(m.Groups), Unplanned: m.Unplanned(), StartupHours: m.Startup.Hours(), SavedGPUHours: m.SavedGPUHours()}
	for _, sk := range m.Skipped {
		out.NotExpanded = append(out.NotExpanded, fmt.Sprintf("%s (line %d): %s", sk.Key, sk.Line, sk.Reason))
	}
	for _, rc := range refusalCounts(m.Points) {
		if out.Refused == nil {
			out.Refused = map[string]int{}
		}
		n, _ := strconv.Atoi(rc[1])
		out.Refused[rc[0]] = n
	}
	for gi, g := range m.Groups {
		for _, p := range g.Points {
			cf := p.ConfigFile
			if p.Selector != "" {
				cf += ":" + p.Selector
			}
			pj := PointJSON{Name: p.Name(), Key: p.Key, ConfigFile: cf, Conc: p.Conc, RunEval: p.RunEval, EvalConc: p.EvalConc,
				GPUs: p.MatrixPoint.GPUs(), Allocation: gi + 1}
			if p.Plan != nil {
				pj.Nodes, pj.GPUs = p.Plan.Slurm.Nodes, p.Plan.Slurm.Nodes*p.Plan.Slurm.GPUsPerNode
			}
			if p.Err != nil {
				pj.Error = p.Err.Error()
			}
			if p.Row != nil {
				pj.Kind, pj.SrtRecipe, pj.Fingerprint, pj.Reason, pj.Cluster, pj.Row = kindOf(p), p.SrtRecipe, p.Fingerprint, ReasonOf(p.Err), p.Cluster, p.Row
				if p.Plan == nil {
					pj.GPUs = p.AllocGPUs()
					pj.Nodes = p.NodeCount
				}
			}
			out.Points = append(out.Points, pj)
		}
	}
	return out
}

// kindOf names a today's point's kind: multi- or single-node,
// fixed-seq-len or agentic, with +power and +eval-only.
func kindOf(p *Point) string {
	k := "sn"
	if p.Multinode {
		k = "mn"
	}
	if p.Scenario == master.AgenticCoding {
		k += "-agentic"
	} else {
		k += "-fixed"
	}
	if p.Power {
		k += "+power"
	}
	if p.EvalOnly {
		k += "+eval-only"
	}
	return k
}

// shortRecipe is a recipe reference without the recipe tree's prefix.
func shortRecipe(ref string) string {
	for _, root := range []string{master.MultiNodeRecipes + "/", master.SingleNodeRecipes + "/"} {
		if r, ok := strings.CutPrefix(ref, root); ok {
			return r
		}
	}
	return ref
}

// printToday is PrintPlan for today's layout: every point with its kind,
// recipe, allocation and fingerprint; every refusal by name and the
// refusals by reason; the shared allocations; the totals.
func printToday(w io.Writer, m *Matrix) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tPOINT\tKIND\tRECIPE\tCONC\tEVAL\tNODES\tGPUS\tALLOC\tFINGERPRINT")
	alloc := map[*Point]int{}
	for gi, g := range m.Groups {
		for _, p := range g.Points {
			alloc[p] = gi + 1
		}
	}
	kinds := map[string]int{}
	for i, p := range m.Points {
		if !p.EvalOnly {
			kinds[strings.TrimSuffix(kindOf(p), "+power")]++
		}
		eval := "-"
		if p.RunEval {
			eval = p.EvalFramework
			if p.EvalConc > 0 {
				eval += fmt.Sprintf("@%d", p.EvalConc)
			}
		}
		nodes, gpus := "?", fmt.Sprint(p.AllocGPUs())
		switch {
		case p.Plan != nil:
			nodes, gpus = fmt.Sprint(p.Plan.Slurm.Nodes), fmt.Sprint(p.Plan.Slurm.Nodes*p.Plan.Slurm.GPUsPerNode)
		case !p.Multinode:
			nodes = "1"
		case p.NodeCount > 0:
			nodes = fmt.Sprint(p.NodeCount)
		}
		fp := "-"
		if p.Fingerprint != "" {
			fp = p.Fingerprint[:16]
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", i+1, p.Name(), kindOf(p), shortRecipe(p.SrtRecipe),
			concText(p.Conc), eval, nodes, gpus, alloc[p], fp)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range m.Points {
		if p.Err != nil {
			fmt.Fprintf(w, "not planned [%s]: %v\n", ReasonOf(p.Err), p.Err)
		}
	}
	fmt.Fprintln(w)
	shared := 0
	for gi, g := range m.Groups {
		if len(g.Points) < 2 {
			continue
		}
		shared++
		names := make([]string, len(g.Points))
		for i, p := range g.Points {
			names[i] = p.Name()
		}
		fmt.Fprintf(w, "allocation %d (%d GPUs) runs %d points of one recipe: %s\n", gi+1, g.GPUs(), len(g.Points), strings.Join(names, ", "))
	}
	if shared == 0 {
		fmt.Fprintln(w, "no two points share a recipe fingerprint: every point gets its own allocation")
	}
	var ks []string
	for _, k := range []string{"mn-fixed", "sn-fixed", "mn-agentic", "sn-agentic"} {
		ks = append(ks, fmt.Sprintf("%d %s", kinds[k], k))
	}
	evalOnly := 0
	for _, p := range m.Points {
		if p.EvalOnly {
			evalOnly++
		}
	}
	fmt.Fprintf(w, "\n%d points (%d benchmark: %s; %d eval-only) in %d allocations (%d without grouping); %d not planned\n",
		len(m.Points), len(m.Points)-evalOnly, strings.Join(ks, ", "), evalOnly, len(m.Groups), len(m.Points), m.Unplanned())
	for _, rc := range refusalCounts(m.Points) {
		fmt.Fprintf(w, "  %s: %s\n", rc[1], rc[0])
	}
	fmt.Fprintf(w, "GPU-hours saved: %.1f of %.1f spent on setup without grouping (one setup of %s per allocation, on all its GPUs; --startup sets it)\n", m.SavedGPUHours(), m.SetupGPUHours(), m.Startup)
	return nil
}
