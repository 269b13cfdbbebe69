package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/clients/sabench"
	"github.com/slurmbench/slurmbench/launcher/endpoint"
	"github.com/slurmbench/slurmbench/launcher/job/steps"
)

// The URL mode of bench and eval: flags into urlmode's options.

func urlFlag() cli.Flag {
	return &cli.StringFlag{Name: "url", Usage: "URL mode: the serving endpoint `URL`, http://host:port (no plan needed)"}
}

func urlCommonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "URL mode: the served model `NAME` (sent as \"model\")"},
		&cli.StringFlag{Name: "out", Usage: "URL mode: results `DIR`, laid out like a run's results directory (default: a new bench-<UTC time> or eval-<UTC time> here; one that holds files is refused without --overwrite)"},
		&cli.BoolFlag{Name: "overwrite", Usage: "URL mode: write into an --out that already holds files"},
		jsonFlag(),
	}
}

func benchURLFlags() []cli.Flag {
	return append([]cli.Flag{urlFlag()}, append(urlCommonFlags(),
		&cli.IntFlag{Name: "isl", Usage: "URL mode: input length in `TOKENS`"},
		&cli.IntFlag{Name: "osl", Usage: "URL mode: output length in `TOKENS` (max_tokens, ignore_eos)"},
		&cli.StringFlag{Name: "conc", Usage: "URL mode: concurrencies, e.g. 8x32x64, \"8 32\" or 8,32"},
		&cli.IntFlag{Name: "num-prompts", Usage: "URL mode: measured requests per point `N` (default 10 × concurrency)"},
		&cli.IntFlag{Name: "warmups", Usage: "URL mode: warmup requests per point `N` (default 2 × concurrency; 0: none)"},
		&cli.StringFlag{Name: "req-rate", Value: "inf", Usage: "URL mode: request rate, inf or requests per second"},
		&cli.StringSliceFlag{Name: "goodput", Usage: "URL mode: count requests meeting every SLO per second, `METRIC:MS` each (ttft:200 tpot:30 e2el:5000), as benchmark_serving.py's --goodput"},
		&cli.Float64Flag{Name: "range-ratio", Value: sabench.DefaultRangeRatio, Usage: "URL mode: lengths are drawn uniformly from [ratio × L, L]"},
		&cli.StringFlag{Name: "endpoint", Value: endpoint.EndpointCompletions, Usage: "URL mode: completions (token-id prompts) or chat (text prompts, /v1/chat/completions)"},
		&cli.StringFlag{Name: "result-filename", Usage: "URL mode: also stage the results into --out under InferenceX's names, <NAME>_<config>_conc<C>_gpus_<T>...json", EnvVars: []string{"RESULT_FILENAME"}},
		&cli.IntFlag{Name: "gpus", Value: 1, Usage: "URL mode: GPUs serving the endpoint (result names, per-GPU throughput)"},
		&cli.IntFlag{Name: "prefill-gpus", Usage: "URL mode: of --gpus, the prefill GPUs of a disaggregated deployment"},
		&cli.IntFlag{Name: "decode-gpus", Usage: "URL mode: of --gpus, the decode GPUs of a disaggregated deployment"},
	)...)
}

func evalURLFlags() []cli.Flag {
	return append([]cli.Flag{urlFlag()}, append(urlCommonFlags(),
		&cli.StringFlag{Name: "data-dir", Usage: "URL mode: `DIR` holding gsm8k's test.jsonl and train.jsonl (default: the splits built into slurmbench)", EnvVars: []string{"SLURMBENCH_GSM8K"}},
		&cli.IntFlag{Name: "concurrency", Usage: "URL mode: requests in flight (default 64)"},
	)...)
}

// benchURLOptions are bench's URL-mode flags.
func benchURLOptions(c *cli.Context) endpoint.BenchOptions {
	return endpoint.BenchOptions{
		IO: ioOf(c), Conc: c.String("conc"), Endpoint: c.String("endpoint"), ResultFilename: c.String("result-filename"), Overwrite: c.Bool("overwrite"),
		Warmups: intIfSet(c, "warmups"),
		URLBench: steps.URLBench{
			URL: c.String("url"), Model: c.String("model"), ISL: c.Int("isl"), OSL: c.Int("osl"), NumPrompts: c.Int("num-prompts"),
			RequestRate: c.String("req-rate"), RangeRatio: c.Float64("range-ratio"), Out: c.String("out"), Goodput: c.StringSlice("goodput"),
			GPUs: c.Int("gpus"), PrefillGPUs: c.Int("prefill-gpus"), DecodeGPUs: c.Int("decode-gpus"),
		},
	}
}

// evalURLOptions are eval's URL-mode flags.
func evalURLOptions(c *cli.Context) endpoint.EvalOptions {
	return endpoint.EvalOptions{
		IO:          ioOf(c),
		URLEval:     steps.URLEval{URL: c.String("url"), Model: c.String("model"), DataDir: c.String("data-dir"), Concurrency: c.Int("concurrency"), Out: c.String("out")},
		ModelPrefix: c.String("model-prefix"), Limit: c.Int("limit"), ContextLength: c.Int("context-length"), Overwrite: c.Bool("overwrite"),
	}
}
