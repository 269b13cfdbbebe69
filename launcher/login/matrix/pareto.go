package matrix

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/slurmbench/slurmbench/results/compare"
	"github.com/slurmbench/slurmbench/results/pareto"
)

// writeEntryCharts draws one Pareto chart per master config entry into the
// stage directory (<key>-pareto.svg and .csv): one curve per point of the
// entry that has a staged result (run now or reused), so an entry's
// topologies are read against each other. A point without results is left
// out; a chart that cannot be written is reported, not fatal.
func writeEntryCharts(w io.Writer, stage string, m *Matrix) {
	var order []string
	curves := map[string][]pareto.Curve{}
	for _, p := range m.Points {
		dir := filepath.Join(stage, StageDirName(p))
		if mk, ok := readMarker(dir); !ok || !mk.OK {
			continue
		}
		set, err := compare.LoadResultSet(dir)
		if err != nil || len(set.Points) == 0 {
			continue
		}
		c, _ := pareto.FromSet(p.Name(), set)
		if len(c.Points) == 0 {
			continue
		}
		if _, seen := curves[p.Key]; !seen {
			order = append(order, p.Key)
		}
		curves[p.Key] = append(curves[p.Key], c)
	}
	for _, key := range order {
		name := unsafeDirChars.ReplaceAllString(key, "-") + "-pareto"
		svg, csv := filepath.Join(stage, name+".svg"), filepath.Join(stage, name+".csv")
		if err := pareto.Save(svg, csv, key+": tput/GPU vs interactivity", curves[key]); err != nil {
			fmt.Fprintf(w, "matrix: %s: %v\n", key, err)
			continue
		}
		fmt.Fprintf(w, "matrix: %s: Pareto chart %s (%d points)\n", key, svg, len(curves[key]))
	}
}
