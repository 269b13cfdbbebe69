package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
)

// TestSrtctlBenchmarkInContainer: one of srtctl's other benchmark types
// (mmlu) runs through `slurmbench run` with the real container runtime:
// `slurmbench srtctl-bench mmlu` starts in the engine image from the run
// directory's mount, runs the tool (a stand-in python3 mounted into the
// image, testdata/srtctl-bench/python3: the mock image has no Python) with
// srtctl's run_eval arguments, copies its /tmp result into /logs/accuracy,
// and the run collects it into results/mmlu and lists it in the manifest.
func TestSrtctlBenchmarkInContainer(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-srtctl-mmlu")
	standin := filepath.Join(c.Root, "standins", name)
	src, err := os.ReadFile(filepath.Join(c.repo, "testdata", "srtctl-bench", "python3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(standin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(standin, "python3"), src, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(standin)
		}
	})
	rec := mockRecipe{Name: name}.String()
	rec = rec[:strings.Index(rec, "benchmark:\n")] + `container_mounts:
  ` + standin + `: /standin
benchmark:
  type: mmlu
  num_examples: 3
  repeat: 1
  env:
    PATH: /standin:/usr/local/bin:/bin
`
	img := pushMockImage(t, c, name)
	r := realContainerRun(t, c, "pyxis", img.Ref, runOpts{name: name, recipe: rec})
	r.start()
	if code := r.wait(10 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	got, err := os.ReadFile(filepath.Join(r.runDir(), "results", "mmlu", "mmlu_e2e.json"))
	if err != nil {
		t.Fatalf("mmlu result not collected: %v\n%s", err, r.output())
	}
	for _, want := range []string{"-m sglang.test.run_eval --base-url http://", "--model deepseek-ai/DeepSeek-R1 --eval-name mmlu --num-examples 3 --max-tokens 2048 --repeat 1 --num-threads 512"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the tool ran with %s, want %q in it", got, want)
		}
	}
	listed := false
	for _, a := range stagedManifest(t, r.stage).Artifacts {
		listed = listed || a.Path == "mmlu/mmlu_e2e.json"
	}
	if !listed {
		t.Errorf("the staged manifest does not list mmlu/mmlu_e2e.json\n%s", r.output())
	}
	log, _ := os.ReadFile(filepath.Join(r.runDir(), "logs", "benchmark.log"))
	if !strings.Contains(string(log), "Results saved to: /logs/accuracy/mmlu_e2e.json") {
		t.Errorf("benchmark.log:\n%s", log)
	}
	if ref, err := enroot.ParseRef(img.Ref); err == nil {
		sqsh := filepath.Join(c.Root, "squash", ref.SquashName())
		_ = os.Remove(sqsh)
		_ = os.Remove(sqsh + enroot.ManifestSuffix)
	}
	r.removeOnPass()
}
