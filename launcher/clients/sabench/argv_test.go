package sabench

import (
	"strings"
	"testing"
)

func TestContainerArgvGolden(t *testing.T) {
	base := Params{
		Script:         "/infmax-workspace/utils/bench_serving/benchmark_serving.py",
		Model:          "deepseek-ai/DeepSeek-R1",
		BaseURL:        "http://localhost:8000",
		InputLen:       8192,
		OutputLen:      1024,
		Concurrency:    2048,
		ResultDir:      "/logs/sa-bench_isl_8192_osl_1024",
		ResultFilename: "results_concurrency_2048_gpus_24_ctx_16_gen_8.json",
	}
	tests := []struct {
		name   string
		mutate func(*Params)
	}{
		// run_benchmark_serving with only the required flags.
		{"defaults", func(*Params) {}},
		// Every optional flag, in the order benchmark_lib.sh appends them.
		{"all_options", func(p *Params) {
			p.Python = "/usr/bin/python3"
			p.Backend = "openai"
			p.Endpoint = "/v1/completions"
			p.UseChatTemplate = true
			p.TrustRemoteCode = true
			p.Tokenizer = "/model"
			p.TokenizerMode = "slow"
			p.CustomTokenizer = "sa_bench_tokenizers.vllm_deepseek_v4.VLLMDeepseekV4Tokenizer"
			p.RangeRatio = 0.5
			p.MetricPercentiles = "90,99,99.9"
		}},
		// PROFILE=1: --profile after --ignore-eos and num_prompts = concurrency.
		{"profile", func(p *Params) { p.Profile = true }},
		// --dsv4 implies --use-chat-template.
		{"dsv4", func(p *Params) {
			p.DSV4 = true
			p.Concurrency = 4
			p.ResultFilename = "results_concurrency_4_gpus_8.json"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			tt.mutate(&p)
			if err := p.Check(); err != nil {
				t.Fatalf("Check: %v", err)
			}
			golden(t, "argv_"+tt.name+".golden", []byte(strings.Join(ContainerArgv(p), "\n")+"\n"))
		})
	}
}

func TestContainerArgvCounts(t *testing.T) {
	argv := ContainerArgv(Params{Script: "/s.py", Model: "m", BaseURL: "http://h:1", InputLen: 1, OutputLen: 1,
		Concurrency: 64, ResultDir: "/r", ResultFilename: "x.json"})
	flags := map[string]string{}
	for i := 2; i < len(argv); i++ {
		if strings.HasPrefix(argv[i], "--") && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") {
			flags[argv[i]] = argv[i+1]
		}
	}
	// num_prompts = 10·C and --num-warmups = 2·C, as in InferenceX's bench scripts.
	if flags["--num-prompts"] != "640" || flags["--num-warmups"] != "128" || flags["--max-concurrency"] != "64" ||
		flags["--random-range-ratio"] != "0.8" || flags["--request-rate"] != "inf" ||
		flags["--percentile-metrics"] != "ttft,tpot,itl,e2el" || flags["--backend"] != "vllm" {
		t.Errorf("flags %v", flags)
	}
	if argv[0] != "python3" {
		t.Errorf("interpreter %q, want python3", argv[0])
	}
}

func TestParamsCheck(t *testing.T) {
	good := Params{Script: "/s.py", Model: "m", BaseURL: "http://h:1", InputLen: 1, OutputLen: 1,
		Concurrency: 1, ResultDir: "/r", ResultFilename: "x.json"}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Params){
		"relative script":     func(p *Params) { p.Script = "utils/bench_serving/benchmark_serving.py" },
		"relative result dir": func(p *Params) { p.ResultDir = "logs" },
		"file name with dir":  func(p *Params) { p.ResultFilename = "a/x.json" },
		"not json":            func(p *Params) { p.ResultFilename = "x.txt" },
		"no model":            func(p *Params) { p.Model = "" },
		"no concurrency":      func(p *Params) { p.Concurrency = 0 },
		"bad url":             func(p *Params) { p.BaseURL = "localhost:8000" },
	} {
		p := good
		mutate(&p)
		if err := p.Check(); err == nil {
			t.Errorf("%s: Check accepted", name)
		}
	}
}
