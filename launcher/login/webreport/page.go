package webreport

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/pareto"
)

//go:embed page.html.tmpl
var pageText string

//go:embed page.css
var pageCSS string

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"css": func() template.CSS { return template.CSS(pageCSS) }, //nolint:gosec // the page's own stylesheet, embedded at build time
}).Parse(pageText))

// view is what the template shows; every figure is formatted here.
type view struct {
	Title      string
	Kind       string // run, matrix or comparison
	Outcome    string
	OutcomeCSS string // ok, fail or unknown
	Ran        []kv
	Overrides  []string
	Nodes      []string
	Processes  []process
	Columns    []string
	Points     []pointView
	Pareto     template.HTML
	Dists      []dist
	Power      *powerView
	Eval       string
	Failure    *failure
	Groups     []group // a matrix's allocations
	Verdict    string  // a comparison's gate verdict
	Problems   []string
	Files      []string
}

type kv struct{ K, V string }

type process struct{ Step, Host, Argv string }

type pointView struct {
	Group string // a matrix's recipe or run
	Cells []string
	Valid bool
	Note  string
}

type dist struct {
	Label    string
	TTFT     template.HTML
	ITL      template.HTML
	Requests int
	Failed   int
}

type powerView struct {
	Chart   template.HTML
	Valid   bool
	Reasons string
	Energy  []string
}

type failure struct {
	Class, Phase, Process, Host, FirstError, Message string
	Tail                                             []string
}

type group struct {
	Name, Allocation, GPUHours string
	Points                     int
}

var pointColumns = []string{"Point", "Conc", "GPUs (P+D)", "Completed", "Failed", "Total tok/s/GPU", "Output tok/s/GPU",
	"TTFT p50/p90/p99 (ms)", "TPOT p50/p99 (ms)", "ITL p50/p99 (ms)", "E2E p50/p99 (s)", "Goodput (req/s)", "J/output token", "Valid"}

// runView builds the page of one run.
func runView(r *Run) view {
	v := view{Kind: "run", Title: filepath.Base(r.Dir), Outcome: "unknown", OutcomeCSS: "unknown", Columns: pointColumns, Problems: r.Problems}
	if s := r.Summary; s != nil {
		v.Title = firstNonEmpty(s.Name, v.Title)
		v.Outcome = firstNonEmpty(s.Outcome, "unknown")
		v.Ran = append(v.Ran, kv{"Run", s.RunID}, kv{"Slurm job", s.JobID}, kv{"Image", s.Image}, kv{"Image digest", s.ImageDigest})
		if s.Benchmark != nil {
			v.Ran = append(v.Ran, kv{"Benchmark", s.Benchmark.Type + " (" + string(s.Benchmark.Client) + " client)"})
		}
		if s.Outcome != "" && s.Outcome != "succeeded" {
			v.Failure = &failure{Class: s.Class, Phase: s.Phase, Process: s.Process, Host: s.Host, FirstError: s.FirstError,
				Message: s.Message, Tail: append(append([]string(nil), s.LastLines...), s.RuntimeLog...)}
		}
		v.Eval = s.EvalLine()
		v.Files = s.StagedFiles
	} else if r.Set != nil {
		v.Outcome = "results only (no summary.json)"
	}
	switch v.Outcome {
	case "succeeded":
		v.OutcomeCSS = "ok"
	case "failed", "cancelled", "interrupted":
		v.OutcomeCSS = "fail"
	}
	if m := r.Manifest; m != nil {
		p := m.Provenance
		v.Ran = append(v.Ran, kv{"Recipe sha256", p.RecipeSHA256}, kv{"Profile", p.ProfilePath},
			kv{"slurmbench", p.SlurmbenchVersion}, kv{"Slurm", p.SlurmVersion})
		if img := firstNonEmpty(p.ImageDigest, p.ImageRef); r.Summary == nil || (img != r.Summary.ImageDigest && img != r.Summary.Image) {
			v.Ran = append(v.Ran, kv{"Image (manifest)", img})
		}
		keys := make([]string, 0, len(p.Extra))
		for k := range p.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v.Ran = append(v.Ran, kv{k, p.Extra[k]})
		}
		v.Overrides = p.Overrides
		v.Nodes = p.Nodes
		if p.Runtime != nil {
			for _, pr := range p.Runtime.Processes {
				v.Processes = append(v.Processes, process{Step: pr.Step, Host: pr.Host, Argv: strings.Join(pr.Argv, " ")})
			}
		}
	}
	v.Ran = nonEmpty(v.Ran)
	if r.Set != nil {
		ids := sortedIDs(r.Set.Points)
		for _, id := range ids {
			cp := r.Set.Points[id]
			v.Points = append(v.Points, pointRow("", cp, energyText(r, id)))
			recs := r.Requests[id]
			ttft, itl, failed := distributions(recs)
			v.Dists = append(v.Dists, dist{Label: id.Label(), Requests: len(recs), Failed: failed,
				TTFT: histogram(ttft, "TTFT "+id.Label(), "ms"), ITL: histogram(itl, "ITL "+id.Label()+" (per request, mean)", "ms")})
		}
		curve, _ := pareto.FromSet(v.Title, r.Set)
		v.Pareto = paretoSVG(v.Title, []pareto.Curve{curve})
	}
	if pt := r.Power; pt != nil {
		v.Power = powerSection(pt, r)
	}
	return v
}

