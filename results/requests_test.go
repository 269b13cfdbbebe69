package results

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequestsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := RequestsPath(filepath.Join(dir, "results_concurrency_8_gpus_12_ctx_8_gen_4.json"))
	if filepath.Base(path) != "results_concurrency_8_gpus_12_ctx_8_gen_4.requests.jsonl.gz" {
		t.Fatalf("RequestsPath = %s", path)
	}
	ttft, e2e, first, end := 51.2, 1200.5, 10.0512, 11.2
	recs := []RequestRecord{
		{Index: 0, StartUnix: 10, FirstUnix: &first, EndUnix: &end, InputTokens: 900, OutputTokens: 128, TTFTms: &ttft, E2Ems: &e2e,
			ITL: &ITLStats{Count: 127, Mean: 9.1, Median: 9, P99: 12, Max: 30}, Status: RequestOK},
		{Index: 1, StartUnix: 10.5, InputTokens: 1000, Status: RequestFailed, Error: "HTTP 500"},
		{Index: 2, InputTokens: 800, Status: RequestNotSent},
	}
	if err := WriteRequests(path, recs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequests(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || *got[0].TTFTms != ttft || got[0].ITL.Count != 127 || got[1].Error != "HTTP 500" || got[2].Status != RequestNotSent {
		t.Errorf("read back %+v", got)
	}
}

func gzipFile(t *testing.T, path string, raw []byte) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(raw)
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every bound of a requests file is named when a file passes it.
func TestReadRequestsBounds(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.requests.jsonl.gz")
	gzipFile(t, long, []byte(`{"index":0,"status":"ok","error":"`+strings.Repeat("x", MaxRequestsLineBytes)+`"}`+"\n"))
	defer func(n int64) { maxRequestsRawBytes = n }(maxRequestsRawBytes)
	maxRequestsRawBytes = 1 << 20
	bomb := filepath.Join(dir, "bomb.requests.jsonl.gz")
	line := []byte(`{"index":0,"status":"ok"}` + strings.Repeat(" ", 60000) + "\n")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for n := 0; n <= int(maxRequestsRawBytes)/len(line)+1; n++ {
		zw.Write(line)
	}
	zw.Close()
	if err := os.WriteFile(bomb, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.requests.jsonl.gz")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxRequestsFileBytes+1); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.requests.jsonl.gz")
	gzipFile(t, bad, []byte("{\"index\":0}\nnot json\n"))
	for _, c := range []struct{ path, want string }{
		{long, "is longer than 64 KiB"},
		{bomb, "decompresses past 1 MiB"},
		{big, "more than the 64 MiB a requests file may be"},
		{bad, "record 2"},
		{dir, "not a regular file"},
	} {
		if _, err := ReadRequests(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadRequests(%s): %v, want %q", filepath.Base(c.path), err, c.want)
		}
	}
	if err := WriteRequests(filepath.Join(dir, "x.gz"), make([]RequestRecord, MaxRequestRecords+1)); err == nil || !strings.Contains(err.Error(), "more than the 1048576") {
		t.Errorf("writing too many records: %v", err)
	}
}
