package matrix

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// PrintPlan writes the points, the grouping, the allocations and the
// GPU-hours the grouping saves.
func PrintPlan(w io.Writer, m *Matrix) error {
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
	Points        []PointJSON `json:"points"`
	Allocations   int         `json:"allocations"`
	Unplanned     int         `json:"unplanned"`
	StartupHours  float64     `json:"startup_hours"`
	SavedGPUHours float64     `json:"saved_gpu_hours"`
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
}

// JSON is the plan as PlanJSON.
func (m *Matrix) JSON() PlanJSON {
	out := PlanJSON{Allocations: len(m.Groups), Unplanned: m.Unplanned(), StartupHours: m.Startup.Hours(), SavedGPUHours: m.SavedGPUHours()}
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
			out.Points = append(out.Points, pj)
		}
	}
	return out
}
