package profile

import "fmt"

// MaxNesting bounds how deeply a profile's arrays and inline tables nest.
// The TOML library parses nesting by recursion: a few MB of "[[[[..." used
// to overflow the Go stack and crash the binary, where loading must fail
// with an error. A real profile nests two or three levels.
const MaxNesting = 64

// checkNesting scans TOML text for array and inline-table nesting deeper
// than MaxNesting, skipping strings and comments, before the library sees
// it. line is 1-based in the error.
func checkNesting(data []byte) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
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
			if depth++; depth > MaxNesting {
				return fmt.Errorf("line %d: arrays and inline tables nested more than %d deep", line, MaxNesting)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
