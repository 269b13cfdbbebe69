package power

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Reading is one physical GPU's power draw in one scrape.
type Reading struct {
	GPUIndex int
	GPUUUID  string
	PowerW   float64
}

// Scrape is what one exporter answer yields: the readings that may be
// persisted and why anything was dropped.
type Scrape struct {
	Readings []Reading
	Reasons  []Reason
}

// Bounds on what one scrape may claim: a GPU draws at most a few kW (a
// B200 is rated 1 kW), and a node holds at most a few dozen GPUs. A value
// past them is a broken exporter, not a reading: 1e308 W would make the
// energy +Inf J, and an unbounded index lets one 16 MiB scrape report
// hundreds of thousands of GPUs.
const (
	MaxGPUPowerW   = 10_000.0
	MaxGPUsPerNode = 64
	// MaxScrapeBytes bounds one exporter answer; a larger one is
	// endpoint_parse_error, never a cut-off body parsed as if whole (a
	// DCGM exporter answers tens of KB).
	MaxScrapeBytes = 16 << 20
)

// migLabels mark a MIG instance, whose power cannot be attributed to a GPU.
var migLabels = []string{"GPU_I_ID", "GPU_I_PROFILE"}

// ParseScrape reads one exporter /metrics body (Prometheus text exposition)
// and keeps only DCGM_FI_DEV_POWER_USAGE. Device identity comes from the
// "gpu" and "UUID" labels; "Hostname" is ignored because the collector knows
// which node it polled. A body that is not valid exposition yields only
// endpoint_parse_error; a GPU reported twice is dropped entirely.
func ParseScrape(body string) Scrape {
	var rs reasons
	byIndex := map[int]Reading{}
	duplicated := map[int]bool{}
	sawPower := false
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseSampleLine(line)
		if err != nil {
			return Scrape{Reasons: []Reason{EndpointParseError}}
		}
		if s.name != PowerMetric {
			continue
		}
		sawPower = true
		if hasAnyLabel(s.labels, migLabels) {
			rs.add(MIGInstanceUnsupported)
			continue
		}
		idx, err := strconv.Atoi(s.labels["gpu"])
		if err != nil || idx < 0 {
			rs.add(GPUIndexMissing)
			continue
		}
		if idx >= MaxGPUsPerNode {
			rs.add(UnexpectedDevice)
			continue
		}
		uuid := strings.TrimSpace(s.labels["UUID"])
		if uuid == "" {
			rs.add(GPUUUIDMissing)
			continue
		}
		if math.IsNaN(s.value) || math.IsInf(s.value, 0) || s.value < 0 || s.value > MaxGPUPowerW {
			rs.add(InvalidPowerValue)
			continue
		}
		if _, seen := byIndex[idx]; seen {
			duplicated[idx] = true
			continue
		}
		byIndex[idx] = Reading{GPUIndex: idx, GPUUUID: uuid, PowerW: s.value}
	}
	if len(duplicated) > 0 {
		rs.add(DuplicatePowerMetric)
		for idx := range duplicated {
			delete(byIndex, idx)
		}
	}
	if !sawPower {
		rs.add(PowerMetricMissing)
	}
	out := Scrape{Reasons: rs}
	for _, r := range byIndex {
		out.Readings = append(out.Readings, r)
	}
	sort.Slice(out.Readings, func(i, j int) bool { return out.Readings[i].GPUIndex < out.Readings[j].GPUIndex })
	return out
}

func hasAnyLabel(labels map[string]string, names []string) bool {
	for _, n := range names {
		if labels[n] != "" {
			return true
		}
	}
	return false
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseSampleLine parses `name{label="value",...} value [timestamp]`.
func parseSampleLine(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := 0
	for i < len(line) && isNameChar(line[i], i == 0) {
		i++
	}
	if i == 0 {
		return s, fmt.Errorf("no metric name")
	}
	s.name = line[:i]
	rest := line[i:]
	if strings.HasPrefix(rest, "{") {
		var err error
		rest, err = parseLabels(rest[1:], s.labels)
		if err != nil {
			return s, err
		}
	}
	fields := strings.Fields(rest)
	if len(fields) < 1 || len(fields) > 2 {
		return s, fmt.Errorf("want a value and an optional timestamp, got %q", rest)
	}
	v, err := parsePromFloat(fields[0])
	if err != nil {
		return s, err
	}
	s.value = v
	if len(fields) == 2 {
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			return s, fmt.Errorf("bad timestamp %q", fields[1])
		}
	}
	return s, nil
}

func isNameChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

// parseLabels reads `k="v",...}` into labels and returns what follows '}'.
func parseLabels(s string, labels map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return s[1:], nil
		}
		j := 0
		for j < len(s) && isNameChar(s[j], j == 0) && s[j] != ':' {
			j++
		}
		if j == 0 || j >= len(s) || s[j] != '=' || j+1 >= len(s) || s[j+1] != '"' {
			return "", fmt.Errorf("bad label near %q", s)
		}
		name := s[:j]
		s = s[j+2:]
		var v strings.Builder
		closed := false
		for k := 0; k < len(s); k++ {
			c := s[k]
			if c == '\\' && k+1 < len(s) {
				k++
				switch s[k] {
				case 'n':
					v.WriteByte('\n')
				default:
					v.WriteByte(s[k])
				}
				continue
			}
			if c == '"' {
				s = s[k+1:]
				closed = true
				break
			}
			v.WriteByte(c)
		}
		if !closed {
			return "", fmt.Errorf("unterminated label value for %s", name)
		}
		if _, dup := labels[name]; dup {
			return "", fmt.Errorf("label %s twice", name)
		}
		labels[name] = v.String()
		s = strings.TrimLeft(s, " \t")
		s = strings.TrimPrefix(s, ",")
	}
}

func parsePromFloat(s string) (float64, error) {
	switch s {
	case "+Inf", "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}