func pointRow(group string, cp *results.CollectedPoint, energy string) pointView {
	id, res := cp.Point, cp.Result
	gpus := strconv.Itoa(id.GPUs)
	if id.PrefillGPUs > 0 || id.DecodeGPUs > 0 {
		gpus = fmt.Sprintf("%d (%d+%d)", id.GPUs, id.PrefillGPUs, id.DecodeGPUs)
	}
	pv := pointView{Group: group, Valid: res != nil && res.Valid != nil && *res.Valid}
	if res == nil {
		pv.Cells = []string{id.Label(), strconv.Itoa(id.Concurrency), gpus}
		return pv
	}
	pv.Note = res.InvalidReason
	per, _ := results.PerGPUThroughput(id, res.TotalTokenThroughput, res.OutputThroughput)
	pct := func(metric string, ps ...float64) string {
		m, ok := res.Metric(metric)
		if !ok {
			return "—"
		}
		parts := make([]string, len(ps))
		for i, p := range ps {
			val := m.Median
			if p != 50 {
				if x, ok := m.Percentile(p); ok {
					val = x
				} else {
					parts[i] = "—"
					continue
				}
			}
			parts[i] = fixed(val, 1)
		}
		return strings.Join(parts, " / ")
	}
	e2e := "—"
	if m, ok := res.Metric("e2el"); ok {
		p99, _ := m.Percentile(99)
		e2e = fixed(m.Median/1000, 3) + " / " + fixed(p99/1000, 3)
	}
	goodput := "—"
	if res.RequestGoodput != nil {
		goodput = fixed(*res.RequestGoodput, 2)
	}
	valid := "yes"
	if !pv.Valid {
		valid = "no"
	}
	pv.Cells = []string{id.Label(), strconv.Itoa(id.Concurrency), gpus,
		fmt.Sprintf("%d/%d", res.Completed, res.NumPrompts), strconv.Itoa(res.NumPrompts - res.Completed),
		fixed(per.TputPerGPU, 1), fixed(per.OutputTputPerGPU, 1),
		pct("ttft", 50, 90, 99), pct("tpot", 50, 99), pct("itl", 50, 99), e2e, goodput, firstNonEmpty(energy, "—"), valid}
	return pv
}

// distributions are the per-request TTFTs and mean ITLs (ms) of the
// completed requests, and how many did not complete.
func distributions(recs []results.RequestRecord) (ttft, itl []float64, failed int) {
	for _, r := range recs {
		if r.Status != results.RequestOK {
			failed++
			continue
		}
		if r.TTFTms != nil {
			ttft = append(ttft, *r.TTFTms)
		}
		if r.ITL != nil && r.ITL.Count > 0 {
			itl = append(itl, r.ITL.Mean)
		}
	}
	return ttft, itl, failed
}

func energyText(r *Run, id results.PointID) string {
	if r.Set == nil || r.Set.Energy[id] == nil {
		return ""
	}
	return fixed(r.Set.Energy[id].JoulesPerToken, 4)
}

var roleColors = map[string]string{"prefill": "#1f77b4", "decode": "#d62728", "agg": "#2ca02c", "other": "#7f7f7f"}

