package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoRecipeSchema2: the demo's recipe, examples/mock-2p1d.yaml (schema
// 2), runs end to end on the test cluster as `make demo` runs it — two
// SA-Bench points, the gsm8k eval against a 95 % answer key, the power
// package from the profile's mock exporters — named uniquely and with the
// answer key where this cluster's nodes see it.
func TestDemoRecipeSchema2(t *testing.T) {
	c := setup(t)
	name := uniqueName("e2e-demo-v2")
	key := filepath.Join(c.Root, "workspaces", name+"-answer-key.jsonl")
	if err := os.MkdirAll(filepath.Dir(key), 0o777); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(c.Binary, "mock-answer-key", "--accuracy", "0.95", "--out", key).CombinedOutput(); err != nil {
		t.Fatalf("mock-answer-key: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = os.Remove(key) })
	b, err := os.ReadFile(filepath.Join(c.repo, "examples", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rec := string(b)
	if !strings.HasPrefix(rec, "#") || !strings.Contains(rec, "\nschema: 2\n") {
		t.Fatalf("examples/mock-2p1d.yaml is not a schema-2 recipe:\n%s", rec)
	}
	rec = strings.Replace(rec, "\nname: mock-2p1d\n", "\nname: "+name+"\n", 1)
	rec = strings.Replace(rec, "/model/gsm8k-answer-key.jsonl", key, 1)
	r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-eval", "true", "--eval-conc", "64"}})
	appendProfile(t, r.profile, "\n[telemetry]\nmock_watts = 350\n")
	r.start()
	if code := r.wait(8 * time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	if got := stagedResults(t, r.stage); len(got) != 2 {
		t.Errorf("staged %v, want c8 and c32", got)
	}
	out := r.stdout.String()
	for _, re := range []string{`gsm8k: strict-match 0\.9[0-9]+`, `power c32: [0-9.]+ J per output token`, name + `: succeeded`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("summary lacks /%s/:\n%s", re, out)
		}
	}
	t.Logf("the schema-2 demo recipe ran in %s", r.ended.Sub(r.started).Round(time.Second))
	r.removeOnPass()
}
