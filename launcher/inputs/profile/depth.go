package profile

import "fmt"

// MaxNesting bounds how deeply a profile's arrays and inline tables nest.
// The TOML library parses nesting by recursion: a few MB of "[[[[..." used
// to overflow the Go stack and crash the binary, where loading must fail
// with an error. A real profile nests two or three levels.
const MaxNesting = 64

// MaxKeyParts bounds the parts of one dotted key ("a.b.c" has three). The
// TOML library's time to load a dotted key grows with the square of its
// parts: a 40 KB profile holding one key of 20,000 parts exhausted memory.
// A real profile's longest key has three.
const MaxKeyParts = 64

// checkNesting scans TOML text for array and inline-table nesting deeper
// than MaxNesting, and dotted keys of more than MaxKeyParts parts, skipping
// strings and comments, before the library sees it. line is 1-based in
// the error.
func checkNesting(data []byte) error {
	depth, line := 0, 1
	dots := 0 // dots since the last character that ends a key or value
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '.':
			// Outside strings a dot joins key parts; a value holds at most
			// one (a float, a time's fraction), and '=', ',' or a newline
			// ends it.
			if dots++; dots >= MaxKeyParts {
				return fmt.Errorf("line %d: a dotted key of more than %d parts", line, MaxKeyParts)
			}
		case '=', ',':
			dots = 0
		case '\n':
			line++
			dots = 0
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i-- // let the newline count
		case '"', '\'':
			q := string(c)
			multi := i+2 < len(data) && data[i+1] == c && data[i+2] == c
			if multi {
				q = q + q + q
			}
			i += len(q)
			for i < len(data) {
				if data[i] == '\n' {
					line++
				}
				if c == '"' && data[i] == '\\' {
					i += 2
					continue
				}
				if string(data[i:min(i+len(q), len(data))]) == q {
					i += len(q) - 1
					break
				}
				if !multi && data[i] == '\n' {
					break // an unterminated string: the library reports it
				}
				i++
			}
		case '[', '{':
			dots = 0
			if depth++; depth > MaxNesting {
				return fmt.Errorf("line %d: arrays and inline tables nested more than %d deep", line, MaxNesting)
			}
		case ']', '}':
			dots = 0
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
