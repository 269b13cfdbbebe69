package launch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseEvalConcs(t *testing.T) {
	for _, c := range []struct {
		text    string
		want    []int
		wantErr string
	}{
		{text: "", want: nil},
		{text: "64", want: []int{64}},
		{text: " 8  32\t4 ", want: []int{8, 32, 4}},
		{text: "8 0", wantErr: `"0" is not a positive number`},
		{text: "8 x", wantErr: `"x" is not a positive number`},
		{text: "8 32 8", wantErr: "8 is listed twice"},
	} {
		got, err := ParseEvalConcs(c.text)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "EVAL_CONC") {
				t.Errorf("ParseEvalConcs(%q): %v, want an error naming EVAL_CONC with %q", c.text, err, c.wantErr)
			}
		case err != nil || !slices.Equal(got, c.want):
			t.Errorf("ParseEvalConcs(%q) = %v, %v; want %v", c.text, got, err, c.want)
		}
	}
}

// EVAL_CONFIG_FILE replaces CONFIG_FILE's recipe only in an eval-only run;
// an EVAL_CONC list reaches the plan whole.
func TestEvalConfigFileAndList(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "planner", "testdata", "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prof, err := os.ReadFile(filepath.Join("..", "..", "planner", "testdata", "profiles", "mock4.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "recipes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bench", "evalrecipe"} {
		body := strings.Replace(string(src), "name: mock-2p1d", "name: "+name, 1)
		if err := os.WriteFile(filepath.Join(dir, "recipes", name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	profPath := filepath.Join(dir, "profile.toml")
	body := strings.Replace(string(prof), "[paths]\n", "[paths]\nrecipes_root = \""+filepath.Join(dir, "recipes")+"\"\n", 1)
	if err := os.WriteFile(profPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		evalOnly, runEval, want string
	}{
		{evalOnly: "true", want: "evalrecipe"},
		{evalOnly: "false", runEval: "true", want: "bench"},
	} {
		pl, _, err := Plan(context.Background(), PlanOptions{Profile: profPath, ConfigFile: "recipes/bench.yaml",
			EvalConfigFile: "recipes/evalrecipe.yaml", EvalOnly: c.evalOnly, RunEval: c.runEval, EvalConc: "16 4", Point: -1})
		if err != nil {
			t.Fatalf("EVAL_ONLY=%s: %v", c.evalOnly, err)
		}
		if pl.Name != c.want || !pl.Eval.Enabled || pl.Eval.Concurrency != 16 || !slices.Equal(pl.Eval.Concurrencies, []int{16, 4}) {
			t.Errorf("EVAL_ONLY=%s: recipe %s, eval %+v; want recipe %s and the eval at 16 then 4", c.evalOnly, pl.Name, pl.Eval, c.want)
		}
	}
	// A master point's additional-settings carry EVAL_CONFIG_FILE beside
	// CONFIG_FILE, as InferenceX's master configs pair them.
	master := filepath.Join(dir, "master.yaml")
	if err := os.WriteFile(master, []byte(`k:
  image: mock-image
  model: mock
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 128
      search-space:
      - conc-list: [8]
        prefill:
          num-worker: 2
          tp: 4
          additional-settings:
          - "CONFIG_FILE=recipes/bench.yaml"
          - "EVAL_CONFIG_FILE=recipes/evalrecipe.yaml"
        decode: {num-worker: 1, tp: 4}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for only, want := range map[string]string{"true": "evalrecipe", "false": "bench"} {
		pl, _, err := Plan(context.Background(), PlanOptions{Profile: profPath, Master: master, Key: "k", Point: -1, EvalOnly: only, RunEval: "true"})
		if err != nil {
			t.Fatalf("--master, EVAL_ONLY=%s: %v", only, err)
		}
		if pl.Name != want {
			t.Errorf("--master, EVAL_ONLY=%s: recipe %s, want %s", only, pl.Name, want)
		}
	}
}
