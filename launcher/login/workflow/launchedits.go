package workflow

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// What InferenceX's launcher does to a bound recipe after binding and
// before it submits (launch-time edits: `infx generate` leaves them out,
// RECIPES.md § Recipe fragments, and so does the recipe fingerprint).
// Read from infx/launch/drivers/srt/recipe.py@07db303e (prepare_recipe:
// raise_health_attempts, add_dist_timeout; multi-node jobs only) and
// drivers/srt/config.py@eacb6075 (render: default_health_check
// {max_attempts: 720, interval_seconds: 10} in every job's srtslurm.yaml,
// which srtctl applies where the recipe leaves a health_check key unset).
const (
	HealthAttemptsFloor   = 720
	DefaultHealthInterval = 10
)

// LaunchEdits are the edits one launch makes.
type LaunchEdits struct {
	MultiNode bool
	// DistTimeoutS is the record's srt-slurm.dist-timeout-s (0: unset).
	DistTimeoutS int
}

// Apply edits doc, the bound recipe (one variant, a mapping):
//
//   - every job: a recipe without a top-level health_check gets the
//     cluster default, max_attempts 720 and interval_seconds 10, whole;
//   - a multi-node job: every max_attempts inside any health_check block,
//     at any depth, is raised to at least 720 (raise_health_attempts edits
//     the text of each health_check block the same way);
//   - a multi-node job on a record with dist-timeout-s: each role whose
//     args set watchdog-timeout gets dist-timeout right after it
//     (add_dist_timeout inserts the line after each role's
//     "      watchdog-timeout:" line; a value already there is replaced
//     here, where their text edit would repeat the key).
func (e LaunchEdits) Apply(doc *yaml.Node) {
	if doc == nil || doc.Kind != yaml.MappingNode {
		return
	}
	if e.MultiNode {
		raiseHealth(doc, false)
	}
	// The cluster default is a whole block for a recipe that has none
	// (srtctl's core/config.py@020fbc6c applies default_health_check only
	// where the recipe sets no health_check): a block the recipe has keeps
	// the schema's defaults for what it leaves out (max_attempts 180).
	if hc := yamltree.Get(doc, "health_check"); hc == nil || hc.Kind == yaml.ScalarNode && hc.Tag == "!!null" {
		hc = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		setKey(hc, "max_attempts", intNode(HealthAttemptsFloor))
		setKey(hc, "interval_seconds", intNode(DefaultHealthInterval))
		setKey(doc, "health_check", hc)
	}
	if e.MultiNode && e.DistTimeoutS > 0 {
		roles := yamltree.Get(doc, "roles")
		if roles == nil || roles.Kind != yaml.MappingNode {
			return
		}
		for i := 1; i < len(roles.Content); i += 2 {
			args := yamltree.Get(roles.Content[i], "args")
			if args == nil || args.Kind != yaml.MappingNode || yamltree.Get(args, "watchdog-timeout") == nil {
				continue
			}
			yamltree.Delete(args, "dist-timeout")
			at := yamltree.KeyIndex(args, "watchdog-timeout") + 2
			args.Content = append(args.Content[:at], append([]*yaml.Node{yamltree.StrKey("dist-timeout"), intNode(e.DistTimeoutS)}, args.Content[at:]...)...)
		}
	}
}

// raiseHealth raises every max_attempts below a health_check key (in is
// true once inside one) to the floor.
func raiseHealth(n *yaml.Node, in bool) {
	switch n = yamltree.DeAlias(n); {
	case n == nil:
	case n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if in && k == "max_attempts" && v.Kind == yaml.ScalarNode {
				if a, err := strconv.Atoi(v.Value); err == nil && a < HealthAttemptsFloor {
					n.Content[i+1] = intNode(HealthAttemptsFloor)
				}
				continue
			}
			raiseHealth(v, in || k == "health_check")
		}
	case n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			raiseHealth(c, in)
		}
	}
}

func intNode(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

// setKey sets key in mapping m, replacing its value or appending it.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	if i := yamltree.KeyIndex(m, key); i >= 0 {
		m.Content[i+1] = v
		return
	}
	m.Content = append(m.Content, yamltree.StrKey(key), v)
}
