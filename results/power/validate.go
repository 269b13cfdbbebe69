package power

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// clock tolerance between a window's wall span and its reported duration.
const (
	clockToleranceSeconds  = 0.5
	clockToleranceFraction = 0.01
)

// ValidateDevices requires a non-empty expected set that exactly matches
// stable observations: every expected GPU seen, nothing else seen, one UUID
// per GPU and no UUID on two GPUs, one role per GPU and one het group per node.
func ValidateDevices(expected []ExpectedDevice, observed []ObservedDevice) []Reason {
	var rs reasons
	exp := map[DeviceKey]bool{}
	for _, d := range expected {
		exp[d.Key()] = true
	}
	obs := map[DeviceKey]bool{}
	for _, d := range observed {
		obs[d.Key()] = true
	}
	missing := len(exp) == 0
	for k := range exp {
		if !obs[k] {
			missing = true
		}
	}
	if missing {
		rs.add(ExpectedDeviceMissing)
	}
	for k := range obs {
		if !exp[k] {
			rs.add(UnexpectedDevice)
		}
	}
	uuids := map[string]bool{}
	for _, d := range observed {
		if len(d.GPUUUIDs) != 1 || uuids[d.GPUUUIDs[0]] {
			rs.add(GPUUUIDChanged)
			break
		}
		uuids[d.GPUUUIDs[0]] = true
	}
	groups := map[string]string{}
	for _, d := range expected {
		roles, hets := map[string]bool{}, map[string]bool{}
		for _, a := range d.Assignments {
			roles[a.WorkerRole] = true
			hets[hetKey(a.HetGroup)] = true
		}
		if len(roles) != 1 {
			rs.add(ConflictingWorkerRoles)
		}
		if len(hets) != 1 {
			rs.add(ConflictingHetGroups)
			continue
		}
		for h := range hets {
			if g, ok := groups[d.Hostname]; ok && g != h {
				rs.add(ConflictingHetGroups)
			}
			groups[d.Hostname] = h
		}
	}
	return rs
}

func hetKey(g *int) string {
	if g == nil {
		return "none"
	}
	return fmt.Sprint(*g)
}

type parsedWindow struct {
	rel   string
	rec   WindowRecord
	end   float64
	dur   float64
	ended bool
}

type windowKey struct {
	typ  string
	conc int
}

// ValidateWindows emits exactly one row per expected window and records
// every unexpected, malformed, duplicate or unsafe file in the returned
// artifact errors, so a missing window never passes vacuously.
func ValidateWindows(powerDir, resultRoot string, expected []ExpectedWindow, expectedDevices []ExpectedDevice, observed []ObservedDevice) ([]WindowValidation, []ArtifactError) {
	var errs []ArtifactError
	parsed, dups := scanWindows(filepath.Join(powerDir, WindowsDir), resultRoot, &errs)
	expKeys := map[windowKey]bool{}
	for _, w := range expected {
		expKeys[windowKey{w.BenchmarkType, w.Concurrency}] = true
	}
	keys := make([]windowKey, 0, len(parsed))
	for k := range parsed {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].typ != keys[j].typ {
			return keys[i].typ < keys[j].typ
		}
		return keys[i].conc < keys[j].conc
	})
	for _, k := range keys {
		if !expKeys[k] {
			errs = append(errs, ArtifactError{Path: parsed[k].rel, Reasons: []Reason{WindowUnexpected}})
		}
	}
	var devKeys []DeviceKey
	for _, d := range expectedDevices {
		devKeys = append(devKeys, d.Key())
	}
	sort.Slice(devKeys, func(i, j int) bool { return devKeys[i].less(devKeys[j]) })
	rows := make([]WindowValidation, 0, len(expected))
	for _, e := range expected {
		k := windowKey{e.BenchmarkType, e.Concurrency}
		rows = append(rows, validateOne(e, parsed[k], dups[k], resultRoot, devKeys, observed))
	}
	if errs == nil {
		errs = []ArtifactError{}
	}
	return rows, errs
}

