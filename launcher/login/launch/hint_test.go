package launch

import (
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestRunInHint: up's run --in hint repeats the recipe's edits, quoted.
func TestRunInHint(t *testing.T) {
	pl := &plan.Plan{Recipe: plan.Source{Path: "/r/a.yaml", Overrides: []string{"--set benchmark.concurrencies=[4, 16]", "--unset health_check"}}}
	got := runInHint(UpInfo{JobID: "12", Profile: "/p.toml"}, pl)
	if want := `slurmbench run --in 12 -p /p.toml -r /r/a.yaml --set "benchmark.concurrencies=[4, 16]" --unset health_check`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
