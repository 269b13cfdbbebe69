// Package hostlist expands and compresses Slurm hostlists, the compact node
// lists Slurm puts in SLURM_JOB_NODELIST and prints in squeue/sinfo
// ("gpu[01-03,7],login1").
//
// Expand follows `scontrol show hostnames`: names are separated by commas
// outside brackets; a bracket group holds comma-separated numbers and
// low-high ranges; the width of a range's low bound is kept, so zero
// padding survives ("n[08-10]" → n08 n09 n10); a name with several bracket
// groups expands to their cartesian product, the first group varying
// slowest ("n[1-2]-ib[3-4]" → n1-ib3 n1-ib4 n2-ib3 n2-ib4). Order and
// duplicates are kept as written: node 0 of a job is the first name.
package hostlist

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxHosts bounds what one Expand may produce, so a typo such as
// "n[1-99999999]" is an error rather than an out-of-memory crash. Slurm's
// own limit on a job's node count is far lower.
const MaxHosts = 1 << 20

// Expand returns the host names a Slurm hostlist denotes, in order.
// Surrounding whitespace of each comma-separated name is ignored; an empty
// list, an empty name, an unbalanced or nested bracket, an empty or
// non-numeric range, or a range whose high bound is below its low bound is
// an error that quotes the offending part.
func Expand(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, errors.New("empty hostlist")
	}
	names, err := splitTop(list)
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, name := range names {
		if name == "" {
			return nil, fmt.Errorf("hostlist %q: empty host name", list)
		}
		expanded, err := expandName(name, MaxHosts-len(hosts))
		if err != nil {
			if len(names) == 1 {
				return nil, err // the host is the whole list; say it once
			}
			return nil, fmt.Errorf("hostlist %q: %w", list, err)
		}
		hosts = append(hosts, expanded...)
	}
	return hosts, nil
}

// splitTop splits list at the commas outside brackets and checks that
// brackets are balanced and not nested.
func splitTop(list string) ([]string, error) {
	var names []string
	depth, start := 0, 0
	for i, r := range list {
		switch r {
		case '[':
			if depth > 0 {
				return nil, fmt.Errorf("hostlist %q: nested '[' at offset %d", list, i)
			}
			depth++
		case ']':
			if depth == 0 {
				return nil, fmt.Errorf("hostlist %q: ']' without '[' at offset %d", list, i)
			}
			depth--
		case ',':
			if depth == 0 {
				names = append(names, strings.TrimSpace(list[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("hostlist %q: unclosed '['", list)
	}
	return append(names, strings.TrimSpace(list[start:])), nil
}

// expandName expands one name (brackets balanced, not nested) into at most
// limit hosts.
func expandName(name string, limit int) ([]string, error) {
	hosts := []string{""}
	rest := name
	for rest != "" {
		open := strings.IndexByte(rest, '[')
		if open < 0 {
			appendAll(hosts, rest)
			break
		}
		appendAll(hosts, rest[:open])
		closing := strings.IndexByte(rest, ']') // exists: splitTop checked the balance
		nums, err := expandGroup(rest[open+1 : closing])
		if err != nil {
			return nil, fmt.Errorf("host %q: %w", name, err)
		}
		if len(hosts)*len(nums) > limit {
			return nil, fmt.Errorf("host %q: expands to more than %d hosts", name, MaxHosts)
		}
		next := make([]string, 0, len(hosts)*len(nums))
		for _, h := range hosts {
			for _, n := range nums {
				next = append(next, h+n)
			}
		}
		hosts = next
		rest = rest[closing+1:]
	}
	if strings.ContainsAny(hosts[0], " \t") {
		return nil, fmt.Errorf("host %q: contains whitespace", name)
	}
	return hosts, nil
}

func appendAll(hosts []string, s string) {
	for i := range hosts {
		hosts[i] += s
	}
}

// expandGroup expands the inside of one bracket group ("01-03,7") into the
// formatted numbers.
func expandGroup(group string) ([]string, error) {
	if group == "" {
		return nil, errors.New("empty brackets")
	}
	var out []string
	for _, item := range strings.Split(group, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		loN, err := parseBound(lo, item)
		if err != nil {
			return nil, err
		}
		hiN := loN
		if isRange {
			if hiN, err = parseBound(hi, item); err != nil {
				return nil, err
			}
			if hiN < loN {
				return nil, fmt.Errorf("range %q: high bound below low bound", item)
			}
		}
		if hiN-loN >= MaxHosts-uint64(len(out)) {
			return nil, fmt.Errorf("range %q: more than %d hosts", item, MaxHosts)
		}
		// Slurm pads every number of a range to the width of its low bound
		// as written, so "08-10" gives 08 09 10 and "8-10" gives 8 9 10.
		width := len(lo)
		for n := loN; ; n++ {
			out = append(out, pad(n, width))
			if n == hiN {
				break
			}
		}
	}
	return out, nil
}

func parseBound(s, item string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("range %q: missing number", item)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("range %q: %q is not a number", item, s)
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("range %q: %w", item, err)
	}
	return n, nil
}

func pad(n uint64, width int) string {
	s := strconv.FormatUint(n, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}
