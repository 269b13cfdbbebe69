package mockengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseCompletionRequest(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantTokens []int // prompt tokens per prompt
		wantTexts  []string
		wantMax    int
		wantErr    bool
		check      func(t *testing.T, r *genRequest)
	}{
		// HAPPY PATH
		{name: "string prompt", body: `{"prompt":"abcdefgh1"}`, wantTokens: []int{3}, wantTexts: []string{"abcdefgh1"}, wantMax: DefaultMaxTokens},
		{name: "list of strings", body: `{"prompt":["abcd","",  "abcde"],"max_tokens":7}`, wantTokens: []int{1, 0, 2}, wantTexts: []string{"abcd", "", "abcde"}, wantMax: 7},
		{name: "token ids", body: `{"prompt":[1,2,3,4,5,6],"max_tokens":0}`, wantTokens: []int{6}, wantTexts: []string{""}, wantMax: 0},
		{name: "list of token-id lists", body: `{"prompt":[[1,2],[3,4,5]],"max_tokens":2}`, wantTokens: []int{2, 3}, wantTexts: []string{"", ""}, wantMax: 2},
		{name: "sa-bench body", body: `{"model":"m","prompt":[9,8,7],"temperature":0.0,"best_of":1,"max_tokens":128,"logprobs":null,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`,
			wantTokens: []int{3}, wantTexts: []string{""}, wantMax: 128,
			check: func(t *testing.T, r *genRequest) {
				if !r.stream || !r.includeUsage || !r.ignoreEOS || r.model != "m" || r.n != 1 {
					t.Errorf("flags: stream=%v includeUsage=%v ignoreEOS=%v model=%q n=%d", r.stream, r.includeUsage, r.ignoreEOS, r.model, r.n)
				}
			}},
		{name: "include_usage without stream is ignored", body: `{"prompt":"x","stream_options":{"include_usage":true}}`, wantTokens: []int{1}, wantTexts: []string{"x"}, wantMax: DefaultMaxTokens,
			check: func(t *testing.T, r *genRequest) {
				if r.includeUsage {
					t.Error("includeUsage set for a non-streaming request")
				}
			}},
		{name: "stop string and seed", body: `{"prompt":"x","stop":"Question","seed":42,"n":2}`, wantTokens: []int{1}, wantTexts: []string{"x"}, wantMax: DefaultMaxTokens,
			check: func(t *testing.T, r *genRequest) {
				if !slices.Equal(r.stop, []string{"Question"}) || r.n != 2 {
					t.Errorf("stop=%q n=%d", r.stop, r.n)
				}
			}},
		{name: "stop list", body: `{"prompt":"x","stop":["Question","Assistant:","<|separator|>"]}`, wantTokens: []int{1}, wantTexts: []string{"x"}, wantMax: DefaultMaxTokens,
			check: func(t *testing.T, r *genRequest) {
				if len(r.stop) != 3 {
					t.Errorf("stop=%q", r.stop)
				}
			}},
		// SAD PATH
		{name: "no prompt", body: `{"max_tokens":3}`, wantErr: true},
		{name: "empty list", body: `{"prompt":[]}`, wantErr: true},
		{name: "mixed list", body: `{"prompt":["a",1]}`, wantErr: true},
		{name: "empty token list", body: `{"prompt":[[1],[]]}`, wantErr: true},
		{name: "negative token id", body: `{"prompt":[1,-2]}`, wantErr: true},
		{name: "float token id", body: `{"prompt":[1.5]}`, wantErr: true},
		{name: "object prompt", body: `{"prompt":{"a":1}}`, wantErr: true},
		{name: "negative max_tokens", body: `{"prompt":"x","max_tokens":-1}`, wantErr: true},
		{name: "temperature of wrong type", body: `{"prompt":"x","temperature":"hot"}`, wantErr: true},
		{name: "bad stop", body: `{"prompt":"x","stop":5}`, wantErr: true},
		{name: "n zero", body: `{"prompt":"x","n":0}`, wantErr: true},
		{name: "not json", body: `prompt=x`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseCompletionRequest([]byte(tt.body), DefaultMaxTokens)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", r)
				}
				if re := (*requestError)(nil); !errors.As(err, &re) {
					t.Fatalf("error %v is %T, want *requestError (a 400)", err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var tokens []int
			var texts []string
			for _, p := range r.prompts {
				tokens = append(tokens, p.tokens)
				texts = append(texts, p.text)
			}
			if !slices.Equal(tokens, tt.wantTokens) || !slices.Equal(texts, tt.wantTexts) {
				t.Errorf("prompts: tokens %v texts %q, want %v %q", tokens, texts, tt.wantTokens, tt.wantTexts)
			}
			if r.maxTokens != tt.wantMax {
				t.Errorf("maxTokens = %d, want %d", r.maxTokens, tt.wantMax)
			}
			if r.endpoint != endpointCompletions {
				t.Errorf("endpoint = %v", r.endpoint)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestParseChatRequest(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantText   string
		wantTokens int
		wantMax    int
		wantErr    bool
	}{
		{name: "last user message wins", body: `{"messages":[{"role":"system","content":"abcd"},{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":"second one"}],"max_tokens":5}`,
			wantText: "second one", wantTokens: 1 + 2 + 1 + 3, wantMax: 5},
		{name: "content parts", body: `{"messages":[{"role":"user","content":[{"type":"text","text":"ab"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"cd"}]}]}`,
			wantText: "ab\ncd", wantTokens: 2, wantMax: DefaultMaxTokens},
		{name: "max_completion_tokens wins", body: `{"messages":[{"role":"user","content":"x"}],"max_tokens":5,"max_completion_tokens":9}`,
			wantText: "x", wantTokens: 1, wantMax: 9},
		{name: "null content", body: `{"messages":[{"role":"assistant","content":null},{"role":"user","content":"x"}]}`,
			wantText: "x", wantTokens: 1, wantMax: DefaultMaxTokens},
		{name: "no messages", body: `{"messages":[]}`, wantErr: true},
		{name: "numeric content", body: `{"messages":[{"role":"user","content":3}]}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseChatRequest([]byte(tt.body), DefaultMaxTokens)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", r)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(r.prompts) != 1 || r.prompts[0].text != tt.wantText || r.prompts[0].tokens != tt.wantTokens {
				t.Errorf("prompts = %+v, want text %q tokens %d", r.prompts, tt.wantText, tt.wantTokens)
			}
			if r.maxTokens != tt.wantMax {
				t.Errorf("maxTokens = %d, want %d", r.maxTokens, tt.wantMax)
			}
		})
	}
}

func TestApproxTokens(t *testing.T) {
	for in, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "héllo": 2, "12345678": 2} {
		if got := ApproxTokens(in); got != want {
			t.Errorf("ApproxTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestSplitPieces(t *testing.T) {
	tests := map[string][]string{
		"":                                 nil,
		"72":                               {"72"},
		"Natalia sold 48/2 = 24.\n#### 72": {"Natalia", " sold", " 48/2", " =", " 24.", "\n####", " 72"},
		"  lead":                           {"  lead"},
		"trail  ":                          {"trail  "},
		"   ":                              {"   "},
	}
	for in, want := range tests {
		got := splitPieces(in)
		if !slices.Equal(got, want) {
			t.Errorf("splitPieces(%q) = %q, want %q", in, got, want)
		}
		joined := ""
		for _, p := range got {
			joined += p
		}
		if joined != in {
			t.Errorf("pieces of %q join to %q", in, joined)
		}
	}
}

func TestCutAtStop(t *testing.T) {
	if got := cutAtStop("a b Question c Assistant: d", []string{"Assistant:", "Question", ""}); got != "a b " {
		t.Errorf("cutAtStop = %q", got)
	}
	if got := cutAtStop("abc", nil); got != "abc" {
		t.Errorf("cutAtStop without stop = %q", got)
	}
}

// TestScanTokenIDPrompts checks the byte-scanning fast path against
// encoding/json: whenever it accepts an input, the counts must be what a
// full decode gives; whatever it refuses goes to the general path.
func TestScanTokenIDPrompts(t *testing.T) {
	for _, in := range []string{
		`[1,2,3]`, ` [ 1 , 2 ,3 ] `, "[\n1,\t2]", `[0]`, `[[1],[2,3],[4,5,6]]`, ` [ [ 1 ] , [2] ] `,
		`[]`, `[[]]`, `[1,]`, `[,1]`, `[01]`, `[1.0]`, `[-1]`, `[1e3]`, `[1 2]`, `[[1],2]`, `[1,[2]]`, `[[1]`, `[1`,
		`["a"]`, `[[1],[2]] x`, `[123456789012345678901]`,
	} {
		got, ok := scanTokenIDPrompts(bytes.TrimSpace([]byte(in))) // parsePrompt trims
		var want []prompt
		var flat []int64
		var nested [][]int64
		wantOK := false
		if err := json.Unmarshal([]byte(in), &flat); err == nil && len(flat) > 0 {
			want, wantOK = []prompt{{tokens: len(flat)}}, true
		} else if err := json.Unmarshal([]byte(in), &nested); err == nil && len(nested) > 0 {
			wantOK = true
			for _, ids := range nested {
				if len(ids) == 0 {
					wantOK = false
				}
				want = append(want, prompt{tokens: len(ids)})
			}
		}
		if ok && (!wantOK || !slices.Equal(got, want)) {
			t.Errorf("scanTokenIDPrompts(%s) = %v, but encoding/json gives %v (valid %v)", in, got, want, wantOK)
		}
		if !ok && wantOK && !strings.Contains(in, "-") {
			t.Errorf("scanTokenIDPrompts(%s) refused a plain token-id prompt", in)
		}
	}
}
