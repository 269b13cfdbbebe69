// Package wire decodes slurmrestd's JSON encodings that differ between
// its versions: optional numbers (NoVal: an object since v0.0.40, a bare
// number or a numeric string before), lists sent as arrays or as one
// joined string (StringList), and text some versions wrap in an object
// (FlexText). Package slurm's wire structs are built of them.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// NoVal is Slurm's optional number. Since v0.0.40 it is sent as
// {"set":bool,"infinite":bool,"number":N}; older versions and some fields
// still send a bare number, and a few send numeric strings. All decode here.
type NoVal struct {
	Set      bool
	Infinite bool
	Number   int64
}

func (n *NoVal) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*n = NoVal{}
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '{':
		var raw struct {
			Set      *bool       `json:"set"`
			Infinite bool        `json:"infinite"`
			Number   json.Number `json:"number"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		n.Infinite = raw.Infinite
		if raw.Number != "" {
			v, err := numberToInt(string(raw.Number))
			if err != nil {
				return err
			}
			n.Number = v
		}
		// A missing "set" with a number present means the sender did not
		// bother with the wrapper's flag; the number is meant.
		n.Set = (raw.Set == nil && raw.Number != "") || (raw.Set != nil && *raw.Set)
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil
		}
		if strings.EqualFold(s, "infinite") || strings.EqualFold(s, "unlimited") {
			n.Infinite = true
			return nil
		}
		v, err := numberToInt(s)
		if err != nil {
			return fmt.Errorf("number field: %q is not a number", s)
		}
		n.Set, n.Number = true, v
		return nil
	default:
		v, err := numberToInt(string(b))
		if err != nil {
			return err
		}
		n.Set, n.Number = true, v
		return nil
	}
}

// Value returns the number when set and finite, else def.
func (n NoVal) Value(def int64) int64 {
	if !n.Set || n.Infinite {
		return def
	}
	return n.Number
}

// UnixTime maps an epoch-seconds NoVal to a time; unset or 0 is the zero time.
func (n NoVal) UnixTime() time.Time {
	if v := n.Value(0); v > 0 {
		return time.Unix(v, 0)
	}
	return time.Time{}
}

func numberToInt(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("number field: %s is not a number", s)
	}
	return int64(f), nil
}

// StringList decodes a list of strings sent as an array, a single string
// (comma- or plus-separated, as v0.0.39 and squeue print states) or null.
type StringList []string

func (l *StringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*l = nil
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '+' || r == ' ' })
		return nil
	default:
		var arr []json.RawMessage
		if err := json.Unmarshal(b, &arr); err != nil {
			return err
		}
		for _, raw := range arr {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				// A non-string element (never seen so far) is kept as text
				// rather than failing the whole response.
				s = string(bytes.TrimSpace(raw))
			}
			*l = append(*l, s)
		}
		return nil
	}
}

// FlexText is a string that some versions wrap in an object, e.g.
// slurmdb's comment {"administrator","job","system"}: the "job" part is
// the user's comment.
type FlexText string

func (t *FlexText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*t = ""
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '{':
		var obj struct {
			Job *string `json:"job"`
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		if obj.Job != nil {
			*t = FlexText(*obj.Job)
		}
		return nil
	case b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		*t = FlexText(s)
		return err
	default:
		*t = FlexText(b)
		return nil
	}
}
