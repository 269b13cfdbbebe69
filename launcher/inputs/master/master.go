// Package master reads InferenceX's master config (configs/nvidia-master.yaml):
// one benchmark point looked up by key (config key → image, model, topology,
// concurrency lists and the recipe each point runs), and the whole matrix
// expanded as InferenceX's generator does. Two layouts: September's, whose
// rows name recipes with CONFIG_FILE=... (matrix.go), and today's, whose
// entries name them with srt-recipe-dir and srt-recipe, validated strictly
// as InferenceX validates them (validate.go) and expanded into benchmark
// rows and eval jobs (today.go). Package fingerprint, below, hashes a row
// and its composed recipe as InferenceX's planner does.
package master

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Entry is one config key. Only the fields a launch needs are decoded; the
// master config carries many more for other tools, which are not ours to
// validate.
type Entry struct {
	Image       string                `yaml:"image"`
	Model       string                `yaml:"model"`
	ModelPrefix string                `yaml:"model-prefix"`
	Runner      string                `yaml:"runner"`
	Precision   string                `yaml:"precision"`
	Framework   string                `yaml:"framework"`
	Multinode   bool                  `yaml:"multinode"`
	Disagg      bool                  `yaml:"disagg"`
	Scenarios   map[string][]Scenario `yaml:"scenarios"`
}

// Scenario is one ISL/OSL block with its search space.
type Scenario struct {
	ISL         int           `yaml:"isl"`
	OSL         int           `yaml:"osl"`
	SearchSpace []SearchPoint `yaml:"search-space"`
}

// SearchPoint is one topology point.
type SearchPoint struct {
	SpecDecoding string `yaml:"spec-decoding"`
	ConcList     []int  `yaml:"conc-list"`
	Prefill      Side   `yaml:"prefill"`
	Decode       Side   `yaml:"decode"`
}

// Side is the prefill or decode half of a point.
type Side struct {
	NumWorker          int      `yaml:"num-worker"`
	TP                 int      `yaml:"tp"`
	EP                 int      `yaml:"ep"`
	DPAttn             bool     `yaml:"dp-attn"`
	AdditionalSettings []string `yaml:"additional-settings"`
}

// Point is the resolved lookup result.
type ConfigPoint struct {
	Key          string
	Index        int // within the key's fixed-seq-len points
	Image        string
	Model        string
	ModelPrefix  string
	Precision    string
	Framework    string
	Runner       string
	ISL, OSL     int
	Concurrency  []int
	SpecDecoding string
	// ConfigFile is CONFIG_FILE as written ("recipes/...yaml"); Selector is
	// its ":zip_override_x[i]" suffix, if any.
	ConfigFile string
	Selector   string
	// Settings are the additional-settings KEY=VALUE pairs of both sides.
	Settings map[string]string
}

// Load reads the master config.
func Load(path string) (map[string]Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading master config: %w", err)
	}
	var m map[string]Entry
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("master config %s: %w", path, err)
	}
	return m, nil
}

// Lookup returns point index (0-based over the key's fixed-seq-len search
// space, in file order) of key. index < 0 means "the only one": a key with
// several points is then an error that lists them.
func Lookup(m map[string]Entry, key string, index int) (ConfigPoint, error) {
	e, ok := m[key]
	if !ok {
		return ConfigPoint{}, fmt.Errorf("master config: no key %q%s", key, suggest(m, key))
	}
	var all []ConfigPoint
	for _, sc := range e.Scenarios["fixed-seq-len"] {
		for _, sp := range sc.SearchSpace {
			pt := ConfigPoint{
				Key: key, Index: len(all), Image: e.Image, Model: e.Model, ModelPrefix: e.ModelPrefix,
				Precision: e.Precision, Framework: e.Framework, Runner: e.Runner,
				ISL: sc.ISL, OSL: sc.OSL, Concurrency: sp.ConcList, SpecDecoding: sp.SpecDecoding,
				Settings: map[string]string{},
			}
			for _, side := range []Side{sp.Prefill, sp.Decode} {
				for _, kv := range side.AdditionalSettings {
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						return ConfigPoint{}, fmt.Errorf("master config %s point %d: additional-settings %q is not KEY=VALUE", key, len(all), kv)
					}
					pt.Settings[k] = v
				}
			}
			if cf := pt.Settings["CONFIG_FILE"]; cf != "" {
				pt.ConfigFile, pt.Selector, _ = strings.Cut(cf, ":")
			}
			all = append(all, pt)
		}
	}
	if len(all) == 0 {
		return ConfigPoint{}, fmt.Errorf("master config %s: no fixed-seq-len points", key)
	}
	if index < 0 {
		if len(all) == 1 {
			return all[0], nil
		}
		var b strings.Builder
		for _, pt := range all {
			fmt.Fprintf(&b, "; %d: isl %d osl %d conc %v %s", pt.Index, pt.ISL, pt.OSL, pt.Concurrency, pt.ConfigFile)
		}
		return ConfigPoint{}, fmt.Errorf("master config %s has %d points, pick one with --point N%s", key, len(all), b.String())
	}
	if index >= len(all) {
		return ConfigPoint{}, fmt.Errorf("master config %s: --point %d out of range 0..%d", key, index, len(all)-1)
	}
	return all[index], nil
}

// RecipePath resolves CONFIG_FILE ("recipes/<x>") against a recipes root
// (the directory that "recipes/" stands for). The result must stay under it.
func RecipePath(root, configFile string) (string, error) {
	rel, ok := strings.CutPrefix(configFile, "recipes/")
	if !ok {
		return "", fmt.Errorf("CONFIG_FILE %q does not start with recipes/", configFile)
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if r, err := filepath.Rel(root, p); err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("CONFIG_FILE %q escapes the recipes root %s", configFile, root)
	}
	return p, nil
}

func suggest(m map[string]Entry, key string) string {
	var close []string
	for k := range m {
		if strings.Contains(k, key) || strings.Contains(key, k) {
			close = append(close, k)
		}
	}
	sort.Strings(close)
	if len(close) == 0 {
		return ""
	}
	if len(close) > 5 {
		close = close[:5]
	}
	return " (did you mean " + strings.Join(close, ", ") + "?)"
}
