package results

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// RequestRecord is one measured request of a point: when it was sent, got
// its first token and ended, its token counts, its inter-token gaps
// summarised, and how it ended. benchmark_serving.py's --save-detailed keeps
// such data inside the result (ttfts, itls, errors); aiperf writes one
// record per request. Here it is a file of its own beside the result (one
// JSON object a line, gzip), so the result stays the file downstream tools
// read, and the report and `results compare` draw distributions from it.
type RequestRecord struct {
	Index        int       `json:"index"`
	StartUnix    float64   `json:"start_unix,omitempty"`
	FirstUnix    *float64  `json:"first_token_unix,omitempty"`
	EndUnix      *float64  `json:"end_unix,omitempty"`
	InputTokens  int       `json:"input_tokens"`
	OutputTokens int       `json:"output_tokens"`
	TTFTms       *float64  `json:"ttft_ms,omitempty"`
	E2Ems        *float64  `json:"e2el_ms,omitempty"`
	ITL          *ITLStats `json:"itl,omitempty"`
	// Status is ok, failed, interrupted or not_sent.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// ITLStats summarises one request's inter-token gaps in milliseconds:
// the gaps themselves (up to max_tokens of them) would make the file as
// large as the stream.
type ITLStats struct {
	Count  int     `json:"count"`
	Mean   float64 `json:"mean_ms"`
	Median float64 `json:"median_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
}

// Request statuses.
const (
	RequestOK          = "ok"
	RequestFailed      = "failed"
	RequestInterrupted = "interrupted"
	RequestNotSent     = "not_sent"
)

// Bounds of a requests file: a point sends 10×C requests (20,480 at
// c2048, ~250 bytes a line); the caps hold a point far past that and stop a
// damaged or hostile file before it fills the login node's memory.
const (
	MaxRequestRecords    = 1 << 20
	MaxRequestsFileBytes = 64 << 20 // compressed, on disk
	MaxRequestsLineBytes = 64 << 10 // one record
)

// maxRequestsRawBytes bounds a requests file decompressed (a variable so a
// test need not inflate 512 MiB).
var maxRequestsRawBytes int64 = 512 << 20

// RequestsSuffix replaces ".json" in a result's name for its requests file.
const RequestsSuffix = ".requests.jsonl.gz"

// RequestsPath is the requests file beside the result file at resultPath.
func RequestsPath(resultPath string) string {
	return strings.TrimSuffix(resultPath, ".json") + RequestsSuffix
}

// WriteRequests writes recs atomically as gzip-compressed JSON lines; more
// than MaxRequestRecords is refused, naming the bound.
func WriteRequests(path string, recs []RequestRecord) error {
	if len(recs) > MaxRequestRecords {
		return fmt.Errorf("writing %s: %d request records, more than the %d a file holds", path, len(recs), MaxRequestRecords)
	}
	err := atomicfile.Write(path, atomicfile.Options{Overwrite: true}, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		enc := json.NewEncoder(zw)
		for i := range recs {
			if err := enc.Encode(&recs[i]); err != nil {
				return err
			}
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("writing request records: %w", err)
	}
	return nil
}

// ReadRequests reads a requests file within its bounds (the file's size,
// its decompressed size, a line's length and the record count), each
// named in the error when passed.
func ReadRequests(path string) ([]RequestRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	} else if st.Size() > MaxRequestsFileBytes {
		return nil, fmt.Errorf("%s is %s, more than the %s a requests file may be", path, readlimit.Size(st.Size()), readlimit.Size(MaxRequestsFileBytes))
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	lr := &io.LimitedReader{R: zr, N: maxRequestsRawBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), MaxRequestsLineBytes)
	var out []RequestRecord
	for sc.Scan() {
		if len(out) == MaxRequestRecords {
			return nil, fmt.Errorf("%s holds more than %d request records", path, MaxRequestRecords)
		}
		var r RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", path, len(out)+1, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: record %d is longer than %s", path, len(out)+1, readlimit.Size(MaxRequestsLineBytes))
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("%s decompresses past %s", path, readlimit.Size(maxRequestsRawBytes))
	}
	return out, nil
}
