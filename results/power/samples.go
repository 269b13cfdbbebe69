package power

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SampleRow is one persisted observation of one GPU.
type SampleRow struct {
	TimestampUnix float64
	ScrapeSeq     int
	Hostname      string
	GPUIndex      int
	GPUUUID       string
	PowerW        float64
}

type rowKey struct {
	seq  int
	host string
	gpu  int
}

func (r SampleRow) key() rowKey { return rowKey{r.ScrapeSeq, r.Hostname, r.GPUIndex} }

func (r SampleRow) record() []string {
	return []string{
		strconv.Itoa(SchemaVersion), pyFloat(r.TimestampUnix), strconv.Itoa(r.ScrapeSeq),
		r.Hostname, strconv.Itoa(r.GPUIndex), r.GPUUUID, pyFloat(r.PowerW),
	}
}

// pyFloat formats like Python's repr of a float in the range this contract
// uses (always a decimal point), so the file reads the same to either side.
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// DeviceKey names one GPU: the node it sits in and its index there.
type DeviceKey struct {
	Hostname string
	GPUIndex int
}

func (k DeviceKey) less(o DeviceKey) bool {
	if k.Hostname != o.Hostname {
		return k.Hostname < o.Hostname
	}
	return k.GPUIndex < o.GPUIndex
}

// ObservedDevice is a GPU as it appeared in the persisted samples.
type ObservedDevice struct {
	Hostname      string    `json:"hostname"`
	GPUIndex      int       `json:"gpu_index"`
	GPUUUIDs      []string  `json:"gpu_uuids"`
	FirstSample   float64   `json:"first_sample_time_unix"`
	LastSample    float64   `json:"last_sample_time_unix"`
	sampleTimes   []float64 // sorted
	samplesByTime []SampleRow
}

// Key returns the device's key.
func (d ObservedDevice) Key() DeviceKey { return DeviceKey{d.Hostname, d.GPUIndex} }

// sampleWriter appends rows to samples.csv; it is owned by the collector.
type sampleWriter struct {
	f    *os.File
	w    *csv.Writer
	rows int
}

func newSampleWriter(path string) (*sampleWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	w.UseCRLF = true // Python's csv module ends rows with \r\n
	if err := w.Write(SamplesHeader); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	w.Flush()
	return &sampleWriter{f: f, w: w}, w.Error()
}

func (s *sampleWriter) append(rows []SampleRow) error {
	for _, r := range rows {
		if err := s.w.Write(r.record()); err != nil {
			return err
		}
		s.rows++
	}
	s.w.Flush()
	return s.w.Error()
}

func (s *sampleWriter) close() error {
	s.w.Flush()
	werr := s.w.Error()
	if err := s.f.Sync(); err != nil && werr == nil {
		werr = err
	}
	if err := s.f.Close(); err != nil && werr == nil {
		werr = err
	}
	return werr
}

// maxSamplesBytes bounds what ReadSamples reads: a day at 1 Hz of 72 GPUs is
// far below it.
const maxSamplesBytes = 1 << 30

// ReadSamples parses samples.csv strictly, as the consumer re-reads it:
// malformed rows are dropped with samples_csv_malformed, repeated
// (scrape_seq, hostname, gpu_index) keys with duplicate_sample_row, and a GPU
// whose timestamps go backwards in scrape order is timestamp_non_monotonic.
func ReadSamples(path string) ([]SampleRow, []Reason) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, []Reason{SamplesCSVMissing}
	}
	if err != nil {
		return nil, []Reason{SamplesCSVMalformed}
	}
	defer f.Close()
	var rs reasons
	r := csv.NewReader(bufio.NewReader(io.LimitReader(f, maxSamplesBytes)))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil || !slices.Equal(header, SamplesHeader) {
		return nil, []Reason{SamplesCSVHeader}
	}
	var rows []SampleRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			rs.add(SamplesCSVMalformed)
			break
		}
		row, ok := parseRow(rec)
		if !ok {
			rs.add(SamplesCSVMalformed)
			continue
		}
		rows = append(rows, row)
	}
	seen := map[rowKey]bool{}
	unique := rows[:0]
	for _, row := range rows {
		if seen[row.key()] {
			rs.add(DuplicateSampleRow)
			continue
		}
		seen[row.key()] = true
		unique = append(unique, row)
	}
	if nonMonotonic(unique) {
		rs.add(TimestampNonMonotonic)
	}
	return unique, rs
}

func parseRow(rec []string) (SampleRow, bool) {
	if len(rec) != len(SamplesHeader) {
		return SampleRow{}, false
	}
	schema, e1 := strconv.Atoi(rec[0])
	ts, e2 := strconv.ParseFloat(rec[1], 64)
	seq, e3 := strconv.Atoi(rec[2])
	idx, e4 := strconv.Atoi(rec[4])
	pw, e5 := strconv.ParseFloat(rec[6], 64)
	if errors.Join(e1, e2, e3, e4, e5) != nil {
		return SampleRow{}, false
	}
	row := SampleRow{TimestampUnix: ts, ScrapeSeq: seq, Hostname: rec[3], GPUIndex: idx, GPUUUID: rec[5], PowerW: pw}
	switch {
	case schema != SchemaVersion, row.Hostname == "", row.GPUUUID == "",
		!finite(ts), !finite(pw), pw < 0, pw > MaxGPUPowerW, seq < 0, idx < 0, idx >= MaxGPUsPerNode:
		return SampleRow{}, false
	}
	return row, true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// byDevice groups rows per GPU, each group in scrape order.
func byDevice(rows []SampleRow) map[DeviceKey][]SampleRow {
	m := map[DeviceKey][]SampleRow{}
	for _, r := range rows {
		k := DeviceKey{r.Hostname, r.GPUIndex}
		m[k] = append(m[k], r)
	}
	for _, g := range m {
		sort.SliceStable(g, func(i, j int) bool { return g[i].ScrapeSeq < g[j].ScrapeSeq })
	}
	return m
}

// nonMonotonic reports a GPU whose timestamps do not increase strictly in
// scrape order (the consumer's rule, stricter than "never decrease").
func nonMonotonic(rows []SampleRow) bool {
	for _, g := range byDevice(rows) {
		for i := 1; i < len(g); i++ {
			if g[i].TimestampUnix <= g[i-1].TimestampUnix {
				return true
			}
		}
	}
	return false
}

// DeriveObserved collapses rows into per-GPU identity and sample bounds,
// sorted by (hostname, gpu_index).
func DeriveObserved(rows []SampleRow) []ObservedDevice {
	groups := byDevice(rows)
	keys := make([]DeviceKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	out := make([]ObservedDevice, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		d := ObservedDevice{Hostname: k.Hostname, GPUIndex: k.GPUIndex, GPUUUIDs: []string{}}
		times := make([]float64, 0, len(g))
		for _, r := range g {
			if !slices.Contains(d.GPUUUIDs, r.GPUUUID) {
				d.GPUUUIDs = append(d.GPUUUIDs, r.GPUUUID)
			}
			times = append(times, r.TimestampUnix)
		}
		sort.Float64s(times)
		d.FirstSample, d.LastSample = times[0], times[len(times)-1]
		d.sampleTimes = times
		sorted := slices.Clone(g)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].TimestampUnix < sorted[j].TimestampUnix })
		d.samplesByTime = sorted
		out = append(out, d)
	}
	return out
}
