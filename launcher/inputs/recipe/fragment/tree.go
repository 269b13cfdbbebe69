package fragment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamldoc"
)

// LoadBlocks reads the lane's shared block under root,
// InferenceX's tree (inferencex-e2e/), and for a power row the telemetry
// block, its exporter on port (0: no port, as the cluster-free recipe a
// fingerprint hashes has it).
func LoadBlocks(ctx context.Context, root string, lane Lane, power bool, port int) (Blocks, error) {
	b := Blocks{SharedFile: filepath.Join(root, lane.SharedBlock())}
	var err error
	if b.Shared, err = LoadBlock(ctx, b.SharedFile); err != nil {
		return b, blockError(root, lane.SharedBlock(), fmt.Sprintf("the %s lane's shared block", lane), err)
	}
	if !power {
		return b, nil
	}
	b.TelemetryFile, b.PowerPort = filepath.Join(root, TelemetryBlock), port
	if b.Telemetry, err = LoadBlock(ctx, b.TelemetryFile); err != nil {
		return b, blockError(root, TelemetryBlock, "the telemetry block", err)
	}
	return b, nil
}

// MissingBlockError is a shared (or telemetry) block that is not in the
// tree: missing input, not a refusal of the fragment that needs it. A tree
// that lacks the block composes none of its lane's points (workload.py
// compose_recipe reads the block before the fragment).
type MissingBlockError struct {
	Root  string // InferenceX's tree
	Block string // the block, relative to Root (configs/srt-recipes/…)
	What  string // "the agentic multi-node lane's shared block"
	Err   error
}

func (e *MissingBlockError) Error() string {
	return fmt.Sprintf("%s: %s is not in this tree (%s)", e.What, e.Block, e.Root)
}

func (e *MissingBlockError) Unwrap() error { return e.Err }

func blockError(root, block, what string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &MissingBlockError{Root: root, Block: block, What: what, Err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// LaneOf is the lane a recipe's place in InferenceX's tree says
// (RECIPES.md § Directory and filename convention):
// benchmarks/{single_node,multi_node}/srt-slurm-recipes/<model-prefix>/<engine>/<gpu>-<precision>/<workload>/…,
// the workload agentx for AgentX. ok is false outside that layout.
func LaneOf(path string) (lane Lane, ok bool) {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i+1] != "srt-slurm-recipes" || (parts[i] != "single_node" && parts[i] != "multi_node") {
			continue
		}
		lane.MultiNode = parts[i] == "multi_node"
		rest := parts[i+2:]
		lane.Agentic = len(rest) > 4 && rest[3] == "agentx" || len(rest) == 4 && strings.HasPrefix(rest[3], "agentic")
		return lane, true
	}
	return lane, false
}

// RootOf is InferenceX's tree (the directory holding
// configs/srt-recipes/) a recipe file is under, or "".
func RootOf(path string) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if st, err := os.Stat(filepath.Join(dir, "configs", "srt-recipes")); err == nil && st.IsDir() {
			return dir
		}
		if parent := filepath.Dir(dir); parent == dir {
			return ""
		}
	}
}

// maxBlockBytes bounds a shared block or fragment read, as a recipe's.
const maxBlockBytes = readlimit.Default

// LoadBlock reads a YAML mapping (a shared block, or a fragment before
// composing) with its keys set twice refused.
func LoadBlock(ctx context.Context, path string) (*yaml.Node, error) {
	data, err := readlimit.ReadFileContext(ctx, path, maxBlockBytes)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	doc, err := yamldoc.Parse(path, data)
	if err != nil {
		return nil, err
	}
	if _, err := yamldoc.ResolveDuplicates(path, doc, false); err != nil {
		return nil, err
	}
	return doc, nil
}

// Marshal writes a bound recipe as yaml.safe_dump(sort_keys=False) would
// lay it out: block style, no comments, key order kept; strings that would
// read as another type stay quoted.
func Marshal(doc *yaml.Node) ([]byte, error) {
	var plain func(*yaml.Node) *yaml.Node
	plain = func(n *yaml.Node) *yaml.Node {
		c := *n
		c.Style &^= yaml.FlowStyle | yaml.LiteralStyle | yaml.FoldedStyle
		if c.Kind == yaml.ScalarNode && c.Tag == "!!str" {
			c.Style &^= yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle
		}
		c.HeadComment, c.LineComment, c.FootComment = "", "", ""
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = plain(x)
		}
		return &c
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(plain(doc)); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}
