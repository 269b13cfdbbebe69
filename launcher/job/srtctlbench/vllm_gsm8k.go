package srtctlbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/pyfloat"
	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
)

// vllmGSM8K is srtctl's gsm8k on vLLM (scripts/gsm8k/vllm-bench.sh
// @c88ef731, which runs REPEAT times its copy of vLLM's
// tests/evals/gsm8k/gsm8k_eval.py, scripts/gsm8k/gsm8k_eval.py@c88ef731): arguments HOST PORT MODEL [NUM_QUESTIONS] [MAX_TOKENS]
// [NUM_SHOTS] [TEMPERATURE] [REPEAT], results /logs/accuracy/gsm8k_run<i>.json.
// The eval is written here in Go with that script's rules, read as facts:
// the first NUM_SHOTS train problems as "Question: …\nAnswer: …\n\n" shots,
// then the first NUM_QUESTIONS test problems as "Question: …\nAnswer:";
// /v1/completions with the stop words, seed 42 and the model when one is
// named, up to 100 requests at once (aiohttp's connection limit), 600 s
// per request; the answer is the last run of digits once commas are
// dropped; the results file has the same keys, in the same order, indented
// as json.dump(indent=2) does. The GSM8K splits are the ones built into the
// binary (internal/gsm8kdata), the data the script downloads.
func (r *run) vllmGSM8K(ctx context.Context) error {
	if len(r.args) < 3 {
		return fmt.Errorf("gsm8k-vllm: want HOST PORT MODEL [NUM_QUESTIONS] [MAX_TOKENS] [NUM_SHOTS] [TEMPERATURE] [REPEAT], got %d arguments", len(r.args))
	}
	c := vllmEval{host: r.args[0], port: r.args[1], model: r.args[2], seed: 42, http: r.o.HTTP}
	ints := []struct {
		name string
		i    int
		def  string
		to   *int
	}{{"NUM_QUESTIONS", 3, "1319", &c.questions}, {"MAX_TOKENS", 4, "256", &c.maxTokens}, {"NUM_SHOTS", 5, "5", &c.shots}}
	for _, a := range ints {
		n, err := strconv.Atoi(r.arg(a.i, a.def))
		if err != nil || n < 0 {
			return fmt.Errorf("gsm8k-vllm: %s %q is not a count", a.name, r.arg(a.i, a.def))
		}
		*a.to = n
	}
	if _, err := strconv.Atoi(c.port); err != nil {
		return fmt.Errorf("gsm8k-vllm: PORT %q is not a number", c.port)
	}
	temp, err := strconv.ParseFloat(r.arg(6, "0.0"), 64)
	if err != nil {
		return fmt.Errorf("gsm8k-vllm: TEMPERATURE %q is not a number", r.arg(6, "0.0"))
	}
	c.temperature = temp
	repeat, err := strconv.Atoi(r.arg(7, "1"))
	if err != nil {
		return fmt.Errorf("gsm8k-vllm: REPEAT %q is not a count", r.arg(7, "1"))
	}
	test, train, err := gsm8k.LoadDir("")
	if err != nil {
		return fmt.Errorf("gsm8k-vllm: %w", err)
	}
	if c.shots > len(train) {
		return fmt.Errorf("gsm8k-vllm: NUM_SHOTS %d: the train split has %d problems", c.shots, len(train))
	}
	c.build(test, train)
	if len(c.prompts) == 0 {
		return fmt.Errorf("gsm8k-vllm: NUM_QUESTIONS is 0: nothing to score")
	}
	resultDir := filepath.Join(r.o.Logs, "accuracy")
	if err := os.MkdirAll(resultDir, 0o755); err != nil {
		return fmt.Errorf("gsm8k-vllm: %w", err)
	}
	for i := 1; i <= repeat; i++ {
		r.logf("===== vLLM GSM8K run %d/%d (%s) =====", i, repeat, r.o.Now().Format("2006-01-02 15:04:05"))
		res := c.evaluate(ctx, r)
		if err := ctx.Err(); err != nil {
			return err
		}
		res.timestamp = float64(r.o.Now().UnixNano()) / 1e9
		out := filepath.Join(resultDir, fmt.Sprintf("gsm8k_run%d.json", i))
		if err := atomicfile.WriteFile(out, res.json(c), atomicfile.Options{Overwrite: true}); err != nil {
			return fmt.Errorf("gsm8k-vllm: %w", err)
		}
		r.logf("Accuracy: %.3f  invalid: %.3f  latency: %.3f s  results: %s", res.accuracy, res.invalidRate, res.latency, out)
	}
	return nil
}

// invalid is the score of an answer with no number (the eval's INVALID).
const invalid = "invalid"

