// Package benchargs renders what a recipe's benchmark block hands the
// benchmark client, apart from where the job places it: the positional
// arguments and result files of srtctl's other benchmark types, a custom
// command's script, concurrencies and output paths on the host, and the
// engines' metrics URLs the client's environment names. The planner places
// the step and calls it with what it placed.
package benchargs

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// srtctlOutput is where each type writes under /logs and what it
// leaves there (srtctl's result_dir / BASE_DIR, which srtctl-bench keeps).
var srtctlOutput = map[string]struct {
	dir     string
	results []string
}{
	"mmlu":            {"accuracy", []string{"mmlu_*.json"}},
	"gpqa":            {"accuracy", []string{"gpqa_*.json"}},
	"longbenchv2":     {"accuracy", []string{"longbench_v2_*.json", "*.html"}},
	"gsm8k":           {"accuracy", []string{"gsm8k_*.json", "*.html"}},
	"lm-eval":         {"eval_results", []string{"meta_env.json", "results*.json", "sample*.jsonl"}},
	"router":          {"router-bench", []string{"*"}},
	"trace-replay":    {"artifacts", []string{"*"}},
	"mooncake-router": {"artifacts", []string{"*"}},
	"sglang-bench":    {"", nil},
}

// SrtctlOutput is the directory under the run's logs where benchmark type
// typ writes ("" for none) and the files it leaves there.
func SrtctlOutput(typ string) (dir string, results []string) {
	out := srtctlOutput[typ]
	return out.dir, out.results
}

// Target is the served model as the client's node reaches it.
type Target struct {
	Host, Port string // the frontend: "localhost" when it shares the client's node
	ServedName string // the plan's served model name
	Model      string // the name the AIPerf runners send
	Tokenizer  string // a container path or an hf: model
	Backend    string // the engine type: gsm8k has a script per engine
}

// FieldError is a benchmark field whose value gives no arguments.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Srtctl is one of srtctl's other benchmark types: the script type
// (gsm8k's is per engine, as srtctl has a script per engine) and the
// positional arguments its runner's build_command hands it (srtctl's
// benchmarks/<type>.py @c88ef731), given to `slurmbench srtctl-bench TYPE`
// (launcher/job/srtctlbench), which runs the same tool with them. A
// refused field is a *FieldError.
func Srtctl(typ string, rb recipe.Benchmark, t Target) (script string, args []string, err error) {
	endpoint := "http://" + t.Host + ":" + t.Port
	orInt := func(p *int, def int) string {
		if p == nil || *p == 0 {
			return strconv.Itoa(def)
		}
		return strconv.Itoa(*p)
	}
	optFloat := func(p *float64) string {
		if p == nil {
			return ""
		}
		return pyfloat.Repr(*p)
	}
	script = typ
	switch typ {
	case "mmlu":
		args = []string{endpoint, orInt(rb.NumExamples, 200), orInt(rb.MaxTokens, 2048), orInt(rb.Repeat, 8), orInt(rb.NumThreads, 512)}
	case "gpqa":
		args = []string{endpoint, orInt(rb.NumExamples, 198), orInt(rb.MaxTokens, 32768), orInt(rb.Repeat, 8), orInt(rb.NumThreads, 128)}
	case "longbenchv2":
		examples := ""
		if rb.NumExamples != nil && *rb.NumExamples != 0 {
			examples = strconv.Itoa(*rb.NumExamples)
		}
		args = []string{endpoint, orInt(rb.MaxContextLength, 128000), orInt(rb.NumThreads, 16), orInt(rb.MaxTokens, 16384), examples, strings.Join(rb.Categories, ",")}
	case "gsm8k":
		shots := "5"
		if rb.NumShots != nil {
			shots = strconv.Itoa(*rb.NumShots)
		}
		if t.Backend == "vllm" {
			temp := "0.0"
			if rb.Temperature != nil {
				temp = pyfloat.Repr(*rb.Temperature)
			}
			script = "gsm8k-vllm"
			args = []string{"http://" + t.Host, t.Port, t.ServedName, orInt(rb.NumExamples, 1319), orInt(rb.MaxTokens, 256), shots, temp, orInt(rb.Repeat, 1)}
		} else {
			topK := ""
			if rb.TopK != nil {
				topK = strconv.Itoa(*rb.TopK)
			}
			script = "gsm8k-sglang"
			args = []string{endpoint, orInt(rb.NumExamples, 1319), orInt(rb.MaxTokens, 16384), orInt(rb.NumThreads, 512), shots, optFloat(rb.Temperature), optFloat(rb.TopP), topK}
		}
	case "lm-eval":
		// The container path of the InferenceX checkout, never the host's
		// (the planner has checked that the profile names one).
		args = []string{endpoint, plan.WorkspaceMount}
	case "router":
		ratios := "0.1 0.3 0.5 0.7 0.9"
		if rb.PrefixRatios != nil {
			ratios, err = prefixRatios(rb.PrefixRatios)
			if err != nil {
				return "", nil, &FieldError{"benchmark.prefix_ratios", err.Error()}
			}
		}
		args = []string{endpoint, orInt(rb.ISL, 14000), orInt(rb.OSL, 200), orInt(rb.NumRequests, 200), orInt(rb.Concurrency, 20), ratios}
	case "sglang-bench":
		// str() of an absent isl/osl is "None" in srtctl; refuse instead
		// of handing the script a word it cannot use.
		if rb.ISL == nil || rb.OSL == nil || !rb.Concurrencies.Set {
			return "", nil, &FieldError{"benchmark.isl", "benchmark.type sglang-bench needs isl, osl and concurrencies"}
		}
		args = []string{endpoint, strconv.Itoa(*rb.ISL), strconv.Itoa(*rb.OSL), concList(rb.Concurrencies, "x"), cmp.Or(rb.ReqRate.Text(), "inf")}
	case "trace-replay":
		concs := ""
		if rb.Concurrencies.Set {
			concs = concList(rb.Concurrencies, ",")
		}
		args = []string{endpoint, t.Model, rb.TraceFile, concs, orInt(rb.TTFTThresholdMS, 2000), orInt(rb.ITLThresholdMS, 25), t.Tokenizer}
	case "mooncake-router":
		args = []string{endpoint, t.Model, cmp.Or(rb.MooncakeWorkload, "conversation"), orInt(rb.TTFTThresholdMS, 2000), orInt(rb.ITLThresholdMS, 25), t.Tokenizer}
	default:
		return "", nil, &FieldError{"benchmark.type", fmt.Sprintf("%q has no srtctl runner", typ)}
	}
	if typ == "trace-replay" || typ == "mooncake-router" {
		extra, err := aiperfArgs(rb.AIPerfArgs)
		if err != nil {
			return "", nil, &FieldError{"benchmark.aiperf_args", err.Error()}
		}
		args = append(args, extra...)
	}
	return script, args, nil
}