func scanWindows(dir, resultRoot string, errs *[]ArtifactError) (map[windowKey]*parsedWindow, map[windowKey]bool) {
	parsed := map[windowKey]*parsedWindow{}
	dups := map[windowKey]bool{}
	st, err := os.Lstat(dir)
	if err != nil {
		return parsed, dups
	}
	if !st.IsDir() {
		*errs = append(*errs, ArtifactError{Path: WindowsDir, Reasons: []Reason{WindowArtifactPathBad}})
		return parsed, dups
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		*errs = append(*errs, ArtifactError{Path: WindowsDir, Reasons: []Reason{WindowArtifactPathBad}})
		return parsed, dups
	}
	for _, e := range entries { // ReadDir sorts by name, as the contract scans
		rel := WindowsDir + "/" + e.Name()
		if !e.Type().IsRegular() || path.Ext(e.Name()) != ".json" {
			*errs = append(*errs, ArtifactError{Path: rel, Reasons: []Reason{WindowArtifactPathBad}})
			continue
		}
		w, r := parseWindow(filepath.Join(dir, e.Name()), rel, resultRoot)
		if w == nil {
			*errs = append(*errs, ArtifactError{Path: rel, Reasons: []Reason{r}})
			continue
		}
		k := windowKey{w.rec.BenchmarkType, w.rec.Concurrency}
		if dups[k] {
			*errs = append(*errs, ArtifactError{Path: rel, Reasons: []Reason{WindowDuplicate}})
			continue
		}
		if prev, ok := parsed[k]; ok {
			delete(parsed, k)
			dups[k] = true
			*errs = append(*errs,
				ArtifactError{Path: prev.rel, Reasons: []Reason{WindowDuplicate}},
				ArtifactError{Path: rel, Reasons: []Reason{WindowDuplicate}})
			continue
		}
		parsed[k] = w
	}
	return parsed, dups
}

func parseWindow(file, rel, resultRoot string) (*parsedWindow, Reason) {
	b, err := readlimit.ReadFile(file, 1<<20)
	if err != nil {
		return nil, WindowMalformed
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return nil, WindowMalformed
	}
	var rec WindowRecord
	if json.Unmarshal(b, &rec) != nil {
		return nil, WindowMalformed
	}
	// Types the contract is strict about: integers stay integers, the start
	// is a finite number, the status one of four.
	if !isJSONInt(raw["schema_version"]) || rec.SchemaVersion != SchemaVersion || rec.ClockSource != ClockSource ||
		!isJSONInt(raw["concurrency"]) || !isJSONString(raw["benchmark_type"]) || !isJSONNumber(raw["benchmark_start_time_unix"]) ||
		!finite(rec.StartUnix) {
		return nil, WindowMalformed
	}
	switch rec.Status {
	case WindowRunning, WindowCompleted, WindowFailed, WindowInterrupted:
	default:
		return nil, WindowMalformed
	}
	if !safeRelative(rec.ResultPath) || strings.TrimSuffix(path.Base(rec.ResultPath), path.Ext(rec.ResultPath)) != strings.TrimSuffix(path.Base(rel), ".json") {
		return nil, WindowResultPathInvalid
	}
	if !staysBelow(resultRoot, rec.ResultPath) {
		return nil, WindowResultPathInvalid
	}
	w := &parsedWindow{rel: rel, rec: rec}
	hasReason := rec.Reason != nil && *rec.Reason != ""
	switch rec.Status {
	case WindowRunning:
		if rec.EndUnix != nil || rec.Duration != nil || rec.Reason != nil {
			return nil, WindowMalformed
		}
	case WindowInterrupted:
		if rec.EndUnix != nil || rec.Duration != nil || !hasReason {
			return nil, WindowMalformed
		}
	default:
		if rec.EndUnix == nil || rec.Duration == nil || !finite(*rec.EndUnix) || !finite(*rec.Duration) || *rec.Duration <= 0 {
			return nil, WindowMalformed
		}
		if (rec.Status == WindowCompleted) == (rec.Reason != nil) || (rec.Status == WindowFailed && !hasReason) {
			return nil, WindowMalformed
		}
		w.end, w.dur, w.ended = *rec.EndUnix, *rec.Duration, true
	}
	return w, ""
}

func validateOne(e ExpectedWindow, w *parsedWindow, duplicated bool, resultRoot string, devKeys []DeviceKey, observed []ObservedDevice) WindowValidation {
	v := WindowValidation{BenchmarkType: e.BenchmarkType, Concurrency: e.Concurrency, Reasons: []Reason{}, MaxGapSeconds: map[string]float64{}}
	if w == nil {
		if duplicated {
			v.Reasons = []Reason{WindowDuplicate}
		} else {
			v.Reasons = []Reason{WindowMissing}
		}
		return v
	}
	rel := w.rel
	v.WindowFile = &rel
	var rs reasons
	if w.rec.Status != WindowCompleted {
		rs.add(WindowIncomplete)
	} else if r := checkResult(w, resultRoot); r != "" {
		rs.add(r)
	}
	if len(rs) == 0 {
		gaps, cov := checkCoverage(w.rec.StartUnix, w.end, devKeys, observed)
		rs.add(cov...)
		if len(cov) == 0 {
			v.MaxGapSeconds = gaps
		}
	}
	v.Reasons = rs.list()
	v.CoverageValid = len(rs) == 0
	return v
}

