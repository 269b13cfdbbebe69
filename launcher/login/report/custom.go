package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// BenchmarkInfo is what ran as the benchmark: the client (native or
// sa-bench) and why the plan chose it, or the custom command.
type BenchmarkInfo struct {
	Type         string `json:"type"`
	Client       string `json:"client,omitempty"`
	ClientReason string `json:"client_reason,omitempty"`
	Command      string `json:"command,omitempty"`
	// Script is the command of one of srtctl's other benchmark types, as
	// run (slurmbench srtctl-bench TYPE ARGS...).
	Script string `json:"script,omitempty"`
}

// CustomRow is what a custom benchmark produced.
type CustomRow struct {
	results.CustomFiles
	// Results are the aggregated result files, one line each.
	Results []CustomResultRow `json:"results"`
}

// CustomResultRow is one aggregated result with its key metrics.
type CustomResultRow struct {
	File        string `json:"file"`
	Concurrency int    `json:"concurrency"`
	// Metrics are "name=value" for the results.KeyMetrics the file has.
	Metrics []string `json:"metrics"`
	Valid   bool     `json:"valid"`
	Note    string   `json:"note,omitempty"`
}

func benchmarkInfo(pl *plan.Plan) *BenchmarkInfo {
	bm := pl.Benchmark
	if bm.Type == "" {
		return nil
	}
	info := &BenchmarkInfo{Type: bm.Type, Client: string(bm.Client), ClientReason: bm.ClientReason}
	if bm.Custom != nil {
		info.Command = plan.QuoteArgv(bm.Custom.Argv)
	}
	if bm.Srtctl != nil {
		info.Script = plan.QuoteArgv(bm.Srtctl.Argv)
	}
	return info
}

// AddCustom records what a custom benchmark left.
func (s *Summary) AddCustom(out *results.CustomOutput) {
	if out == nil {
		return
	}
	row := &CustomRow{CustomFiles: out.CustomFiles}
	for _, r := range out.Results {
		rr := CustomResultRow{File: filepath.Base(r.Path), Concurrency: r.Concurrency, Valid: r.Valid, Note: r.Note}
		for _, k := range results.KeyMetrics {
			if v, ok := r.Metrics[k]; ok {
				rr.Metrics = append(rr.Metrics, k+"="+strconv.FormatFloat(v, 'g', 6, 64))
			}
		}
		if len(rr.Metrics) == 0 {
			// No key metric: show what numbers the file has, by name.
			keys := make([]string, 0, len(r.Metrics))
			for k := range r.Metrics {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if len(keys) > 6 {
				keys = append(keys[:6], fmt.Sprintf("(+%d more)", len(keys)-6))
			}
			rr.Metrics = append(rr.Metrics, "fields: "+strings.Join(keys, ", "))
		}
		row.Results = append(row.Results, rr)
	}
	s.Custom = row
}

// customLines are the summary's lines about the benchmark beyond the point
// table: which client ran and why, and what a custom workload produced.
func (s Summary) customLines() []string {
	var out []string
	if bi := s.Benchmark; bi != nil {
		switch {
		case bi.Command != "":
			out = append(out, "benchmark: custom command "+bi.Command)
		case bi.Script != "":
			out = append(out, "benchmark: "+bi.Type+", as srtctl runs it: "+bi.Script)
		case bi.Client != "":
			line := "benchmark client: " + bi.Client
			if bi.ClientReason != "" {
				line += " (" + bi.ClientReason + ")"
			}
			out = append(out, line)
		}
	}
	if c := s.Custom; c != nil {
		line := fmt.Sprintf("custom workload: %d files, %d bytes in %s", c.Files, c.Bytes, c.ResultDir)
		if len(c.ConcDirs) > 0 {
			concs := make([]string, len(c.ConcDirs))
			for i, n := range c.ConcDirs {
				concs[i] = "conc_" + strconv.Itoa(n)
			}
			line += " (" + strings.Join(concs, ", ") + ")"
		}
		out = append(out, line)
		if len(c.Results) == 0 {
			out = append(out, "  no aggregated result file")
		}
		for _, r := range c.Results {
			v := "valid"
			if !r.Valid {
				v = "INVALID: " + r.Note
			}
			out = append(out, fmt.Sprintf("  c%d %s: %s; %s", r.Concurrency, r.File, strings.Join(r.Metrics, " "), v))
		}
	}
	return out
}
