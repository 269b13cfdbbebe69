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
	printGroups(w, m)
	fmt.Fprintf(w, "\n%d points in %d allocations (%d without grouping); %d not planned\n", len(m.Points), len(m.Groups), len(m.Points), m.Unplanned())
	printCosts(w, m)
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
	// LaunchRefused counts the planned points InferenceX's launch would
	// refuse on their cluster's lane (PointJSON.LaunchRefusal).
	LaunchRefused int `json:"launch_refused,omitempty"`
	// NotExpanded are an older layout's entries that make no point.
	NotExpanded   []string `json:"not_expanded,omitempty"`
	StartupHours  float64  `json:"startup_hours"`
	SavedGPUHours float64  `json:"saved_gpu_hours"`
	// Costs are the estimated queue wait, setup and engine starts, packed
	// and with one allocation per point.
	Costs Costs `json:"costs"`
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
	// Restart is set when the point's servers replace the previous
	// point's in its allocation.
	Restart bool   `json:"restart,omitempty"`
	Error   string `json:"error,omitempty"`
	// Today's layout.
	Kind        string `json:"kind,omitempty"`
	SrtRecipe   string `json:"srt_recipe,omitempty"`
	Fingerprint string `json:"recipe_fingerprint,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Cluster     string `json:"cluster,omitempty"`
	// LaunchRefusal is why InferenceX's launch would refuse a point
	// --plan planned: its cluster's lane (docs/matrix.md).
	LaunchRefusal string `json:"launch_refusal,omitempty"`
	// Row is the generator's row: every field the workflow and the binder
	// take for the point.
	Row map[string]any `json:"row,omitempty"`
}

// JSON is the plan as PlanJSON.
func (m *Matrix) JSON() PlanJSON {
	out := PlanJSON{Allocations: len(m.Groups), Unplanned: m.Unplanned(), LaunchRefused: len(launchRefused(m)), StartupHours: m.Startup.Hours(), SavedGPUHours: m.SavedGPUHours(), Costs: m.Costs()}
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
		for pi, p := range g.Points {
			cf := p.ConfigFile
			if p.Selector != "" {
				cf += ":" + p.Selector
			}
			pj := PointJSON{Name: p.Name(), Key: p.Key, ConfigFile: cf, Conc: p.Conc, RunEval: p.RunEval, EvalConc: p.EvalConc,
				GPUs: p.MatrixPoint.GPUs(), Allocation: gi + 1, Restart: g.Restart[pi]}
			if p.Plan != nil {
				pj.Nodes, pj.GPUs = p.Plan.Slurm.Nodes, p.Plan.Slurm.Nodes*p.Plan.Slurm.GPUsPerNode
			}
			if p.Err != nil {
				pj.Error = p.Err.Error()
			} else if p.Plan == nil && p.NoPlan != nil {
				pj.Error = p.NoPlan.Error()
			}
			if p.Row != nil {
				pj.Kind, pj.SrtRecipe, pj.Fingerprint, pj.Reason, pj.Cluster, pj.Row = kindOf(p), p.SrtRecipe, p.Fingerprint, ReasonOf(p.Err), p.Cluster, p.Row
				if p.Plan == nil && p.Err == nil {
					pj.Reason = noPlanReason(p)
				}
				if p.LaunchRefusal != nil {
					pj.LaunchRefusal = p.LaunchRefusal.Error()
				}
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
	printRefusals(w, m)
	printLaunchRefusals(w, m)
	fmt.Fprintln(w)
	printGroups(w, m)
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
	if n := len(launchRefused(m)); n > 0 {
		fmt.Fprintf(w, "  of the planned, %d a launch refuses (%s: InferenceX's generator lists them, its launch refuses them; a run lists them not planned)\n", n, ReasonLane)
	}
	printCosts(w, m)
	return nil
}

// printGroups lists every allocation of more than one point: what fixes
// it, its estimated time against its limit, its points in order with the
// restarts between them.
func printGroups(w io.Writer, m *Matrix) {
	shared := 0
	for gi, g := range m.Groups {
		if len(g.Points) < 2 {
			continue
		}
		shared++
		head := g.Points[0]
		where := head.Cluster
		if where == "" {
			where = head.Runner
		}
		nodes := "?"
		if n := g.Nodes(); n > 0 {
			nodes = fmt.Sprint(n)
		} else if head.Row != nil && !head.Multinode {
			nodes = "1"
		} else if head.NodeCount > 0 {
			nodes = fmt.Sprint(head.NodeCount)
		}
		names := make([]string, len(g.Points))
		for i, p := range g.Points {
			names[i] = p.Name()
			switch {
			case g.Resplit[i]:
				names[i] += " [restart, new split]"
			case g.Restart[i]:
				names[i] += " [restart]"
			}
		}
		all, resplit := g.Restarts()
		fmt.Fprintf(w, "allocation %d (%s on %s: %s nodes, %d GPUs; est. %s of %s) runs %d points, %d restarts (%d change the split): %s\n",
			gi+1, head.Key, where, nodes, g.GPUs(), g.Estimate, g.TimeLimit, len(g.Points), all, resplit, strings.Join(names, ", "))
	}
	if shared == 0 {
		fmt.Fprintln(w, "no two points fit one allocation: every point gets its own")
	}
}

// printCosts writes the estimated costs packed and with one allocation per
// point: queue wait (wall time), setup and engine start (GPU-hours), with
// the estimates they are counted with.
func printCosts(w io.Writer, m *Matrix) {
	c, e := m.Costs(), m.Est
	pct := func(saved, of float64) float64 {
		if of == 0 {
			return 0
		}
		return 100 * saved / of
	}
	setup := fmt.Sprintf("image import %s, model staging %s, Dynamo install %s", e.Import, e.Stage, e.Dynamo)
	if m.StartupGiven {
		setup = "--startup " + m.Startup.String()
	}
	fmt.Fprintf(w, "estimated, packed against one allocation per point:\n")
	fmt.Fprintf(w, "  queue wait:   %d allocations against %d: %.1f h against %.1f h of waiting (%s each; wall time, no GPU held)\n",
		c.Allocations, c.Points, c.QueueHours, c.QueueHoursPerPoint, e.QueueWait)
	fmt.Fprintf(w, "  setup:        %.1f GPU-h against %.1f: %.1f saved (%.0f %%) (%s per allocation, on all its GPUs)\n",
		c.SetupGPUHours, c.SetupGPUHoursPerPoint, c.SetupGPUHoursPerPoint-c.SetupGPUHours, pct(c.SetupGPUHoursPerPoint-c.SetupGPUHours, c.SetupGPUHoursPerPoint), setup)
	fmt.Fprintf(w, "  engine start: %d starts against %d: %.1f GPU-h against %.1f, %.1f saved (%s per start)\n",
		c.Starts, c.StartsPerPoint, c.EngineGPUHours, c.EngineGPUHoursPerPoint, c.EngineGPUHoursPerPoint-c.EngineGPUHours, e.EngineStart)
	fmt.Fprintf(w, "  packing: %s per concurrency (an agentic row's duration), %s per eval, %s time limit unless the plan says one\n",
		e.PerConc, e.Eval, e.TimeLimit)
	fmt.Fprintf(w, "GPU-hours saved: %.1f of %.1f spent on setup without grouping (one setup of %s per allocation, on all its GPUs; --startup sets it)\n", m.SavedGPUHours(), m.SetupGPUHours(), m.Startup)
}