type vllmEval struct {
	host, port, model    string
	questions, maxTokens int
	shots, seed          int
	temperature          float64
	http                 *http.Client
	prompts, labels      []string
	// concurrency and requestTimeout are 100 and 600 s when zero.
	concurrency    int
	requestTimeout time.Duration
}

func (c *vllmEval) build(test, train []gsm8k.Doc) {
	var shots strings.Builder
	for _, d := range train[:c.shots] {
		fmt.Fprintf(&shots, "Question: %s\nAnswer: %s\n\n", d.Question, d.Answer)
	}
	n := min(c.questions, len(test))
	c.prompts, c.labels = make([]string, n), make([]string, n)
	for i, d := range test[:n] {
		c.prompts[i] = shots.String() + "Question: " + d.Question + "\nAnswer:"
		c.labels[i] = answerValue(d.Answer)
	}
}

var digits = regexp.MustCompile(`\d+`)

// answerValue is the number an answer ends with: the last run of digits
// once commas are dropped, as Python's ast.literal_eval reads it (a run
// with a leading zero before other digits is no literal: invalid).
func answerValue(s string) string {
	runs := digits.FindAllString(strings.ReplaceAll(s, ",", ""), -1)
	if len(runs) == 0 {
		return invalid
	}
	last := runs[len(runs)-1]
	trimmed := strings.TrimLeft(last, "0")
	switch {
	case trimmed == "":
		return "0"
	case trimmed != last:
		return invalid
	}
	return last
}

type vllmResult struct {
	accuracy, invalidRate, latency, timestamp float64
	outputTokens                              int
}

func (c *vllmEval) evaluate(ctx context.Context, r *run) vllmResult {
	n := len(c.prompts)
	answers, tokens := make([]string, n), make([]int, n)
	conc := c.concurrency
	if conc <= 0 {
		conc = 100
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c.prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			text, used, err := c.complete(ctx, c.prompts[i])
			if err != nil {
				r.logf("Error calling vLLM API: %v", err)
			}
			answers[i], tokens[i] = text, used
		}()
	}
	wg.Wait()
	res := vllmResult{latency: time.Since(start).Seconds()}
	correct, bad := 0, 0
	for i, a := range answers {
		v := answerValue(a)
		if v == c.labels[i] {
			correct++
		}
		if v == invalid {
			bad++
		}
		res.outputTokens += tokens[i]
	}
	res.accuracy, res.invalidRate = float64(correct)/float64(n), float64(bad)/float64(n)
	return res
}

// complete is one /v1/completions request: the text and the completion
// tokens the server counted.
func (c *vllmEval) complete(ctx context.Context, prompt string) (string, int, error) {
	body := map[string]any{"prompt": prompt, "temperature": c.temperature, "max_tokens": c.maxTokens,
		"stop": []string{"Question", "Assistant:", "<|separator|>"}, "seed": c.seed}
	if c.model != "" {
		body["model"] = c.model
	}
	b, err := json.Marshal(body)
	if err != nil {
		return "", 0, err
	}
	timeout := c.requestTimeout
	if timeout <= 0 {
		timeout = 600 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.host+":"+c.port+"/v1/completions", bytes.NewReader(b))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", 0, err
	}
	if resp.StatusCode/100 != 2 {
		return "", 0, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, raw)
	}
	var out struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Choices) == 0 {
		return "", 0, fmt.Errorf("no completion in the response: %.200s", raw)
	}
	return out.Choices[0].Text, out.Usage.CompletionTokens, nil
}

// json is the results file as the eval's json.dump(result, indent=2)
// writes it.
func (res vllmResult) json(c vllmEval) []byte {
	n := len(c.prompts)
	perSecond := func(x float64) float64 {
		if res.latency > 0 {
			return x / res.latency
		}
		return 0
	}
	model := "null"
	if c.model != "" {
		model = string(pyjson.AppendString(nil, c.model))
	}
	fields := [][2]string{
		{"accuracy", pyfloat.JSON(res.accuracy)},
		{"invalid_rate", pyfloat.JSON(res.invalidRate)},
		{"latency", pyfloat.JSON(res.latency)},
		{"questions_per_second", pyfloat.JSON(perSecond(float64(n)))},
		{"total_output_tokens", strconv.Itoa(res.outputTokens)},
		{"tokens_per_second", pyfloat.JSON(perSecond(float64(res.outputTokens)))},
		{"num_questions", strconv.Itoa(n)},
		{"num_shots", strconv.Itoa(c.shots)},
		{"max_tokens", strconv.Itoa(c.maxTokens)},
		{"timestamp", pyfloat.JSON(res.timestamp)},
		{"model", model},
		{"temperature", pyfloat.JSON(c.temperature)},
		{"seed", strconv.Itoa(c.seed)},
	}
	var b bytes.Buffer
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  %s: %s", pyjson.AppendString(nil, f[0]), f[1])
	}
	b.WriteString("\n}")
	return b.Bytes()
}
