// Package health is the job driver's health gate: it polls the frontend the
// way srtctl does (srt-slurm core/health.py)
// until the expected number of prefill and decode workers are serving, the
// deadline passes, or a watched process dies.
//
// Probe makes one poll; Wait repeats it every Interval, at most MaxAttempts
// times, and stops at once when a value arrives on its Abort channel, so an
// engine that exits before turning healthy ends the wait within one select
// instead of the whole timeout.
package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Kind is how a frontend reports readiness.
type Kind string

const (
	// Dynamo is a Dynamo frontend: GET /health lists "instances"; entries
	// with endpoint "generate" count once per worker, by component:
	// "prefill" → prefill; "decode", "tensorrt_llm" or "backend" (agg) →
	// decode. Each worker also lists other endpoints (clear_kv_blocks,
	// load_metrics), which do not count.
	Dynamo Kind = "dynamo"
	// SGLangRouter is sglang's (or vLLM's) router: GET /workers has
	// stats.prefill_count → prefill and stats.decode_count +
	// stats.regular_count → decode.
	SGLangRouter Kind = "sglang-router"
	// Models is a plain OpenAI server (sglang, vLLM, trtllm-serve): GET
	// /health answers 200 and GET /v1/models lists at least one model. It
	// cannot count workers: it is serving or not.
	Models Kind = "models"
)

// Kinds lists every Kind.
var Kinds = []Kind{Dynamo, SGLangRouter, Models, HTTPOK}

// ParseKind accepts the names in Kinds.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown health check kind %q (want dynamo, sglang-router, models or http-ok)", s)
}

// Expect is how many workers of each role must be serving.
type Expect struct{ Prefill, Decode int }

func (e Expect) String() string { return fmt.Sprintf("%d prefill + %d decode", e.Prefill, e.Decode) }

// Seen is what one poll found.
type Seen struct {
	// Prefill and Decode are the workers the frontend reports. A Models
	// frontend reports no counts: Probe leaves them 0 and Wait, which knows
	// the expected counts, sets them to Expect once the frontend serves.
	Prefill, Decode int
	// Status is the last HTTP status received, 0 when no answer came.
	Status int
	// Detail says in a few words what the frontend answered, for logs.
	Detail string
	// Kind is the probe that produced this, and Models the number of models
	// a Models frontend lists (0 for other kinds).
	Kind   Kind
	Models int
}

// Ready reports whether s satisfies e. A Models frontend is ready when it
// lists a model, whatever e says.
func (s Seen) Ready(e Expect) bool {
	if s.Kind == Models {
		return s.Status == http.StatusOK && s.Models > 0
	}
	if s.Kind == HTTPOK {
		return s.Status == http.StatusOK
	}
	return s.Status == http.StatusOK && s.Prefill >= e.Prefill && s.Decode >= e.Decode
}

// maxBody bounds what Probe reads of an answer; a /health listing of
// hundreds of workers is well under it.
const maxBody = 8 << 20

// Probe polls the frontend at baseURL once. It returns an error, never a
// panic, when it cannot tell the counts: the request failed (connection
// refused, timeout, ctx done), the status is not 200, or the body is not
// the JSON the kind promises. The Seen it returns with an error still
// carries the status and a body excerpt when an answer came. The caller
// bounds the request's time through ctx or the client.
func Probe(ctx context.Context, c *http.Client, baseURL string, kind Kind) (Seen, error) {
	if c == nil {
		c = http.DefaultClient
	}
	base := strings.TrimRight(baseURL, "/")
	s := Seen{Kind: kind}
	switch kind {
	case Dynamo:
		body, err := get(ctx, c, base+"/health", &s)
		if err != nil {
			return s, err
		}
		return s, parseDynamo(body, &s)
	case SGLangRouter:
		body, err := get(ctx, c, base+"/workers", &s)
		if err != nil {
			return s, err
		}
		return s, parseRouter(body, &s)
	case HTTPOK:
		err := probeHTTPOK(ctx, c, base, &s)
		return s, err
	case Models:
		if _, err := get(ctx, c, base+"/health", &s); err != nil {
			return s, err
		}
		body, err := get(ctx, c, base+"/v1/models", &s)
		if err != nil {
			return s, err
		}
		return s, parseModels(body, &s)
	}
	return s, fmt.Errorf("unknown health check kind %q", kind)
}

