package runners

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// MaxBytes bounds a runners.yaml read (InferenceX's is ~30 KB).
const MaxBytes = readlimit.Default

// Options adjust a read.
type Options struct {
	// Home is what '~' in a host path expands to; "" takes $HOME.
	Home string
}

// Load reads and validates the runners.yaml at path. Errors are
// *yamltree.Error (file, line, field) or the file's read error.
func Load(ctx context.Context, path string, opt Options) (*Inventory, error) {
	data, err := readlimit.ReadFileContext(ctx, path, MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("runners: %w", err)
	}
	return Parse(path, data, opt)
}

// Parse validates data, the runners.yaml named path.
func Parse(path string, data []byte, opt Options) (*Inventory, error) {
	if opt.Home == "" {
		opt.Home = os.Getenv("HOME")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &yamltree.Error{File: path, Msg: "empty runners.yaml: it needs labels: and clusters:"}
		}
		return nil, &yamltree.Error{File: path, Line: yamlLine(err), Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		return nil, &yamltree.Error{File: path, Line: second.Line, Msg: "a second YAML document: runners.yaml is one document (InferenceX's safe_load refuses more)"}
	}
	d := &decoder{file: path, home: opt.Home}
	inv := &Inventory{Path: path, Clusters: map[string]*Cluster{}}
	doc := root.Content[0]
	set := d.record(doc, "", []key{
		{alias: "labels", set: func(v *yaml.Node, f string) { inv.Line = lineOf(doc, "labels"); d.readLabels(inv, v, f) }},
		{alias: "clusters", set: func(v *yaml.Node, f string) { d.readClusters(inv, v, f) }},
	})
	d.require(doc, "", set, "labels", "clusters")
	if d.err != nil {
		return nil, d.err
	}
	if err := inv.check(); err != nil {
		return nil, err
	}
	return inv, nil
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

func yamlLine(err error) int {
	var line int
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		_, _ = fmt.Sscan(m[1], &line)
	}
	return line
}

func lineOf(m *yaml.Node, k string) int {
	if kn, _ := yamltree.KeyValue(m, k); kn != nil {
		return kn.Line
	}
	return m.Line
}

func (d *decoder) readLabels(inv *Inventory, n *yaml.Node, field string) {
	d.pairs(n, field, func(k, v *yaml.Node) {
		f := yamltree.JoinField(field, k.Value)
		l := Label{Name: k.Value, Line: k.Line}
		l.Runners = d.strings(v, f, func(c *yaml.Node, _, _ string) { l.Lines = append(l.Lines, c.Line) })
		if d.ok() && len(l.Runners) == 0 {
			d.failf(k, f, "must list at least one runner")
		}
		inv.Labels = append(inv.Labels, l)
	})
}

func (d *decoder) readClusters(inv *Inventory, n *yaml.Node, field string) {
	d.pairs(n, field, func(k, v *yaml.Node) {
		c := d.readCluster(k, v, yamltree.JoinField(field, k.Value))
		inv.Clusters[k.Value] = c
		inv.Order = append(inv.Order, k.Value)
	})
}

// null reports whether v is YAML null: an Optional field left None.
func null(v *yaml.Node) bool {
	v = yamltree.DeAlias(v)
	return v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!null"
}

