package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSrtctlBenchmarkTypesInContainer: each of srtctl's other benchmark
// types runs through `slurmbench run` with the real container runtime:
// `slurmbench srtctl-bench TYPE` starts in the engine image from the run
// directory's mount and runs the type's tool with srtctl's arguments; the
// tools are stand-ins mounted into the image (testdata/srtctl-bench: the
// mock image has no Python, aiperf, git or real bash: its /bin/bash is
// busybox ash) that record how they were
// called and leave what the real ones leave. What the type writes under
// /logs is collected into results/<type> and listed in the manifest
// (sglang-bench reports in its log only), and mooncake-router's rollup
// lands in the logs.
func TestSrtctlBenchmarkTypesInContainer(t *testing.T) {
	t.Parallel()
	c := setup(t)
	img := pushMockImage(t, c, uniqueName("srtctl-bench"))
	t.Cleanup(func() { removeBundle(bundleOf(t, filepath.Join(c.Root, "squash"), img.Ref)) })
	type check struct {
		glob, want string // a file of the run directory, and what it holds
	}
	cases := []struct {
		typ, bench string
		workspace  bool
		checks     []check
		listed     string // a path the staged manifest lists ("" = none)
	}{
		{typ: "mmlu", bench: "  num_examples: 3\n  repeat: 1\n", listed: "mmlu/mmlu_e2e.json", checks: []check{
			{"results/mmlu/mmlu_e2e.json", "-m sglang.test.run_eval --base-url http://"},
			{"results/mmlu/mmlu_e2e.json", "--model deepseek-ai/DeepSeek-R1 --eval-name mmlu --num-examples 3 --max-tokens 2048 --repeat 1 --num-threads 512"},
			{"logs/benchmark.log", "Results saved to: /logs/accuracy/mmlu_e2e.json"}}},
		{typ: "gpqa", bench: "  num_examples: 2\n", listed: "gpqa/gpqa_e2e.json", checks: []check{
			{"results/gpqa/gpqa_e2e.json", "--eval-name gpqa --num-examples 2 --max-tokens 32768 --repeat 8 --num-threads 128"}}},
		{typ: "longbenchv2", bench: "  num_examples: 4\n  categories: [a, b]\n", listed: "longbenchv2/longbench_v2_e2e.json", checks: []check{
			{"results/longbenchv2/longbench_v2_e2e.json", "--model nvidia/DeepSeek-R1-0528-NVFP4-v2 --eval-name longbench_v2 --max-tokens 16384 --max-context-length 128000 --num-threads 16 --num-examples 4 --categories a,b"}}},
		{typ: "gsm8k", bench: "  num_examples: 5\n", listed: "gsm8k/gsm8k_e2e.json", checks: []check{
			{"results/gsm8k/gsm8k_e2e.json", "--eval-name gsm8k --num-examples 5 --max-tokens 16384 --num-threads 512 --num-shots 5\""}}},
		{typ: "lm-eval", workspace: true, listed: "lm-eval/results_e2e.json", checks: []check{
			{"results/lm-eval/meta_env.json", `"args": "--framework lm-eval --port `},
			{"results/lm-eval/meta_env.json", `"concurrent": "256"`},
			{"results/lm-eval/samples_e2e.jsonl", "doc_id"},
			{"logs/benchmark.log", "summary stand-in: CONC=256 EP_SIZE=1"}}},
		{typ: "router", bench: "  isl: 100\n  prefix_ratios: [0.5, 1]\n", listed: "router/prefix_ratio_e2e.json", checks: []check{
			{"results/router/prefix_ratio_e2e.json", `"cwd": "/tmp/dynamo/benchmarks/router"`},
			{"results/router/prefix_ratio_e2e.json", "--prefix-ratios 0.5 1.0 --isl 100 --osl 200 --requests 200 --concurrency 20 --output-dir /logs/router-bench"},
			{"logs/benchmark.log", "git stand-in: cloned https://github.com/ai-dynamo/dynamo.git into /tmp/dynamo"}}},
		{typ: "sglang-bench", bench: "  isl: 16\n  osl: 4\n  concurrencies: [1, 2]\n", checks: []check{
			{"logs/benchmark.log", "python3 stand-in: -m sglang.bench_serving --backend sglang-oai --model deepseek-ai/DeepSeek-R1 --host "},
			{"logs/benchmark.log", "--max-concurrency 2 --num-prompts 128 --random-input-len 16 --random-output-len 4 --random-range-ratio 1 --request-rate inf --warmup-requests 0"}}},
		{typ: "trace-replay", bench: "  trace_file: /standin/trace.jsonl\n  concurrencies: [1, 2]\n  aiperf_args:\n    benchmark-duration: 30\n", checks: []check{
			{"results/trace-replay/*_trace_c2_*/profile_export_aiperf.json", "--input-file /standin/trace.jsonl --custom-dataset-type mooncake_trace"},
			{"results/trace-replay/*_trace_c2_*/profile_export_aiperf.json", "--concurrency 2 --random-seed 42 --ui simple"},
			{"results/trace-replay/*_trace_c1_*/profile_export_aiperf.json", "--benchmark-duration 30"},
			{"results/trace-replay/warmup/profile_export_aiperf.json", "--concurrency 1 --request-count 5"},
			{"logs/benchmark.log", "uv stand-in: venv /tmp/aiperf-"}}},
		{typ: "mooncake-router", bench: "    TRACE_DIR: /standin\n", checks: []check{
			{"results/mooncake-router/*_conversation_*/profile_export_aiperf.json", "--input-file /standin/conversation_trace.jsonl --custom-dataset-type mooncake_trace --fixed-schedule"},
			{"logs/benchmark-rollup.json", `"benchmark_type": "mooncake-router"`}}},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			name := uniqueName("e2e-srtctl-" + tc.typ)
			standin := filepath.Join(c.Root, "standins", name)
			copyTree(t, filepath.Join(c.repo, "testdata", "srtctl-bench"), standin)
			t.Cleanup(func() {
				if !t.Failed() {
					_ = os.RemoveAll(standin)
				}
			})
			env := "  env:\n    PATH: /standin:/usr/local/bin:/bin\n"
			bench := tc.bench
			if strings.HasPrefix(bench, "    ") { // more benchmark.env
				env, bench = env+bench, ""
			}
			rec := mockRecipe{Name: name}.String()
			rec = rec[:strings.Index(rec, "benchmark:\n")] + "container_mounts:\n  " + standin + ": /standin\nbenchmark:\n  type: " + tc.typ + "\n" + bench + env
			r := realContainerRun(t, c, img.Ref, runOpts{name: name, recipe: rec})
			if tc.workspace {
				r.editProfile("[paths]\n", "[paths]\nworkspace = \""+filepath.Join(standin, "workspace")+"\"\n")
			}
			r.start()
			if code := r.wait(10 * time.Minute); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.output())
			}
			r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
			for _, ck := range tc.checks {
				files, _ := filepath.Glob(filepath.Join(r.runDir(), filepath.FromSlash(ck.glob)))
				if len(files) != 1 {
					t.Errorf("%s: %d files, want one\n%s", ck.glob, len(files), r.output())
					continue
				}
				b, err := os.ReadFile(files[0])
				if err != nil || !strings.Contains(string(b), ck.want) {
					t.Errorf("%s (%v) lacks %q:\n%s", ck.glob, err, ck.want, b)
				}
			}
			if tc.listed != "" {
				listed := false
				for _, a := range stagedManifest(t, r.stage).Artifacts {
					listed = listed || a.Path == tc.listed
				}
				if !listed {
					t.Errorf("the staged manifest does not list %s\n%s", tc.listed, r.output())
				}
			}
			r.removeOnPass()
		})
	}
}

