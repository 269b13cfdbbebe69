// Package jsonlist reads a JSON object with one long list member (a
// slurmrestd listing: {"jobs": [...], "meta": ..., "errors": [...]}) one
// value at a time, never holding the whole document, and no value may take
// more than a bound to read.
package jsonlist

import (
	"encoding/json"
	"fmt"
	"io"
)

// Read walks the object on r: each element of the member named list goes
// to each; a member "errors" is decoded into errs (when not nil); every
// other member is skipped. A value that takes more than limit bytes to
// read fails, naming the limit.
func Read(r io.Reader, list string, limit int64, each func(dec *json.Decoder) error, errs any) error {
	lr := &limiter{r: r, limit: limit}
	dec := json.NewDecoder(lr)
	if err := expect(dec, '{'); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		lr.n = 0
		switch tok {
		case list:
			if err := expect(dec, '['); err != nil {
				return fmt.Errorf("%s is not a list: %w", list, err)
			}
			for dec.More() {
				lr.n = 0
				if err := each(dec); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			continue
		case "errors":
			if errs != nil {
				err = dec.Decode(errs)
				break
			}
			fallthrough
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// expect reads the next token, which must be the delimiter d.
func expect(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err == nil && tok != d {
		err = fmt.Errorf("found %v", tok)
	}
	return err
}

// limiter fails a read once more than limit bytes were read since n was
// last reset: one value of the stream may not grow without bound.
type limiter struct {
	r     io.Reader
	n     int64
	limit int64
}

func (l *limiter) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, fmt.Errorf("a value larger than the %d MiB slurmbench reads", l.limit>>20)
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}