// get fetches u and records the status in s. A status other than 200 is an
// error whose Detail is the start of the body.
func get(ctx context.Context, c *http.Client, u string, s *Seen) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("health check: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		s.Status, s.Detail = 0, "no answer"
		return nil, fmt.Errorf("health check: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	s.Status = resp.StatusCode
	if err != nil {
		s.Detail = "answer cut short"
		return nil, fmt.Errorf("health check: reading GET %s: %w", u, err)
	}
	if len(body) > maxBody {
		s.Detail = fmt.Sprintf("answer larger than %d MiB", maxBody>>20)
		return nil, fmt.Errorf("health check: GET %s: answer larger than the %d MiB it may have", u, maxBody>>20)
	}
	if resp.StatusCode != http.StatusOK {
		s.Detail = excerpt(body)
		return nil, fmt.Errorf("health check: GET %s: HTTP %d: %s", u, resp.StatusCode, s.Detail)
	}
	return body, nil
}

// excerpt is the start of body on one line, for messages.
func excerpt(body []byte) string {
	const n = 200
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "\uFFFD")), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// dynamoHealth is the part of Dynamo's frontend /health that counts.
type dynamoHealth struct {
	Status    string `json:"status"`
	Message   string `json:"message"`
	Instances *[]struct {
		Component string `json:"component"`
		Endpoint  string `json:"endpoint"`
	} `json:"instances"`
}

func parseDynamo(body []byte, s *Seen) error {
	var h dynamoHealth
	if err := json.Unmarshal(body, &h); err != nil {
		s.Detail = excerpt(body)
		return fmt.Errorf("health check: /health is not JSON: %w", err)
	}
	if h.Instances == nil {
		s.Detail = excerpt(body)
		return errors.New(`health check: /health has no "instances" list`)
	}
	for _, in := range *h.Instances {
		if in.Endpoint != "generate" {
			continue
		}
		switch in.Component {
		case "prefill":
			s.Prefill++
		case "decode", "tensorrt_llm", "backend":
			s.Decode++
		}
	}
	s.Detail = fmt.Sprintf("%d prefill, %d decode registered", s.Prefill, s.Decode)
	if h.Status != "" && h.Status != "healthy" {
		state := h.Status
		if h.Message != "" {
			state += ": " + h.Message
		}
		s.Detail = fmt.Sprintf("%s (%s)", s.Detail, state)
	}
	return nil
}

// routerWorkers is the part of the router's /workers that counts.
type routerWorkers struct {
	Stats *struct {
		PrefillCount *int `json:"prefill_count"`
		DecodeCount  *int `json:"decode_count"`
		RegularCount *int `json:"regular_count"`
	} `json:"stats"`
}

func parseRouter(body []byte, s *Seen) error {
	var w routerWorkers
	if err := json.Unmarshal(body, &w); err != nil {
		s.Detail = excerpt(body)
		return fmt.Errorf("health check: /workers is not JSON: %w", err)
	}
	if w.Stats == nil || w.Stats.PrefillCount == nil && w.Stats.DecodeCount == nil && w.Stats.RegularCount == nil {
		s.Detail = excerpt(body)
		return errors.New(`health check: /workers has no "stats" counts`)
	}
	count := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	s.Prefill = count(w.Stats.PrefillCount)
	s.Decode = count(w.Stats.DecodeCount) + count(w.Stats.RegularCount)
	s.Detail = fmt.Sprintf("router lists %d prefill, %d decode", s.Prefill, s.Decode)
	return nil
}

func parseModels(body []byte, s *Seen) error {
	var m struct {
		Data *[]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		s.Detail = excerpt(body)
		return fmt.Errorf("health check: /v1/models is not JSON: %w", err)
	}
	if m.Data == nil {
		s.Detail = excerpt(body)
		return errors.New(`health check: /v1/models has no "data" list`)
	}
	s.Models = len(*m.Data)
	s.Detail = fmt.Sprintf("%d models served", s.Models)
	return nil
}