func (d *decoder) readCluster(k, n *yaml.Node, field string) *Cluster {
	c := &Cluster{ID: k.Value, Line: k.Line, Lines: map[string]int{field: k.Line}}
	d.lines = c.Lines
	defer func() { d.lines = nil }()
	var envNode, slurmNode *yaml.Node
	set := d.record(n, field, []key{
		{alias: "gpus-per-node", name: "gpus_per_node", set: func(v *yaml.Node, f string) { c.GPUsPerNode = d.positive(v, f) }},
		{alias: "available-cpu-dram-mib", name: "available_cpu_dram_mib", set: func(v *yaml.Node, f string) {
			if !null(v) {
				c.AvailableCPUDRAMMiB = d.positive(v, f)
			}
		}},
		{alias: "arch", set: func(v *yaml.Node, f string) { c.Arch = Arch(d.literal(v, f, string(X86_64), string(AArch64))) }},
		{alias: "env", set: func(v *yaml.Node, f string) { envNode = v; c.Env = d.strMap(v, f) }},
		{alias: "models", set: func(v *yaml.Node, f string) { c.Models = d.readModels(v, f) }},
		{alias: "scheduler", set: func(v *yaml.Node, f string) { c.Scheduler = d.str(v, f) }},
		{alias: "slurm", set: func(v *yaml.Node, f string) { slurmNode = v; c.Slurm = d.readSlurm(v, f) }},
		{alias: "scheduler_settings", set: func(v *yaml.Node, f string) {
			d.failf(v, f, "not a key of the record: the scheduler's settings go under the key the scheduler names")
		}},
	})
	d.require(n, field, set, "gpus-per-node", "arch", "scheduler")
	if !d.ok() {
		return c
	}
	// Cluster._scheduler_record: the scheduler must be registered and
	// its own record present; records of other schedulers are refused
	// (only slurm is registered, so only a missing record can happen).
	if c.Scheduler != "slurm" {
		d.failRecord(n, field+".scheduler", "scheduler must be one of [slurm], got %q", c.Scheduler)
		return c
	}
	if slurmNode == nil {
		d.failRecord(n, field, "scheduler %q needs its %q record", c.Scheduler, c.Scheduler)
		return c
	}
	// Env values may take the srt-slurm profile's fabric, resolved at
	// load; then no value may hold a comma (srun --export splits on it).
	var fabric Fabric
	if c.Slurm.SrtSlurm != nil {
		fabric = c.Slurm.SrtSlurm.Fabric
	}
	var commas []string
	for _, name := range sortedKeys(c.Env) {
		v, err := fabric.Resolve(c.Env[name])
		if err != nil {
			k, _ := yamltree.KeyValue(yamltree.DeAlias(envNode), name)
			d.failf(k, field+".env."+name, "%v", err)
			return c
		}
		c.Env[name] = v
		if strings.Contains(v, ",") {
			commas = append(commas, name)
		}
	}
	if len(commas) > 0 {
		d.failRecord(envNode, field+".env", "env values cannot contain ',' (srun --export splits on it): %s", strings.Join(commas, ", "))
		return c
	}
	// Cluster._known_references: model entries and the download root
	// name declared volumes; the download root is a shared one.
	for _, key := range c.Models.EntryOrder {
		e := c.Models.Entries[key]
		if _, ok := c.Slurm.Volumes[e.Root]; !ok {
			d.failf(n, fmt.Sprintf("%s.models.entries.%s.root", field, key), "model entry %q uses unknown volume %q (volumes: %s)", key, e.Root, strings.Join(sortedKeys(c.Slurm.Volumes), ", "))
			d.err.Line = c.LineOf("models.entries." + key)
			return c
		}
	}
	if r := c.Models.DownloadRoot; r != "" {
		vol, ok := c.Slurm.Volumes[r]
		switch {
		case !ok:
			d.failf(n, field+".models.download-root", "download-root names unknown volume %q", r)
		case vol.Visibility != Shared:
			d.failf(n, field+".models.download-root", "download-root %q must be a shared volume", r)
		}
		if d.err != nil {
			d.err.Line = c.LineOf("models.download-root")
		}
	}
	return c
}

func (d *decoder) readModels(n *yaml.Node, field string) Models {
	m := Models{Entries: map[string]ModelEntry{}}
	d.record(n, field, []key{
		{alias: "entries", set: func(v *yaml.Node, f string) {
			d.pairs(v, f, func(k, ev *yaml.Node) {
				ef := yamltree.JoinField(f, k.Value)
				d.lines[ef] = k.Line
				var e ModelEntry
				set := d.record(ev, ef, []key{
					{alias: "root", set: func(v *yaml.Node, f string) { e.Root = d.nonEmpty(v, f) }},
					{alias: "dir", set: func(v *yaml.Node, f string) {
						e.Dir = d.nonEmpty(v, f)
						if d.ok() && !relativeInside(e.Dir) {
							d.failf(v, f, "model dir must be relative to its root: %q", e.Dir)
						}
					}},
				})
				d.require(ev, ef, set, "root", "dir")
				m.Entries[k.Value] = e
				m.EntryOrder = append(m.EntryOrder, k.Value)
			})
		}},
		{alias: "download-root", name: "download_root", set: func(v *yaml.Node, f string) {
			if !null(v) {
				m.DownloadRoot = d.nonEmpty(v, f)
			}
		}},
	})
	return m
}

// LineOf is the line of field (dotted, below the record: "slurm.partition")
// in the file, or the record's line when the field was not set.
func (c *Cluster) LineOf(field string) int {
	if l, ok := c.Lines["clusters."+c.ID+"."+field]; ok {
		return l
	}
	return c.Line
}
