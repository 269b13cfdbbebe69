package sabench

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/slurmbench/slurmbench/launcher/clients/sabench/numpy"
)

// DefaultVocabSize bounds the random prompt token ids. Without a tokenizer
// the client cannot know the model's vocabulary; every model the fleets
// serve (DeepSeek, Qwen, Llama, Kimi, GLM, MiniMax) has at least 32000
// regular tokens, so ids below it are valid everywhere.
const DefaultVocabSize = 32000

// DatasetOptions are benchmark_serving.py's random-dataset arguments.
type DatasetOptions struct {
	InputLen   int     // --random-input-len
	OutputLen  int     // --random-output-len
	RangeRatio float64 // --random-range-ratio; lengths are uniform on [int(L*ratio), L]
	NumPrompts int     // --num-prompts
	VocabSize  int     // tokenizer.vocab_size stand-in; default DefaultVocabSize
	Seed       uint32  // --seed (np.random.seed)
}

// Dataset is SA-Bench's random dataset without a tokenizer. Request i sends
// the token ids (Offsets[i] + i + j) % VocabSize for j < InputLens[i] and asks
// for OutputLens[i] tokens: the ids benchmark_serving.py builds before it
// decodes and re-encodes them through the tokenizer. Lengths and offsets are
// the same numpy draws, in the same order, as the Python tool's.
type Dataset struct {
	InputLens  []int
	OutputLens []int
	Offsets    []int64
	VocabSize  int
}

// NewDataset draws the dataset for o.
func NewDataset(o DatasetOptions) (*Dataset, error) {
	d, _, err := newDataset(o)
	return d, err
}

// newDataset also returns the generator in the state the Python tool's
// global one has after sampling, for the arrival intervals that follow.
func newDataset(o DatasetOptions) (*Dataset, *numpy.RandomState, error) {
	if o.VocabSize == 0 {
		o.VocabSize = DefaultVocabSize
	}
	if err := o.check(); err != nil {
		return nil, nil, err
	}
	r := numpy.NewRandomState(o.Seed)
	n := o.NumPrompts
	draw := make([]int64, 3*n)
	inputs, outputs, offsets := draw[:n], draw[n:2*n], draw[2*n:]
	// sample_uniform: np.random.randint(int(L*ratio), L+1, size=n), inputs first.
	r.Randint(lowerLen(o.InputLen, o.RangeRatio), int64(o.InputLen)+1, inputs)
	r.Randint(lowerLen(o.OutputLen, o.RangeRatio), int64(o.OutputLen)+1, outputs)
	r.Randint(0, int64(o.VocabSize), offsets)
	d := &Dataset{
		InputLens:  make([]int, n),
		OutputLens: make([]int, n),
		Offsets:    offsets,
		VocabSize:  o.VocabSize,
	}
	for i := range n {
		d.InputLens[i] = int(inputs[i])
		d.OutputLens[i] = int(outputs[i])
	}
	return d, r, nil
}

// lowerLen is Python's int(L * ratio): truncation toward zero.
func lowerLen(l int, ratio float64) int64 { return int64(float64(l) * ratio) }

func (o DatasetOptions) check() error {
	var errs []error
	if o.InputLen < 1 || o.OutputLen < 1 {
		errs = append(errs, fmt.Errorf("input and output lengths must be at least 1 (got %d and %d)", o.InputLen, o.OutputLen))
	}
	if !(o.RangeRatio >= 0 && o.RangeRatio <= 1) {
		errs = append(errs, fmt.Errorf("range ratio must be in [0, 1] (got %v)", o.RangeRatio))
	} else if o.InputLen >= 1 && lowerLen(o.InputLen, o.RangeRatio) < 1 {
		errs = append(errs, fmt.Errorf("range ratio %v allows empty prompts for input length %d", o.RangeRatio, o.InputLen))
	}
	if o.NumPrompts < 1 {
		errs = append(errs, fmt.Errorf("number of prompts must be at least 1 (got %d)", o.NumPrompts))
	}
	if o.VocabSize < 1 || int64(o.VocabSize) > 1<<32 {
		errs = append(errs, fmt.Errorf("vocabulary size must be in [1, 2^32] (got %d)", o.VocabSize))
	}
	return errors.Join(errs...)
}

// Len is the number of requests.
func (d *Dataset) Len() int { return len(d.InputLens) }

// AppendPrompt appends request i's prompt as a JSON array of token ids.
func (d *Dataset) AppendPrompt(dst []byte, i int) []byte {
	dst = append(dst, '[')
	vocab := int64(d.VocabSize)
	id := (d.Offsets[i] + int64(i)) % vocab
	for j := range d.InputLens[i] {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, id, 10)
		if id++; id == vocab {
			id = 0
		}
	}
	return append(dst, ']')
}

// promptWords stand in for token ids when a prompt must be text (the chat
// endpoint) and there is no tokenizer to decode the ids: common English
// words that are one token in the BPE vocabularies of the served models,
// each four bytes with its leading space, so a server that estimates
// tokens from bytes (4 per token, as the mock engine does) counts exactly
// InputLens[i] as well.
var promptWords = [...]string{
	" the", " and", " for", " you", " not", " are", " but", " all",
	" any", " can", " had", " her", " was", " one", " our", " out",
	" day", " get", " has", " him", " his", " how", " man", " new",
	" now", " old", " see", " two", " way", " who", " did", " its",
}

// AppendPromptText appends request i's prompt as a JSON string: one word of
// promptWords per token id, chosen by the id.
func (d *Dataset) AppendPromptText(dst []byte, i int) []byte {
	dst = append(dst, '"')
	vocab := int64(d.VocabSize)
	id := (d.Offsets[i] + int64(i)) % vocab
	for j := range d.InputLens[i] {
		w := promptWords[id%int64(len(promptWords))]
		if j == 0 {
			w = w[1:]
		}
		dst = append(dst, w...)
		if id++; id == vocab {
			id = 0
		}
	}
	return append(dst, '"')
}