// checkResult requires the result a completed window points at to carry the
// same start, end and duration, and the wall span to agree with the duration.
func checkResult(w *parsedWindow, resultRoot string) Reason {
	b, err := readlimit.ReadFile(filepath.Join(resultRoot, filepath.FromSlash(w.rec.ResultPath)), 256<<20)
	if err != nil {
		return WindowResultMissing
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(b, &res) != nil {
		return WindowResultMismatch
	}
	var start, end, dur float64
	for name, dst := range map[string]*float64{"benchmark_start_time_unix": &start, "benchmark_end_time_unix": &end, "duration": &dur} {
		if !isJSONNumber(res[name]) || json.Unmarshal(res[name], dst) != nil || !finite(*dst) {
			return WindowResultMismatch
		}
	}
	if start != w.rec.StartUnix || end != w.end || dur != w.dur {
		return WindowResultMismatch
	}
	wall := w.end - w.rec.StartUnix
	if wall <= 0 || math.Abs(wall-w.dur) > math.Max(clockToleranceSeconds, clockToleranceFraction*w.dur) {
		return WindowClockMismatch
	}
	return ""
}

// checkCoverage requires every expected GPU to have a sample at or before the
// start, one at or after the end, and no gap above MaxSampleGapSeconds in
// between (bracketing samples included).
func checkCoverage(start, end float64, devKeys []DeviceKey, observed []ObservedDevice) (map[string]float64, []Reason) {
	byKey := map[DeviceKey]ObservedDevice{}
	for _, d := range observed {
		byKey[d.Key()] = d
	}
	gaps := map[string]float64{}
	var rs reasons
	for _, k := range devKeys {
		d, ok := byKey[k]
		if !ok {
			rs.add(WindowNotBracketed)
			continue
		}
		if len(d.GPUUUIDs) != 1 {
			rs.add(GPUUUIDChanged)
			continue
		}
		seq := bracketing(d.sampleTimes, start, end)
		if seq == nil {
			rs.add(WindowNotBracketed)
			continue
		}
		largest := 0.0
		for i := 1; i < len(seq); i++ {
			largest = math.Max(largest, seq[i]-seq[i-1])
		}
		gaps[d.Hostname+"/"+d.GPUUUIDs[0]] = largest
		if largest > MaxSampleGapSeconds {
			rs.add(SampleGapExceeded)
		}
	}
	return gaps, rs
}

// bracketing returns the last sample at or before start, every sample
// inside, and the first at or after end; nil when either bound is missing.
func bracketing(sorted []float64, start, end float64) []float64 {
	var before, after float64
	hasBefore, hasAfter := false, false
	var inside []float64
	for _, t := range sorted {
		if t <= start {
			before, hasBefore = t, true
		}
		if t > start && t < end {
			inside = append(inside, t)
		}
		if t >= end && !hasAfter {
			after, hasAfter = t, true
		}
	}
	if !hasBefore || !hasAfter {
		return nil
	}
	return append(append([]float64{before}, inside...), after)
}

func safeRelative(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == ".." {
			return false
		}
	}
	return true
}

// staysBelow resolves root/rel (symlinks included) and requires it below root.
func staysBelow(root, rel string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	p, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		// A result that does not exist yet still stays below when its
		// lexical path does; checkResult reports it missing.
		p = filepath.Join(r, filepath.FromSlash(rel))
	}
	out, err := filepath.Rel(r, p)
	return err == nil && out != ".." && !strings.HasPrefix(out, "../")
}

func isJSONInt(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	if s == "" || strings.ContainsAny(s, ".eE\"") || s == "true" || s == "false" || s == "null" {
		return false
	}
	var n json.Number
	return json.Unmarshal(raw, &n) == nil
}

func isJSONNumber(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "true" || s == "false" || s == "null" || strings.HasPrefix(s, "\"") {
		return false
	}
	var n json.Number
	return json.Unmarshal(raw, &n) == nil
}

func isJSONString(raw json.RawMessage) bool {
	return strings.HasPrefix(strings.TrimSpace(string(raw)), "\"")
}
