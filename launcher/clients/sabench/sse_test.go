package sabench

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestParseChunk(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		choices bool
		usage   int // -1: none
		text    string
	}{
		{"token", `{"id":"c","choices":[{"index":0,"text":" hi","finish_reason":null}]}`, true, -1, " hi"},
		{"empty text still counts", `{"choices":[{"index":0,"text":""}]}`, true, -1, ""},
		{"vLLM usage chunk", `{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":32,"total_tokens":37}}`, false, 32, ""},
		// Dynamo-style: usage on the last token chunk is read too.
		{"usage with choices", `{"choices":[{"text":"x"}],"usage":{"completion_tokens":7}}`, true, 7, "x"},
		{"null usage", `{"choices":[],"usage":null}`, false, -1, ""},
		{"null completion_tokens", `{"usage":{"completion_tokens":null}}`, false, -1, ""},
		{"null choices", `{"choices":null}`, false, -1, ""},
		{"error object", `{"error":{"message":"boom","choices":[1]}}`, false, -1, ""},
		// Keys inside strings and nested objects do not confuse the scanner.
		{"tricky strings", `{"model":"\"choices\":[1]","meta":{"usage":{"completion_tokens":9}},"choices":[ {"text":"}]\\\""} ]}`, true, -1, `}]\"`},
		{"spaces", ` { "choices" : [ { "text" : "a" } ] , "usage" : { "completion_tokens" : 3 } } `, true, 3, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseChunk([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			gotUsage := -1
			if c.usage {
				gotUsage = c.completionTokens
			}
			if c.choices != tt.choices || gotUsage != tt.usage {
				t.Errorf("choices %v usage %d, want %v %d", c.choices, gotUsage, tt.choices, tt.usage)
			}
			if c.choices {
				if got := choiceText(c.choicesRaw); got != tt.text {
					t.Errorf("text %q", got)
				}
			}
		})
	}
	for _, bad := range []string{`not json`, `{"choices":[`, `{"a" 1}`, `{"a":1,}`, `{"a":"x`, `["choices"]`} {
		if _, err := parseChunk([]byte(bad)); err == nil {
			t.Errorf("parseChunk(%s) accepted", bad)
		}
	}
}

func TestSSELines(t *testing.T) {
	long := strings.Repeat("x", 100)
	stream := "data: {\"a\":1}\r\n\n: keep-alive\nevent: message\ndata:{\"b\":2}\n" + "data: " + long + "\ndata: [DONE]"
	s := sseLines{r: bufio.NewReaderSize(strings.NewReader(stream), 16)} // smaller than a line
	var payloads []string
	for {
		line, err := s.next()
		if p, ok := ssePayload(line); ok {
			payloads = append(payloads, string(p))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{`{"a":1}`, `{"b":2}`, long, "[DONE]"}
	if strings.Join(payloads, "|") != strings.Join(want, "|") {
		t.Errorf("payloads %q, want %q", payloads, want)
	}
}

func BenchmarkParseChunk(b *testing.B) {
	line := []byte(`{"id":"cmpl-9f2c","object":"text_completion","created":1796300100,"model":"deepseek-ai/DeepSeek-R1","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if c, err := parseChunk(line); err != nil || !c.choices {
			b.Fatal(err)
		}
	}
}

// TestSSELineIsBounded: a line past MaxSSELine fails with an error naming
// the limit; it used to be assembled without bound (a server streaming one
// line without a newline grew the client past 1 GiB in 2 s).
func TestSSELineIsBounded(t *testing.T) {
	s := sseLines{r: bufio.NewReaderSize(io.LimitReader(neverNewline{}, MaxSSELine+1), 8<<10)}
	line, err := s.next()
	if !errors.Is(err, errSSELineTooLong) || line != nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("next() = %d bytes, %v; want the 1 MiB limit named", len(line), err)
	}
}

type neverNewline struct{}

func (neverNewline) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