func powerSection(pt *PowerTrace, r *Run) *powerView {
	roles := make([]string, 0, len(pt.Roles))
	for rl := range pt.Roles {
		roles = append(roles, rl)
	}
	sort.Strings(roles)
	var ss []series
	for _, rl := range roles {
		ss = append(ss, series{name: rl + " GPUs (W)", color: firstNonEmpty(roleColors[rl], "#7f7f7f"), points: pt.Roles[rl]})
	}
	pv := &powerView{Chart: timeChart(ss, pt.Windows, "power trace", "board power, summed per role (W)"), Valid: pt.Valid, Reasons: strings.Join(pt.Reasons, ", ")}
	if r.Set != nil {
		for _, id := range sortedIDs(r.Set.Points) {
			if e := r.Set.Energy[id]; e != nil {
				line := fmt.Sprintf("%s: %s J per output token over %s s", id.Label(), fixed(e.JoulesPerToken, 4), fixed(e.WindowSeconds, 2))
				for _, role := range []string{"prefill", "decode", "agg"} {
					if e.RoleGPUs[role] > 0 {
						line += fmt.Sprintf("; %s %s W/GPU", role, fixed(e.AvgPowerW(role), 1))
					}
				}
				pv.Energy = append(pv.Energy, line)
			}
		}
	}
	return pv
}

func paretoSVG(title string, curves []pareto.Curve) template.HTML {
	var b strings.Builder
	if err := pareto.WriteSVG(&b, title, curves); err != nil {
		return ""
	}
	return ownSVG(strings.Replace(b.String(), "<svg ", `<svg class="chart pareto" role="img" aria-label="Pareto: throughput per GPU against interactivity" `, 1))
}

func sortedIDs[V any](m map[results.PointID]V) []results.PointID {
	ids := make([]results.PointID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := ids[i], ids[j]
		if a.GPUs != b.GPUs {
			return a.GPUs < b.GPUs
		}
		if a.PrefillGPUs != b.PrefillGPUs {
			return a.PrefillGPUs < b.PrefillGPUs
		}
		return a.Concurrency < b.Concurrency
	})
	return ids
}

func nonEmpty(in []kv) []kv {
	out := in[:0]
	for _, e := range in {
		if e.V != "" {
			out = append(out, e)
		}
	}
	return out
}

func fixed(v float64, d int) string { return strconv.FormatFloat(v, 'f', d, 64) }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Render writes r's page.
func Render(w io.Writer, r *Run) error { return pageTmpl.Execute(w, runView(r)) }

// Write renders r's page into dir/report.html (atomically) and returns its
// path.
func Write(dir string, r *Run) (string, error) {
	path := filepath.Join(dir, PageName)
	err := atomicfile.Write(path, atomicfile.Options{Overwrite: true}, func(w io.Writer) error { return Render(w, r) })
	if err != nil {
		return "", fmt.Errorf("writing the report: %w", err)
	}
	return path, nil
}

// WriteRun keeps a finished run's summary in dir (summary.json, what the
// page and `slurmbench report` read back) and writes its page; it returns
// the page's path.
func WriteRun(dir string, sum report.Summary) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("writing the report: %w", err)
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return "", fmt.Errorf("writing the report: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, SummaryName), append(b, '\n'), atomicfile.Options{Overwrite: true}); err != nil {
		return "", fmt.Errorf("writing the report's summary: %w", err)
	}
	r, err := Load(dir)
	if err != nil {
		return "", err
	}
	return Write(dir, r)
}

// CommandOptions are `slurmbench report`'s.
type CommandOptions struct {
	Args   []string // one directory
	Out    string   // "" : DIR/report.html
	JSON   bool
	Stdout io.Writer
}

// Command is `slurmbench report DIR`: the page rebuilt from the directory.
func Command(o CommandOptions) error {
	if len(o.Args) != 1 {
		return exitcode.Errorf(exitcode.Config, "report: want one directory (a run's stage directory), got %d arguments", len(o.Args))
	}
	r, err := Load(o.Args[0])
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	path := o.Out
	if path == "" {
		path, err = Write(o.Args[0], r)
	} else {
		err = atomicfile.Write(path, atomicfile.Options{Overwrite: true}, func(w io.Writer) error { return Render(w, r) })
	}
	if err != nil {
		return exitcode.With(exitcode.Collect, err)
	}
	if o.JSON {
		return json.NewEncoder(o.Stdout).Encode(map[string]string{"report": path})
	}
	fmt.Fprintf(o.Stdout, "report: %s\n", path)
	return nil
}
