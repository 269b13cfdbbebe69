// Package gsm8kdata holds the GSM8K test and train splits inside the
// binary, so the native gsm8k eval needs no data directory on the cluster.
// The files are openai/grade-school-math's, gzip-compressed, under the MIT
// licence in LICENSE (embedded too, and shipped with the data).
package gsm8kdata

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
)

// Split file names, as in a GSM8K data directory.
const (
	Test  = "test.jsonl"
	Train = "train.jsonl"
)

//go:embed test.jsonl.gz train.jsonl.gz
var files embed.FS

// License is the data set's licence text.
//
//go:embed LICENSE
var License string

// Open returns the decompressed split name (Test or Train).
func Open(name string) (io.ReadCloser, error) {
	if name != Test && name != Train {
		return nil, fmt.Errorf("built-in gsm8k data: no split %q (want %s or %s)", name, Test, Train)
	}
	b, err := files.ReadFile(name + ".gz")
	if err != nil {
		return nil, fmt.Errorf("built-in gsm8k data: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("built-in gsm8k data %s: %w", name, err)
	}
	return zr, nil
}
