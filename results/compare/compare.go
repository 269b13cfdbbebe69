package compare

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/power"
)

// ResultSet is every SA-Bench point and gsm8k score found under a directory.
type ResultSet struct {
	Dir    string
	Points map[results.PointID]*results.CollectedPoint
	// GSM8K is keyed by eval concurrency, from a "_conc<N>" name suffix;
	// 0 for the usual single results_<timestamp>.json.
	GSM8K map[int]*SetEval
	// Notes are things a reader of the comparison should know.
	Notes []string
	// Energy holds each point's figures from a valid power package beside
	// the results (LOGS/power), when there is one.
	Energy map[results.PointID]*power.Energy

	sums map[results.PointID][sha256.Size]byte // of each point's file, to spot a copy
}

// SetEval is one gsm8k result of a ResultSet.
type SetEval struct {
	Concurrency int
	Path        string
	Score       *results.GSM8KScore
}

var evalConcRE = regexp.MustCompile(`_conc([0-9]+)(?:_[0-9]+)?\.json$`)

// LoadResultSet searches dir recursively for SA-Bench result files, raw or
// staged names (agg_* and power_validation_* sidecars are skipped), and
// lm-eval results*.json files holding results.gsm8k. The same point found
// twice with identical bytes (a staged copy and its raw original under
// LOGS/) counts once; with different bytes it is an error.
func LoadResultSet(dir string) (*ResultSet, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("loading results: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("loading results: %s is not a directory", dir)
	}
	set := &ResultSet{Dir: dir, Points: map[results.PointID]*results.CollectedPoint{}, GSM8K: map[int]*SetEval{}, sums: map[results.PointID][sha256.Size]byte{}}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && power.IsWindowsDir(path) {
			return fs.SkipDir // window records carry result names but are not results
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(name, ".json") || name == results.ManifestName ||
			strings.HasPrefix(name, "agg_") || strings.HasPrefix(name, "power_validation_") ||
			strings.HasPrefix(name, atomicfile.TempPrefix) {
			return nil
		}
		pn, perr := results.ParseName(name)
		switch {
		case perr == nil:
			return set.addPoint(path, pn.PointID)
		case !errors.Is(perr, results.ErrNotResultName):
			return perr // looks like a result name but its numbers are wrong
		case strings.HasPrefix(name, "results"):
			return set.addEval(path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loading results from %s: %w", dir, err)
	}
	if len(set.Points) == 0 && len(set.GSM8K) == 0 {
		return nil, fmt.Errorf("loading results: no SA-Bench or gsm8k result files under %s", dir)
	}
	set.loadEnergy()
	return set, nil
}

func (s *ResultSet) addPoint(path string, p results.PointID) error {
	data, err := readlimit.ReadFile(path, readlimit.Default)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if prev, ok := s.Points[p]; ok {
		if s.sums[p] == sum {
			return nil
		}
		return fmt.Errorf("two different results for %s: %s and %s", p.Label(), prev.Path, path)
	}
	r, err := results.ParseSABench(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s.Points[p] = &results.CollectedPoint{Point: p, Path: path, Result: r}
	s.sums[p] = sum
	if probs := r.Problems(); len(probs) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%s: %s", p.Label(), strings.Join(probs, "; ")))
	}
	return nil
}

func (s *ResultSet) addEval(path string) error {
	data, err := readlimit.ReadFile(path, readlimit.Default)
	if err != nil {
		return err
	}
	score, err := results.ParseLMEvalGSM8K(data)
	if errors.Is(err, results.ErrNoGSM8K) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	conc := 0
	if m := evalConcRE.FindStringSubmatch(filepath.Base(path)); m != nil {
		conc, _ = strconv.Atoi(m[1])
	}
	if prev, ok := s.GSM8K[conc]; ok {
		if sameScore(prev.Score, score) {
			return nil
		}
		// lm-eval names files results_<timestamp>.json: the greater name is newer.
		keep := prev
		if filepath.Base(path) > filepath.Base(prev.Path) {
			keep = &SetEval{Concurrency: conc, Path: path, Score: score}
		}
		s.GSM8K[conc] = keep
		s.Notes = append(s.Notes, fmt.Sprintf("%s: several gsm8k results (%s, %s); using the newest, %s",
			evalLabel(conc), filepath.Base(prev.Path), filepath.Base(path), filepath.Base(keep.Path)))
		return nil
	}
	s.GSM8K[conc] = &SetEval{Concurrency: conc, Path: path, Score: score}
	return nil
}

func sameScore(a, b *results.GSM8KScore) bool {
	eq := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.StrictMatch, b.StrictMatch) && eq(a.FlexibleExtract, b.FlexibleExtract) &&
		eq(a.StrictMatchStderr, b.StrictMatchStderr) && eq(a.FlexibleExtractStderr, b.FlexibleExtractStderr) &&
		a.Samples == b.Samples
}

func evalLabel(conc int) string {
	if conc == 0 {
		return "gsm8k"
	}
	return fmt.Sprintf("gsm8k c%d", conc)
}

// metric is one row kind of the comparison table.
type metric struct {
	key     string // JSON name
	label   string // table name, PR style
	unit    string
	prec    int
	inline  string // unit written after the values in the summary line
	pointFn func(*results.CollectedPoint) (float64, bool)
	evalFn  func(*results.GSM8KScore) (float64, bool)
}

func msField(key string, scale float64) func(*results.CollectedPoint) (float64, bool) {
	return func(sp *results.CollectedPoint) (float64, bool) {
		v, ok := sp.Result.Number(key)
		return v * scale, ok
	}
}

func perGPU(pick func(results.PerGPU) float64) func(*results.CollectedPoint) (float64, bool) {
	return func(sp *results.CollectedPoint) (float64, bool) {
		r := sp.Result
		if !r.Has("total_token_throughput") || !r.Has("output_throughput") {
			return 0, false
		}
		g, err := results.PerGPUThroughput(sp.Point, r.TotalTokenThroughput, r.OutputThroughput)
		if err != nil {
			return 0, false
		}
		return pick(g), true
	}
}

func score(pick func(*results.GSM8KScore) *float64) func(*results.GSM8KScore) (float64, bool) {
	return func(g *results.GSM8KScore) (float64, bool) {
		if v := pick(g); v != nil {
			return *v, true
		}
		return 0, false
	}
}

// Latencies: TTFT and E2E in seconds, as process_result.py's aggregates
// carry them; TPOT in milliseconds, as SA-Bench and the PR tables show it.
var pointMetrics = []metric{
	{key: "tput_per_gpu", label: "tput/GPU", unit: "tok/s/GPU", prec: 1, pointFn: perGPU(func(g results.PerGPU) float64 { return g.TputPerGPU })},
	{key: "output_tput_per_gpu", label: "out/GPU", unit: "tok/s/GPU", prec: 1, pointFn: perGPU(func(g results.PerGPU) float64 { return g.OutputTputPerGPU })},
	// TTFT in ms, as bench and run print it (one unit per metric everywhere).
	{key: "median_ttft_ms", label: "median TTFT", unit: "ms", inline: " ms", prec: 2, pointFn: msField("median_ttft_ms", 1)},
	{key: "median_tpot_ms", label: "median TPOT", unit: "ms", inline: " ms", prec: 2, pointFn: msField("median_tpot_ms", 1)},
	{key: "median_e2el_s", label: "median E2E", unit: "s", inline: " s", prec: 3, pointFn: msField("median_e2el_ms", 1.0/1000)},
}

var evalMetrics = []metric{
	{key: "gsm8k_strict_match", label: "strict-match", unit: "accuracy", prec: 4, evalFn: score(func(g *results.GSM8KScore) *float64 { return g.StrictMatch })},
	{key: "gsm8k_flexible_extract", label: "flexible-extract", unit: "accuracy", prec: 4, evalFn: score(func(g *results.GSM8KScore) *float64 { return g.FlexibleExtract })},
}

// Comparison is the baseline-versus-candidate table.
type Comparison struct {
	Baseline  string            `json:"baseline"`
	Candidate string            `json:"candidate"`
	Units     map[string]string `json:"units"`
	Rows      []ComparisonRow   `json:"rows"`
	Notes     []string          `json:"notes"`
}

// ComparisonRow is one metric of one point. A nil value is N/A: the point
// exists on one side only, or the value is missing; DeltaPct is nil then, and
// when the baseline is 0.
type ComparisonRow struct {
	Point       string   `json:"point"`
	Concurrency int      `json:"concurrency"`
	GPUs        int      `json:"gpus,omitempty"`
	PrefillGPUs int      `json:"ctx,omitempty"`
	DecodeGPUs  int      `json:"gen,omitempty"`
	Metric      string   `json:"metric"`
	Label       string   `json:"label"`
	Unit        string   `json:"unit"`
	Baseline    *float64 `json:"baseline"`
	Candidate   *float64 `json:"candidate"`
	DeltaPct    *float64 `json:"delta_pct"`

	prec   int
	inline string
}

// Compare pairs the points of two result sets by topology and concurrency,
// and the gsm8k scores by eval concurrency.
func Compare(baseline, candidate *ResultSet) *Comparison {
	c := &Comparison{Baseline: baseline.Dir, Candidate: candidate.Dir, Units: map[string]string{}, Notes: []string{}}
	for _, m := range append(append([]metric{}, pointMetrics...), evalMetrics...) {
		c.Units[m.key] = m.unit
	}
	hasEnergy := len(baseline.Energy) > 0 || len(candidate.Energy) > 0
	if hasEnergy {
		for _, m := range energyMetrics {
			c.Units[m.key] = m.unit
		}
	}

	order := unionKeys(baseline.Points, candidate.Points)
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.GPUs != b.GPUs {
			return a.GPUs < b.GPUs
		}
		if a.PrefillGPUs != b.PrefillGPUs {
			return a.PrefillGPUs < b.PrefillGPUs
		}
		if a.DecodeGPUs != b.DecodeGPUs {
			return a.DecodeGPUs < b.DecodeGPUs
		}
		return a.Concurrency < b.Concurrency
	})
	for _, p := range order {
		bp, cp := baseline.Points[p], candidate.Points[p]
		for _, m := range pointMetrics {
			row := ComparisonRow{Point: p.Label(), Concurrency: p.Concurrency, GPUs: p.GPUs,
				PrefillGPUs: p.PrefillGPUs, DecodeGPUs: p.DecodeGPUs}
			row.fill(m, valueOf(bp, m.pointFn), valueOf(cp, m.pointFn))
			c.Rows = append(c.Rows, row)
		}
		be, ce := baseline.Energy[p], candidate.Energy[p]
		if be == nil && ce == nil {
			continue
		}
		for _, m := range energyMetrics {
			fn := func(e *power.Energy) (float64, bool) { return energyValue(e, m.key) }
			bv, cv := valueOf(be, fn), valueOf(ce, fn)
			if bv == nil && cv == nil {
				continue // a role neither side has
			}
			row := ComparisonRow{Point: p.Label(), Concurrency: p.Concurrency, GPUs: p.GPUs,
				PrefillGPUs: p.PrefillGPUs, DecodeGPUs: p.DecodeGPUs}
			row.fill(m, bv, cv)
			c.Rows = append(c.Rows, row)
		}
	}

	evalOrder := unionKeys(baseline.GSM8K, candidate.GSM8K)
	sort.Ints(evalOrder)
	for _, conc := range evalOrder {
		var bs, cs *results.GSM8KScore
		if e := baseline.GSM8K[conc]; e != nil {
			bs = e.Score
		}
		if e := candidate.GSM8K[conc]; e != nil {
			cs = e.Score
		}
		for _, m := range evalMetrics {
			row := ComparisonRow{Point: evalLabel(conc), Concurrency: conc}
			row.fill(m, valueOf(bs, m.evalFn), valueOf(cs, m.evalFn))
			c.Rows = append(c.Rows, row)
		}
	}
	for _, n := range baseline.Notes {
		c.Notes = append(c.Notes, "baseline "+n)
	}
	for _, n := range candidate.Notes {
		c.Notes = append(c.Notes, "candidate "+n)
	}
	return c
}

