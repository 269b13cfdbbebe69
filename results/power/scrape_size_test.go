package power

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestScrapeLargerThanTheLimitIsNotParsed: an exporter answer past
// MaxScrapeBytes is endpoint_parse_error and yields no reading; it was cut
// at 16 MiB and parsed as if whole (274,185 readings from one scrape, and
// a last value cut mid-number).
func TestScrapeLargerThanTheLimitIsNotParsed(t *testing.T) {
	line := `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} 250` + "\n"
	filler := "# " + strings.Repeat("x", 1<<20) + "\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(line))
		for range 17 {
			_, _ = w.Write([]byte(filler))
		}
	}))
	defer srv.Close()
	s := &Session{set: Settings{RequestTimeout: 10 * time.Second, Client: srv.Client(), Now: time.Now}}
	res := s.poll(context.Background(), Endpoint{Hostname: "n1", URL: srv.URL}, 0)
	if !slices.Equal(res.reasons, []Reason{EndpointParseError}) || len(res.rows) != 0 {
		t.Fatalf("reasons %v, %d rows; want endpoint_parse_error and nothing kept", res.reasons, len(res.rows))
	}
}
