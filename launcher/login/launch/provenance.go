package launch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// writeProvenance is runs show's view of the manifest's provenance: the
// image, the edits made to the recipe, the engine versions and GPUs the
// steps reported from inside their containers, and what each step ran.
// Environment values are never in the manifest; names are counted here
// (the manifest lists them).
func writeProvenance(row func(k, v string), p *results.Provenance) {
	if p == nil {
		return
	}
	img := p.ImageRef
	if p.ImageDigest != "" {
		img += " @ " + p.ImageDigest
	}
	row("image", strings.TrimSpace(img))
	row("image squash", p.ImageSquashSHA256)
	row("recipe sha256", p.RecipeSHA256)
	for _, o := range p.Overrides {
		row("override", o)
	}
	rt := p.Runtime
	if rt == nil {
		row("runtime", "not recorded (a manifest from before fingerprints)")
		return
	}
	for _, sw := range rt.Software {
		names := make([]string, 0, len(sw.Engines))
		for n := range sw.Engines {
			names = append(names, n)
		}
		sort.Strings(names)
		var engines []string
		for _, n := range names {
			engines = append(engines, n+" "+sw.Engines[n])
		}
		v := fmt.Sprintf("%d packages", len(sw.Packages))
		if len(engines) > 0 {
			v = strings.Join(engines, ", ") + " (" + v + ")"
		}
		row("software "+sw.ID, v)
	}
	for _, n := range rt.Nodes {
		v := "no GPUs reported"
		if len(n.GPUs) > 0 {
			v = fmt.Sprintf("%d × %s, driver %s", len(n.GPUs), strings.Join(n.Models, " + "), strings.Join(n.Drivers, " + "))
		}
		var machine []string
		cuda := ""
		if n.CUDA != "" {
			cuda = "CUDA " + n.CUDA
		}
		for _, s := range []string{n.Arch, n.CPU, n.OS, cuda} {
			if s != "" {
				machine = append(machine, s)
			}
		}
		if len(machine) > 0 {
			v += "; " + strings.Join(machine, ", ")
		}
		row("node "+n.Host, v)
	}
	notes := map[string][]string{}
	var order []string
	for _, proc := range rt.Processes {
		where := proc.Host
		if proc.Task != "" && proc.Task != "0" {
			where += " task " + proc.Task
		}
		sw := proc.Software
		if sw == "" {
			sw = "-"
		}
		row("process "+proc.Step, fmt.Sprintf("on %s, software %s, %d env names: %s", where, sw, len(proc.EnvNames), plan.QuoteArgv(proc.Argv)))
		for _, n := range proc.Notes {
			if _, ok := notes[n]; !ok {
				order = append(order, n)
			}
			notes[n] = append(notes[n], proc.Step)
		}
	}
	for _, n := range order {
		row("probe note", fmt.Sprintf("%s (%d steps)", n, len(notes[n])))
	}
	if len(rt.Missing) > 0 {
		row("no fingerprint", strings.Join(rt.Missing, " "))
	}
	for _, p := range rt.Problems {
		row("problem", p)
	}
}
