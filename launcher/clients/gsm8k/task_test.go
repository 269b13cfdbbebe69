package gsm8k

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// The prompt goldens were produced by Python, not by this package, from
// lm-eval's own logic: ContextSampler.get_context (text + target_delimiter +
// target + fewshot_delimiter per shot), append_target_question (the question
// joins the last user message unless fewshot_as_multiturn), a task-wide
// random.Random(1234) whose i-th .sample(train, 5) serves document i, and
// TemplateAPI.apply_chat_template's json.dumps(messages, ensure_ascii=False):
//
//	python3 - ../shared/data/gsm8k <<'EOF'   # run in clients/gsm8k/testdata
//	import json, random, sys
//	load = lambda p: [json.loads(l) for l in open(p)]
//	test, train = load(sys.argv[1] + "/test.jsonl"), load(sys.argv[1] + "/train.jsonl")
//	IX = "Question: {{question}}\nEnd your response with the answer on the last line, formatted as: #### [number]\nAnswer:"
//	UP = "Question: {{question}}\nAnswer:"
//	text = lambda t, d: t.replace("{{question}}", d["question"])
//	single = lambda t, doc, shots: [{"role": "user", "content":
//	    "".join(text(t, s) + " " + s["answer"] + "\n\n" for s in shots) + text(t, doc)}]
//	def multi(t, doc, shots):
//	    m = []
//	    for s in shots: m += [{"role": "user", "content": text(t, s)}, {"role": "assistant", "content": s["answer"]}]
//	    return m + [{"role": "user", "content": text(t, doc)}]
//	rnd = random.Random(1234); plan = [rnd.sample(train, 5) for _ in range(2)]
//	for name, t, build, i in [("inferencex_doc0", IX, single, 0), ("inferencex_doc1", IX, single, 1),
//	        ("inferencex_multiturn_doc0", IX, multi, 0), ("upstream_doc0", UP, single, 0)]:
//	    open("prompt_" + name + ".golden", "w").write(json.dumps(build(t, test[i], plan[i]), ensure_ascii=False))
//	EOF
//
// Running this test with -update rewrites them from Go instead; only do that
// after re-checking against the snippet.
func TestPromptsMatchLMEval(t *testing.T) {
	test, train := splits(t)
	pl, err := FewshotPlan(2, len(train), 5, 1234)
	if err != nil {
		t.Fatal(err)
	}
	shots := func(i int) []Doc {
		var s []Doc
		for _, idx := range pl[i] {
			s = append(s, train[idx])
		}
		return s
	}
	multiturn := InferenceXTask()
	multiturn.FewshotAsMultiturn = true
	tests := []struct {
		name string
		task Task
		doc  int
	}{
		{"inferencex_doc0", InferenceXTask(), 0},
		{"inferencex_doc1", InferenceXTask(), 1},
		{"inferencex_multiturn_doc0", multiturn, 0},
		{"upstream_doc0", UpstreamTask(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := tt.task.Messages(test[tt.doc], shots(tt.doc))
			golden(t, "prompt_"+tt.name, []byte(ChatPrompt(msgs)))
		})
	}
}

func TestMessagesShape(t *testing.T) {
	task := InferenceXTask()
	doc := Doc{Question: "Q?", Answer: "A\n#### 1"}
	shots := []Doc{{Question: "S1?", Answer: "r1\n#### 2"}, {Question: "S2?", Answer: "r2\n#### 3"}}
	suffix := "\nEnd your response with the answer on the last line, formatted as: #### [number]\nAnswer:"

	got := task.Messages(doc, shots)
	want := []Message{{Role: "user", Content: "Question: S1?" + suffix + " r1\n#### 2\n\n" +
		"Question: S2?" + suffix + " r2\n#### 3\n\n" + "Question: Q?" + suffix}}
	if !slices.Equal(got, want) {
		t.Errorf("single turn:\n got %q\nwant %q", got, want)
	}

	task.FewshotAsMultiturn = true
	got = task.Messages(doc, shots)
	want = []Message{
		{Role: "user", Content: "Question: S1?" + suffix}, {Role: "assistant", Content: "r1\n#### 2"},
		{Role: "user", Content: "Question: S2?" + suffix}, {Role: "assistant", Content: "r2\n#### 3"},
		{Role: "user", Content: "Question: Q?" + suffix},
	}
	if !slices.Equal(got, want) {
		t.Errorf("multiturn:\n got %q\nwant %q", got, want)
	}

	task.FewshotAsMultiturn = false
	if got := task.Messages(doc, nil); len(got) != 1 || got[0].Content != "Question: Q?"+suffix {
		t.Errorf("zero-shot = %q", got)
	}
}

func TestStopSequencesKeepFirstFour(t *testing.T) {
	tests := []struct {
		until, want []string
	}{
		{[]string{"</s>", "<|im_end|>"}, []string{"</s>", "<|im_end|>"}},
		{[]string{"Question:", "</s>", "<|im_end|>"}, []string{"Question:", "</s>", "<|im_end|>"}},
		{[]string{"</s>", "<|im_end|>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "\u202e"},
			[]string{"</s>", "<|im_end|>", "<｜end▁of▁sentence｜>", "<｜User｜>"}},
	}
	for _, tt := range tests {
		task := InferenceXTask()
		task.Until = tt.until
		if got := task.StopSequences(); !slices.Equal(got, tt.want) {
			t.Errorf("StopSequences(%q) = %q, want %q", tt.until, got, tt.want)
		}
	}
}

func TestChatPromptEscapesLikePython(t *testing.T) {
	// json.dumps([{"role": "user", "content": s}], ensure_ascii=False) for these s:
	tests := []struct{ in, want string }{
		{"plain", `[{"role": "user", "content": "plain"}]`},
		{"a\"b\\c", `[{"role": "user", "content": "a\"b\\c"}]`},
		{"l1\nl2\tx\r\b\f\x01", `[{"role": "user", "content": "l1\nl2\tx\r\b\f\u0001"}]`},
		{"Janet’s <|im_end|> & \u2028", "[{\"role\": \"user\", \"content\": \"Janet’s <|im_end|> & \u2028\"}]"},
	}
	for _, tt := range tests {
		got := ChatPrompt([]Message{{Role: "user", Content: tt.in}})
		if got != tt.want {
			t.Errorf("ChatPrompt(%q) = %s, want %s", tt.in, got, tt.want)
		}
		var back []Message
		if err := json.Unmarshal([]byte(got), &back); err != nil || back[0].Content != tt.in {
			t.Errorf("ChatPrompt(%q) does not round-trip: %v %q", tt.in, err, back)
		}
	}
}

func TestLoadSplits(t *testing.T) {
	test, train := splits(t)
	if len(test) != TestDocs || len(train) != TrainDocs {
		t.Fatalf("loaded %d test and %d train documents, want %d and %d", len(test), len(train), TestDocs, TrainDocs)
	}
	if !strings.HasPrefix(test[0].Question, "Janet’s ducks lay 16 eggs") || !strings.HasSuffix(test[0].Answer, "#### 18") {
		t.Errorf("test[0] = %+v", test[0])
	}
	if !strings.HasPrefix(train[0].Question, "Natalia sold clips") {
		t.Errorf("train[0] = %+v", train[0])
	}
}

func TestLoadJSONLErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/bad.jsonl"
	if err := os.WriteFile(path, []byte("{\"question\":\"q\",\"answer\":\"a\"}\n\n{not json}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadJSONL(path)
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("LoadJSONL error = %v, want one naming line 3", err)
	}
	if _, err := LoadJSONL(dir + "/missing.jsonl"); err == nil {
		t.Error("missing file: no error")
	}
}
