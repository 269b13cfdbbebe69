package gsm8k

import (
	"fmt"
	"strings"
)

// Task is the part of an lm-eval task YAML the gsm8k eval depends on. Only
// the {{question}} and {{answer}} placeholders are supported in the two
// templates, which is all the gsm8k YAMLs use; they are substituted verbatim,
// as Jinja does without autoescaping.
type Task struct {
	Name        string // task name and result key, "gsm8k"
	DatasetPath string // recorded in the config dump only
	DatasetName string

	DocToText   string // prompt template for a question
	DocToTarget string // few-shot answer template

	TargetDelimiter  string // between a shot's prompt and its answer
	FewshotDelimiter string // after each shot
	NumFewshot       int
	FewshotSeed      int64 // lm-eval's --seed fourth value, 1234 by default
	// FewshotAsMultiturn sends each shot as its own user/assistant turn
	// instead of one user message holding every shot and the question.
	FewshotAsMultiturn bool

	// Until are the task's stop sequences. lm-eval's chat-completions payload
	// keeps only the first four (the OpenAI limit).
	Until []string

	StrictRegex     string   // strict-match filter pattern
	FlexibleRegex   string   // flexible-extract filter pattern
	RegexesToIgnore []string // exact_match normalisation, applied in order
	IgnoreCase      bool

	Version float64 // metadata.version
}

// Filter names, in the order the task YAML lists them.
const (
	FilterStrict   = "strict-match"
	FilterFlexible = "flexible-extract"
)

// Filters returns the filter names in task order.
func Filters() []string { return []string{FilterStrict, FilterFlexible} }

// InferenceXTask is utils/evals/gsm8k.yaml as InferenceX runs it: the upstream
// task with a doc_to_text that asks for "#### [number]", five shots from the
// train split, greedy. The stop list is InferenceX's pinned task's; later
// InferenceX revisions append
// DeepSeek turn markers, which the four-entry cap mostly drops again.
func InferenceXTask() Task {
	t := upstreamBase()
	t.DocToText = "Question: {{question}}\nEnd your response with the answer on the last line, formatted as: #### [number]\nAnswer:"
	t.Until = []string{"</s>", "<|im_end|>"}
	return t
}

// UpstreamTask is lm-evaluation-harness's own lm_eval/tasks/gsm8k/gsm8k.yaml.
func UpstreamTask() Task {
	t := upstreamBase()
	t.DocToText = "Question: {{question}}\nAnswer:"
	t.Until = []string{"Question:", "</s>", "<|im_end|>"}
	return t
}

func upstreamBase() Task {
	return Task{
		Name:             "gsm8k",
		DatasetPath:      "openai/gsm8k",
		DatasetName:      "main",
		DocToTarget:      "{{answer}}",
		TargetDelimiter:  " ",
		FewshotDelimiter: "\n\n",
		NumFewshot:       5,
		FewshotSeed:      1234,
		StrictRegex:      `#### (\-?[0-9\.\,]+)`,
		FlexibleRegex:    `(-?[$0-9.,]{2,})|(-?[0-9]+)`,
		RegexesToIgnore:  []string{",", `\$`, "(?s).*#### ", `\.$`},
		IgnoreCase:       true,
		Version:          3.0,
	}
}

// Text renders doc_to_text for doc.
func (t Task) Text(d Doc) string { return render(t.DocToText, d) }

// Target renders doc_to_target for doc.
func (t Task) Target(d Doc) string { return render(t.DocToTarget, d) }

func render(tmpl string, d Doc) string {
	return strings.NewReplacer("{{question}}", d.Question, "{{answer}}", d.Answer).Replace(tmpl)
}

// StopSequences is the "stop" list of the request body. lm-eval appends the
// eos_string only when it is missing (it is not: "</s>" is in every gsm8k
// until list) and then cuts the list to four entries.
func (t Task) StopSequences() []string {
	stop := append([]string(nil), t.Until...)
	if len(stop) > 4 {
		stop = stop[:4]
	}
	return stop
}

// Message is one chat turn of a /v1/chat/completions request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Messages builds the chat history lm-eval sends for doc with the given
// shots (ConfigurableTask.fewshot_context with apply_chat_template). Without
// multiturn, every shot is "<text><target_delimiter><target><fewshot_delimiter>"
// and the question is appended to that same user message.
func (t Task) Messages(d Doc, shots []Doc) []Message {
	if t.FewshotAsMultiturn {
		msgs := make([]Message, 0, 2*len(shots)+1)
		for _, s := range shots {
			msgs = append(msgs,
				Message{Role: "user", Content: t.Text(s)},
				Message{Role: "assistant", Content: t.Target(s)})
		}
		return append(msgs, Message{Role: "user", Content: t.Text(d)})
	}
	var b strings.Builder
	for _, s := range shots {
		b.WriteString(t.Text(s))
		if target := t.Target(s); target != "" {
			b.WriteString(t.TargetDelimiter)
			b.WriteString(target)
			b.WriteString(t.FewshotDelimiter)
		}
	}
	b.WriteString(t.Text(d))
	return []Message{{Role: "user", Content: b.String()}}
}

// FewshotPlan returns, for each of the first nDocs test documents in order,
// the train indices lm-eval's default sampler draws for it. One
// random.Random(seed) serves the whole task (Task.set_fewshot_seed), and
// build_all_requests walks the documents in order, so document i gets the
// i-th successive rnd.sample(train_docs, k). The few-shot split (train) is not
// the test split, so no extra draw or self-exclusion applies.
func FewshotPlan(nDocs, nTrain, k int, seed int64) ([][]int, error) {
	if nDocs < 0 {
		return nil, fmt.Errorf("few-shot plan for %d documents", nDocs)
	}
	rnd := NewPyRandom(seed)
	pl := make([][]int, nDocs)
	for i := range pl {
		idx, err := rnd.SampleIndices(nTrain, k)
		if err != nil {
			return nil, fmt.Errorf("few-shot sample for document %d: %w", i, err)
		}
		pl[i] = idx
	}
	return pl, nil
}
