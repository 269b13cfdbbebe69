package results

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// CollectOptions says what a run was asked to measure and where SA-Bench
// wrote it.
type CollectOptions struct {
	// ResultsDir is searched recursively for raw result names
	// (results_concurrency_*.json), e.g. a run's logs directory or one
	// sa-bench_isl_<I>_osl_<O> directory in it.
	ResultsDir string
	// Concurrencies are the point's requested concurrencies, e.g. 8 and 32
	// for a recipe's "8x32".
	Concurrencies []int
	// Topology, if its GPUs is set, is the topology every result must name
	// (its Concurrency is ignored); otherwise any topology is accepted.
	Topology PointID
	// Config overrides the SA-Bench config name of the collected results;
	// by default it is the name of the directory under ResultsDir the file
	// sits in (the launchers' CONFIG_NAME), or ResultsDir's own name.
	Config string
}

// CollectedPoint is one point's result file: a requested concurrency's
// valid result (Collect), or any result found (LoadResultSet).
type CollectedPoint struct {
	Point  PointID
	Config string // SA-Bench config name, e.g. sa-bench_isl_8192_osl_1024
	Path   string // the raw result file
	Result *SABenchResult
}

// InvalidPoint is a concurrency whose result exists but cannot count.
type InvalidPoint struct {
	Concurrency int
	Path        string
	Reasons     []string
}

// IncompleteError reports requested concurrencies without a valid result.
// Its message names them: "missing points: 1024, 2048; invalid points: 512
// (0 output tokens)".
type IncompleteError struct {
	Missing []int
	Invalid []InvalidPoint
}

func (e *IncompleteError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		nums := make([]string, len(e.Missing))
		for i, c := range e.Missing {
			nums[i] = strconv.Itoa(c)
		}
		parts = append(parts, "missing points: "+strings.Join(nums, ", "))
	}
	if len(e.Invalid) > 0 {
		items := make([]string, len(e.Invalid))
		for i, p := range e.Invalid {
			items[i] = fmt.Sprintf("%d (%s)", p.Concurrency, strings.Join(p.Reasons, "; "))
		}
		parts = append(parts, "invalid points: "+strings.Join(items, ", "))
	}
	return strings.Join(parts, "; ")
}

// Collection is what Collect found.
type Collection struct {
	// Points holds one valid result per requested concurrency, in request order.
	Points []CollectedPoint
	// Unrequested lists result files for concurrencies nobody asked for.
	Unrequested []string
}

// Collect finds the result of every requested concurrency under
// opt.ResultsDir and checks it. A concurrency without a file, or whose file
// fails the checks (required SA-Bench fields, completed > 0, output tokens
// > 0, failure rate, max_concurrency matching the name, not marked
// "slurmbench_valid": false), makes Collect return an *IncompleteError next to
// the points that did pass.
func Collect(opt CollectOptions) (*Collection, error) {
	if len(opt.Concurrencies) == 0 {
		return nil, errors.New("collecting results: no concurrencies requested")
	}
	requested := map[int]bool{}
	for _, c := range opt.Concurrencies {
		if c < 1 {
			return nil, fmt.Errorf("collecting results: requested concurrency %d: must be at least 1", c)
		}
		if requested[c] {
			return nil, fmt.Errorf("collecting results: concurrency %d requested twice", c)
		}
		requested[c] = true
	}
	if opt.Topology.GPUs != 0 {
		topo := opt.Topology
		topo.Concurrency = 1
		if err := topo.Validate(); err != nil {
			return nil, fmt.Errorf("collecting results: expected topology: %w", err)
		}
	}

	found := map[int][]string{}
	coll := &Collection{}
	err := filepath.WalkDir(opt.ResultsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		pn, perr := ParseName(d.Name())
		if perr != nil || pn.Form != RawForm {
			return nil
		}
		if !requested[pn.Concurrency] {
			coll.Unrequested = append(coll.Unrequested, path)
			return nil
		}
		found[pn.Concurrency] = append(found[pn.Concurrency], path)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("collecting results from %s: %w", opt.ResultsDir, err)
	}

	incomplete := &IncompleteError{}
	for _, c := range opt.Concurrencies {
		paths := found[c]
		switch {
		case len(paths) == 0:
			incomplete.Missing = append(incomplete.Missing, c)
			continue
		case len(paths) > 1:
			incomplete.Invalid = append(incomplete.Invalid, InvalidPoint{Concurrency: c, Path: paths[0],
				Reasons: []string{"several result files: " + strings.Join(paths, ", ")}})
			continue
		}
		cp, reasons := checkPoint(paths[0], opt)
		if len(reasons) > 0 {
			incomplete.Invalid = append(incomplete.Invalid, InvalidPoint{Concurrency: c, Path: paths[0], Reasons: reasons})
			continue
		}
		coll.Points = append(coll.Points, cp)
	}
	sort.Strings(coll.Unrequested)
	if len(incomplete.Missing) > 0 || len(incomplete.Invalid) > 0 {
		return coll, incomplete
	}
	return coll, nil
}

// checkPoint reads one raw result file and lists what is wrong with it.
func checkPoint(path string, opt CollectOptions) (CollectedPoint, []string) {
	pn, _ := ParseName(filepath.Base(path))
	cp := CollectedPoint{Point: pn.PointID, Path: path, Config: opt.Config}
	if cp.Config == "" {
		cp.Config = configName(opt.ResultsDir, path)
	}
	var reasons []string
	if t := opt.Topology; t.GPUs != 0 && (t.GPUs != pn.GPUs || t.PrefillGPUs != pn.PrefillGPUs || t.DecodeGPUs != pn.DecodeGPUs) {
		want := t
		want.Concurrency = pn.Concurrency
		reasons = append(reasons, fmt.Sprintf("topology %s, expected %s", strings.TrimPrefix(pn.topology(), "_"), strings.TrimPrefix(want.topology(), "_")))
	}
	data, err := readlimit.ReadFile(path, MaxResultBytes)
	if err != nil {
		return cp, append(reasons, "unreadable: "+err.Error())
	}
	r, err := ParseSABench(data)
	if err != nil {
		return cp, append(reasons, "not SA-Bench JSON: "+err.Error())
	}
	cp.Result = r
	reasons = append(reasons, r.Problems()...)
	if r.MaxConcurrency > 0 && r.MaxConcurrency != pn.Concurrency {
		reasons = append(reasons, fmt.Sprintf("max_concurrency %d in the file", r.MaxConcurrency))
	}
	return cp, reasons
}

// configName is the launchers' CONFIG_NAME: the directory directly under
// the results root that holds the file, or the root's own name.
func configName(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err == nil {
		if first, _, ok := strings.Cut(filepath.ToSlash(rel), "/"); ok {
			return first
		}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	return filepath.Base(abs)
}

// MaxResultBytes bounds every result file read on the login node (SA-Bench
// points, custom-benchmark results, lm-eval scores): whatever a job left
// there, a read allocates at most this much and fails naming the limit.
const MaxResultBytes = readlimit.Default
