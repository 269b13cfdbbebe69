package health

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// dynamoBody is a Dynamo frontend /health answer listing every worker with
// its three endpoints, as Dynamo does.
func dynamoBody(status string, components ...string) string {
	var entries []string
	for i, c := range components {
		for _, ep := range []string{"clear_kv_blocks", "generate", "load_metrics"} {
			entries = append(entries, fmt.Sprintf(
				`{"component":%q,"endpoint":%q,"instance_id":%d,"namespace":"dynamo","transport":{"nats_tcp":"dynamo_%s.%s-%x"}}`,
				c, ep, 7000+i, c, ep, 7000+i))
		}
	}
	return fmt.Sprintf(`{"status":%q,"endpoints":["dyn://dynamo.prefill.generate"],"instances":[%s]}`, status, strings.Join(entries, ","))
}

// serve answers each path with a fixed status and body.
func serve(t *testing.T, routes map[string]struct {
	status int
	body   string
}) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := routes[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(rt.status)
		fmt.Fprint(w, rt.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type route = struct {
	status int
	body   string
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name    string
		kind    Kind
		routes  map[string]route
		want    Seen
		wantErr string // "" = no error
		ready   Expect // Ready(ready) must equal wantReady
		wantRdy bool
	}{
		// Dynamo
		{
			name:   "dynamo 2P1D, three endpoints per worker count once",
			kind:   Dynamo,
			routes: map[string]route{"/health": {200, dynamoBody("healthy", "prefill", "prefill", "decode")}},
			want:   Seen{Prefill: 2, Decode: 1, Status: 200, Detail: "2 prefill, 1 decode registered", Kind: Dynamo},
			ready:  Expect{2, 1}, wantRdy: true,
		},
		{
			name:   "dynamo partial",
			kind:   Dynamo,
			routes: map[string]route{"/health": {200, dynamoBody("healthy", "prefill", "decode")}},
			want:   Seen{Prefill: 1, Decode: 1, Status: 200, Detail: "1 prefill, 1 decode registered", Kind: Dynamo},
			ready:  Expect{2, 1}, wantRdy: false,
		},
		{
			name:   "dynamo agg backend and tensorrt_llm count as decode, others not at all",
			kind:   Dynamo,
			routes: map[string]route{"/health": {200, dynamoBody("healthy", "backend", "tensorrt_llm", "encoder", "router")}},
			want:   Seen{Prefill: 0, Decode: 2, Status: 200, Detail: "0 prefill, 2 decode registered", Kind: Dynamo},
			ready:  Expect{0, 2}, wantRdy: true,
		},
		{
			name:   "dynamo unhealthy with no instances",
			kind:   Dynamo,
			routes: map[string]route{"/health": {200, `{"status":"unhealthy","message":"No endpoints available","instances":[]}`}},
			want:   Seen{Status: 200, Detail: "0 prefill, 0 decode registered (unhealthy: No endpoints available)", Kind: Dynamo},
			ready:  Expect{0, 1}, wantRdy: false,
		},
		{
			name:    "dynamo without instances key",
			kind:    Dynamo,
			routes:  map[string]route{"/health": {200, `{"status":"healthy"}`}},
			want:    Seen{Status: 200, Detail: `{"status":"healthy"}`, Kind: Dynamo},
			wantErr: `no "instances" list`,
		},
		{
			name:    "dynamo garbage",
			kind:    Dynamo,
			routes:  map[string]route{"/health": {200, "<html>\n  proxy  error</html>"}},
			want:    Seen{Status: 200, Detail: "<html> proxy error</html>", Kind: Dynamo},
			wantErr: "/health is not JSON",
		},
		{
			name:    "dynamo 503",
			kind:    Dynamo,
			routes:  map[string]route{"/health": {503, "starting"}},
			want:    Seen{Status: 503, Detail: "starting", Kind: Dynamo},
			wantErr: "HTTP 503: starting",
		},
		{
			name:    "dynamo 500 with empty body",
			kind:    Dynamo,
			routes:  map[string]route{"/health": {500, ""}},
			want:    Seen{Status: 500, Detail: "(empty body)", Kind: Dynamo},
			wantErr: "HTTP 500",
		},
		// sglang router
		{
			name:   "router 1P2D with regular workers",
			kind:   SGLangRouter,
			routes: map[string]route{"/workers": {200, `{"workers":[],"total":3,"stats":{"prefill_count":1,"decode_count":1,"regular_count":1}}`}},
			want:   Seen{Prefill: 1, Decode: 2, Status: 200, Detail: "router lists 1 prefill, 2 decode", Kind: SGLangRouter},
			ready:  Expect{1, 2}, wantRdy: true,
		},
		{
			name:   "router empty",
			kind:   SGLangRouter,
			routes: map[string]route{"/workers": {200, `{"workers":[],"total":0,"stats":{"prefill_count":0,"decode_count":0,"regular_count":0}}`}},
			want:   Seen{Status: 200, Detail: "router lists 0 prefill, 0 decode", Kind: SGLangRouter},
			ready:  Expect{1, 1}, wantRdy: false,
		},
		{
			name:    "router without stats",
			kind:    SGLangRouter,
			routes:  map[string]route{"/workers": {200, `{"workers":[]}`}},
			want:    Seen{Status: 200, Detail: `{"workers":[]}`, Kind: SGLangRouter},
			wantErr: `no "stats" counts`,
		},
		{
			name:    "router garbage",
			kind:    SGLangRouter,
			routes:  map[string]route{"/workers": {200, `{"stats":`}},
			want:    Seen{Status: 200, Detail: `{"stats":`, Kind: SGLangRouter},
			wantErr: "/workers is not JSON",
		},
		// plain servers
		{
			name: "models serving",
			kind: Models,
			routes: map[string]route{
				"/health":    {200, ""},
				"/v1/models": {200, `{"object":"list","data":[{"id":"dsr1","object":"model"}]}`},
			},
			want:  Seen{Status: 200, Detail: "1 models served", Kind: Models, Models: 1},
			ready: Expect{0, 4}, wantRdy: true, // cannot count workers: serving is ready
		},
		{
			name: "models empty list",
			kind: Models,
			routes: map[string]route{
				"/health":    {200, ""},
				"/v1/models": {200, `{"object":"list","data":[]}`},
			},
			want:  Seen{Status: 200, Detail: "0 models served", Kind: Models},
			ready: Expect{0, 1}, wantRdy: false,
		},
		{
			name: "models health failing",
			kind: Models,
			routes: map[string]route{
				"/health":    {503, "loading"},
				"/v1/models": {200, `{"data":[{"id":"x"}]}`},
			},
			want:    Seen{Status: 503, Detail: "loading", Kind: Models},
			wantErr: "GET http://",
		},
		{
			name:    "models without /v1/models",
			kind:    Models,
			routes:  map[string]route{"/health": {200, ""}},
			want:    Seen{Status: 404, Detail: "404 page not found", Kind: Models},
			wantErr: "HTTP 404",
		},
		{
			name: "models garbage",
			kind: Models,
			routes: map[string]route{
				"/health":    {200, ""},
				"/v1/models": {200, `[1,2]`},
			},
			want:    Seen{Status: 200, Detail: "[1,2]", Kind: Models},
			wantErr: "/v1/models is not JSON",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := serve(t, tt.routes)
			got, err := Probe(context.Background(), nil, base+"/", tt.kind) // a trailing slash is fine
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Probe error = %v, want one containing %q", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Probe = %+v, want %+v", got, tt.want)
			}
			if err == nil {
				if r := got.Ready(tt.ready); r != tt.wantRdy {
					t.Errorf("%+v.Ready(%+v) = %v, want %v", got, tt.ready, r, tt.wantRdy)
				}
			}
		})
	}
}

func TestProbeConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, k := range Kinds {
		s, err := Probe(context.Background(), nil, "http://"+addr, k)
		if err == nil {
			t.Fatalf("%s: Probe of a closed port succeeded: %+v", k, s)
		}
		if !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s: error %q does not say connection refused", k, err)
		}
		if s.Status != 0 || s.Ready(Expect{}) {
			t.Errorf("%s: Seen %+v after a refused connection", k, s)
		}
	}
}

func TestProbeUnknownKind(t *testing.T) {
	if _, err := Probe(context.Background(), nil, "http://127.0.0.1:1", "trtllm"); err == nil {
		t.Fatal("Probe with an unknown kind succeeded")
	}
	if _, err := ParseKind("trtllm"); err == nil {
		t.Fatal("ParseKind(trtllm) succeeded")
	}
	for _, k := range Kinds {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
}

func TestReady(t *testing.T) {
	tests := []struct {
		s    Seen
		e    Expect
		want bool
	}{
		{Seen{Kind: Dynamo, Status: 200, Prefill: 2, Decode: 1}, Expect{2, 1}, true},
		{Seen{Kind: Dynamo, Status: 200, Prefill: 3, Decode: 2}, Expect{2, 1}, true}, // more is fine (DP ranks)
		{Seen{Kind: Dynamo, Status: 200, Prefill: 2, Decode: 0}, Expect{2, 1}, false},
		{Seen{Kind: Dynamo, Status: 200, Prefill: 1, Decode: 1}, Expect{2, 1}, false},
		{Seen{Kind: Dynamo, Status: 0, Prefill: 2, Decode: 1}, Expect{2, 1}, false}, // no answer
		{Seen{Kind: Dynamo, Status: 200}, Expect{}, true},
		{Seen{Kind: Models, Status: 200, Models: 1}, Expect{0, 8}, true},
		{Seen{Kind: Models, Status: 200}, Expect{}, false},
		{Seen{Kind: Models, Status: 503, Models: 1}, Expect{}, false},
	}
	for _, tt := range tests {
		if got := tt.s.Ready(tt.e); got != tt.want {
			t.Errorf("%+v.Ready(%+v) = %v, want %v", tt.s, tt.e, got, tt.want)
		}
	}
}
