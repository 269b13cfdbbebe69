package fragment

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// ConfigsDirs are the directories of InferenceX's tree whose files its jobs
// see at /configs, in the order its launcher stages them into the srt-slurm
// checkout's configs/: the checkout's own (a clone of the utils/srt-slurm
// submodule), then the recipe mirror's copied over it
// (inferencex-e2e/infx/launch/drivers/srt/checkout.py@1634dcd8
// prepare_checkout). The binder looks for a recipe's setup_script in the
// same two and their patches/ (workload.py@f57e21f1 SETUP_SCRIPT_DIRS,
// check_setup_script).
var ConfigsDirs = []string{"utils/srt-slurm/configs", "benchmarks/multi_node/srt-slurm-recipes/configs"}

// MissingSetupScriptError is a bound recipe whose setup_script is in none
// of the tree's ConfigsDirs or their patches/: srtctl would only warn and
// start every worker without it, InferenceX's launch and generate refuse
// the recipe.
type MissingSetupScriptError struct {
	Root   string // InferenceX's tree
	Script string // the setup_script value
	Line   int    // its line in the bound recipe
}

func (e *MissingSetupScriptError) Error() string {
	return fmt.Sprintf("setup_script %s is in none of %s or their patches/ (under %s)", e.Script, strings.Join(ConfigsDirs, ", "), e.Root)
}

// CheckSetupScript refuses a bound recipe (doc) whose setup_script is in
// none of root's ConfigsDirs or their patches/ (MissingSetupScriptError);
// a recipe without one passes.
func CheckSetupScript(root string, doc *yaml.Node) error {
	if doc != nil && doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	_, v := yamltree.KeyValue(doc, "setup_script")
	if v == nil || v.Kind != yaml.ScalarNode || v.Value == "" {
		return nil
	}
	for _, dir := range ConfigsDirs {
		for _, sub := range []string{"", "patches"} {
			if st, err := os.Stat(filepath.Join(root, dir, sub, v.Value)); err == nil && st.Mode().IsRegular() {
				return nil
			}
		}
	}
	return &MissingSetupScriptError{Root: root, Script: v.Value, Line: v.Line}
}