// copyTree copies the stand-ins (modes kept) where the nodes see them, open
// to the cluster's user.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			if err := os.MkdirAll(to, 0o777); err != nil {
				return err
			}
			return os.Chmod(to, 0o777) // the workspace is written by the job's user
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm()|0o444)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStageModelInContainer: model.stage_dir stages the model on every
// worker node before the workers start, through `slurmbench stage-model`
// in the real container: each node's step copies the model's files (a
// linked file as a real file) and verifies them, and the run goes on.
func TestStageModelInContainer(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-stage")
	model := filepath.Join(c.Root, "models", name, "mock-model")
	local := filepath.Join(c.Root, "local-"+name)
	files := map[string]string{"config.json": `{"layers": 2}`, "weights/part-0.bin": strings.Repeat("w", 70000)}
	for rel, content := range files {
		p := filepath.Join(model, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Relative, as a Hugging Face cache links its files: it resolves in
	// the container too.
	if err := os.Symlink("config.json", filepath.Join(model, "tokenizer_config.json")); err != nil {
		t.Fatal(err)
	}
	files["tokenizer_config.json"] = files["config.json"]
	if err := os.MkdirAll(local, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(local, 0o777)
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(local)
			_ = os.RemoveAll(filepath.Dir(model))
		}
	})
	img := pushMockImage(t, c, name)
	rec := strings.Replace(mockRecipe{Name: name}.String(), "  precision: fp8\n", "  precision: fp8\n  stage_dir: "+filepath.Join(local, "models")+"\n", 1)
	r := realContainerRun(t, c, img.Ref, runOpts{name: name, recipe: rec})
	r.editProfile("mock = \""+filepath.Join(c.Root, "models", "mock")+"\"", "mock = \""+model+"\"")
	r.start()
	if code := r.wait(10 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	logs, _ := filepath.Glob(filepath.Join(r.runDir(), "logs", "stage_model_*"))
	if len(logs) != 3 {
		t.Errorf("staging logs %v, want one per worker node (3)", logs)
	}
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if !strings.Contains(string(b), "[stage:") || (!strings.Contains(string(b), "manifest verified") && !strings.Contains(string(b), "manifest hit")) {
			t.Errorf("%s:\n%s", l, b)
		}
	}
	staged := filepath.Join(local, "models", "mock-model")
	for rel, content := range files {
		p := filepath.Join(staged, filepath.FromSlash(rel))
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: %v, want a regular file", p, err)
			continue
		}
		if b, _ := os.ReadFile(p); string(b) != content {
			t.Errorf("%s holds %d bytes, want the model's %d", p, len(b), len(content))
		}
	}
	removeBundle(bundleOf(t, filepath.Join(c.Root, "squash"), img.Ref))
	r.removeOnPass()
}