// concList is benchmark.concurrencies as srtctl passes it to a script: a
// string as written, a list joined with sep.
func concList(c recipe.Concurrencies, sep string) string {
	if c.Scalar != "" {
		return c.Scalar
	}
	parts := make([]string, len(c.Values))
	for i, v := range c.Values {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, sep)
}

// prefixRatios is router's benchmark.prefix_ratios: a string as written,
// a list of numbers joined with spaces (srtctl's RouterRunner).
func prefixRatios(raw *recipe.Raw) (string, error) {
	n := raw.Node
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, nil
	case yaml.SequenceNode:
		parts := make([]string, 0, len(n.Content))
		for _, item := range n.Content {
			f, err := strconv.ParseFloat(item.Value, 64)
			if err != nil || item.Kind != yaml.ScalarNode {
				return "", fmt.Errorf("%q is not a number", item.Value)
			}
			parts = append(parts, pyfloat.Repr(f))
		}
		return strings.Join(parts, " "), nil
	}
	return "", fmt.Errorf("want a list of numbers or a space-separated string")
}

// aiperfArgs renders benchmark.aiperf_args as srtctl's append_aiperf_args
// does, in the recipe's order: true → --key, false → nothing, anything
// else → --key value.
func aiperfArgs(raw *recipe.Raw) ([]string, error) {
	if raw == nil || raw.Node == nil || raw.Node.Tag == "!!null" {
		return nil, nil
	}
	n := raw.Node
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("want a mapping of aiperf flag → value")
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s: want a scalar value", k)
		}
		switch v.Tag {
		case "!!bool":
			if b, err := strconv.ParseBool(strings.ToLower(v.Value)); err == nil && b {
				out = append(out, "--"+k)
			}
		case "!!float":
			f, err := strconv.ParseFloat(v.Value, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a number", k, v.Value)
			}
			out = append(out, "--"+k, pyfloat.Repr(f))
		case "!!null":
			out = append(out, "--"+k, "None")
		default:
			out = append(out, "--"+k, v.Value)
		}
	}
	return out, nil
}
