package sabench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// This file reads the completions stream without decoding every chunk into
// maps: at 2048 streams of ~100 chunks/s each, encoding/json per chunk would
// cost more CPU than the rest of the client. Only the two top-level members
// the metrics need are looked at; everything else is skipped structurally.

// chunk is what one SSE data payload contributes to a request's record.
type chunk struct {
	// choices is true when the top-level "choices" is a non-empty array:
	// benchmark_serving.py counts such a chunk as a token event even when its
	// text is empty (special tokens).
	choices bool
	// choicesRaw is the raw "choices" value, kept for generated-text capture.
	choicesRaw []byte
	// usage is true when "usage" carries a numeric completion_tokens.
	usage            bool
	completionTokens int
	// sent is the server's send stamp (sentStampKey) in Unix ns, 0 when
	// the chunk has none.
	sent int64
}

var errNotObject = errors.New("chunk is not a JSON object")

// parseChunk scans one JSON object (an SSE data payload). It walks the
// top-level members without a callback (this runs once per token).
func parseChunk(b []byte) (chunk, error) {
	var c chunk
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return c, errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return c, nil
	}
	for {
		key, val, next, err := nextMember(b, i)
		if err != nil {
			return c, err
		}
		switch string(key) {
		case "choices":
			if len(val) > 0 && val[0] == '[' {
				j := skipSpace(val, 1)
				c.choices = j < len(val) && val[j] != ']'
				c.choicesRaw = val
			}
		case sentStampKey:
			c.sent, _ = parseStamp(val)
		case "usage":
			if len(val) > 0 && val[0] == '{' {
				if err := eachMember(val, 0, func(k, v []byte) error {
					if string(k) != "completion_tokens" {
						return nil
					}
					if n, ok := parseCount(v); ok {
						c.usage, c.completionTokens = true, n
					}
					return nil
				}); err != nil {
					return c, err
				}
			}
		}
		if next < 0 {
			return c, nil
		}
		i = next
	}
}

// nextMember reads the member starting at b[i] (its opening quote) and
// returns its raw key and value and the offset of the next member, -1
// after the last one.
func nextMember(b []byte, i int) (key, val []byte, next int, err error) {
	if i >= len(b) || b[i] != '"' {
		return nil, nil, 0, fmt.Errorf("expected a member name at offset %d", i)
	}
	end, err := skipString(b, i)
	if err != nil {
		return nil, nil, 0, err
	}
	key = b[i+1 : end-1]
	i = skipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return nil, nil, 0, fmt.Errorf("expected ':' at offset %d", i)
	}
	i = skipSpace(b, i+1)
	vEnd, err := skipValue(b, i)
	if err != nil {
		return nil, nil, 0, err
	}
	val = b[i:vEnd]
	i = skipSpace(b, vEnd)
	if i >= len(b) {
		return nil, nil, 0, errors.New("unterminated object")
	}
	switch b[i] {
	case ',':
		return key, val, skipSpace(b, i+1), nil
	case '}':
		return key, val, -1, nil
	}
	return nil, nil, 0, fmt.Errorf("expected ',' or '}' at offset %d", i)
}

// parseCount reads a non-negative integer count; integral floats such as
// 12.0 are accepted, null and anything else are not a count.
func parseCount(v []byte) (int, bool) {
	if n, err := strconv.Atoi(string(v)); err == nil && n >= 0 {
		return n, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f < 0 || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// eachMember calls fn for every member of the object starting at b[i] == '{'.
// Keys are passed raw (between the quotes); values as their raw bytes.
func eachMember(b []byte, i int, fn func(key, val []byte) error) error {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		key, val, next, err := nextMember(b, i)
		if err != nil {
			return err
		}
		if err := fn(key, val); err != nil {
			return err
		}
		if next < 0 {
			return nil
		}
		i = next
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string starting at b[i] == '"'.
// It jumps from quote to quote (bytes.IndexByte is vectorised); a quote
// preceded by an odd number of backslashes is escaped.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errors.New("unterminated string")
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// skipValue returns the offset just past the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("missing value")
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated container")
	default:
		j := i
	scan:
		for ; j < len(b); j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				break scan
			}
		}
		if j == i {
			return 0, fmt.Errorf("unexpected %q at offset %d", b[i], i)
		}
		return j, nil
	}
}

// choiceText decodes choices[0].text for the generated_texts detail.
func choiceText(raw []byte) string {
	var cs []struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &cs) != nil || len(cs) == 0 || cs[0].Text == nil {
		return ""
	}
	return *cs[0].Text
}

// Bounds of one stream: a server that never sends a newline, or never
// ends its stream, fails the request instead of growing the client.
const (
	// MaxSSELine bounds one SSE line (an OpenAI chunk is a few hundred
	// bytes; a whole 32k-token completion in one chunk is well under it).
	MaxSSELine = 1 << 20
	// MaxSSEEvents bounds the events of one stream (a token an event, with
	// room to spare over any max_tokens).
	MaxSSEEvents = 1 << 20
)

var (
	errSSELineTooLong = fmt.Errorf("an SSE line longer than the %d MiB a stream line may have", MaxSSELine>>20)
	errSSETooMany     = fmt.Errorf("more than the %d events a stream may have", MaxSSEEvents)
)

// sseLines yields the stream's lines, trimmed, without allocating per line
// (the slice is valid until the next call). Lines longer than the reader's
// buffer are assembled in long, up to MaxSSELine.
type sseLines struct {
	r    *bufio.Reader
	long []byte
}

// next returns the next line; err is io.EOF after the last one, and
// errSSELineTooLong (with no line) past MaxSSELine.
func (s *sseLines) next() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.long = append(s.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.r.ReadSlice('\n')
			if len(s.long)+len(line) > MaxSSELine {
				s.long = nil
				return nil, errSSELineTooLong
			}
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	return bytes.TrimSpace(line), err
}

// ssePayload classifies a trimmed line the way the dynamo request function
// of SA-Bench does: blank, "event:" and ":" comment lines carry nothing;
// otherwise an optional "data:" prefix (and one space) is removed.
func ssePayload(line []byte) ([]byte, bool) {
	if len(line) == 0 || line[0] == ':' || bytes.HasPrefix(line, []byte("event:")) {
		return nil, false
	}
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		line = rest
		if len(line) > 0 && line[0] == ' ' {
			line = line[1:]
		}
	}
	return line, true
}

var sseDone = []byte("[DONE]")