// unionKeys lists the keys found in either map, each once, unordered.
func unionKeys[K comparable, V any](a, b map[K]V) []K {
	keys := make([]K, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, dup := a[k]; !dup {
			keys = append(keys, k)
		}
	}
	return keys
}

func valueOf[T any](x *T, fn func(*T) (float64, bool)) *float64 {
	if x == nil {
		return nil
	}
	v, ok := fn(x)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func (r *ComparisonRow) fill(m metric, base, cand *float64) {
	r.Metric, r.Label, r.Unit, r.prec, r.inline = m.key, m.label, m.unit, m.prec, m.inline
	r.Baseline, r.Candidate = base, cand
	if base != nil && cand != nil && *base != 0 {
		d := (*cand - *base) / math.Abs(*base) * 100
		r.DeltaPct = &d
	}
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error { return writeIndentedJSON(w, c) }

// WriteMarkdown writes the table (Point, Metric, Baseline, Candidate,
// Delta %), then one PR-style summary line per point, e.g.
// "ctx16/gen8 c2048 — tput/GPU 8534.8 → 8783.7, +2.9 %; median TTFT 60.718 → 55.498 s, −8.6 %".
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Baseline: `%s`  \nCandidate: `%s`  \n", c.Baseline, c.Candidate)
	b.WriteString("Units: tput/GPU = total tok/s over all GPUs, out/GPU = output tok/s over decode GPUs; " +
		"TTFT and TPOT in ms, E2E in s (as bench and run print them); gsm8k as exact-match accuracy. ")
	if _, ok := c.Units["joules_per_output_token"]; ok {
		b.WriteString("Energy in J per output token over the point's window, power as the mean W per GPU of the role (LOGS/power). ")
	}
	b.WriteString("Delta % = (candidate − baseline) / baseline.\n\n")
	b.WriteString("| Point | Metric | Baseline | Candidate | Delta % |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: |\n")
	for _, r := range c.Rows {
		label := r.Label
		if r.Unit == "s" || r.Unit == "ms" {
			label += " (" + r.Unit + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Point, label,
			formatValue(r.Baseline, r.prec), formatValue(r.Candidate, r.prec), formatDelta(r.DeltaPct))
	}

	// The table says every number once; below it only what it cannot:
	// points that exist on one side.
	var only []string
	for i := 0; i < len(c.Rows); {
		j := i
		inBase, inCand := false, false
		for ; j < len(c.Rows) && c.Rows[j].Point == c.Rows[i].Point; j++ {
			inBase = inBase || c.Rows[j].Baseline != nil
			inCand = inCand || c.Rows[j].Candidate != nil
		}
		switch {
		case !inCand:
			only = append(only, fmt.Sprintf("- %s — only in baseline\n", c.Rows[i].Point))
		case !inBase:
			only = append(only, fmt.Sprintf("- %s — only in candidate\n", c.Rows[i].Point))
		}
		i = j
	}
	if len(only) > 0 {
		b.WriteString("\n" + strings.Join(only, ""))
	}
	if len(c.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func formatValue(v *float64, prec int) string {
	if v == nil {
		return "N/A"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

// formatDelta writes a signed percentage with a typographic minus, as the
// PR tables do: "+2.9 %", "−8.6 %".
func formatDelta(d *float64) string {
	if d == nil {
		return "N/A"
	}
	s := strconv.FormatFloat(*d, 'f', 1, 64)
	switch {
	case s == "0.0" || s == "-0.0":
		return "0.0 %"
	case strings.HasPrefix(s, "-"):
		return "−" + s[1:] + " %"
	}
	return "+" + s + " %"
}
