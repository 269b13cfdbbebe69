package profile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// A profile derived from InferenceX's configs/runners.yaml (docs/profile.md,
// "From runners.yaml"): the record of the runner's cluster, as package
// runners reads it, turned into the settings a TOML profile holds, each
// value's origin kept in Sources. A TOML profile may `extends` such a
// record: the record fills the profile, the TOML's own keys win.

// TransportCLI is the Slurm transport of a profile a runners.yaml record
// makes: the record names no slurmrestd (InferenceX's launcher drives the
// Slurm commands), so jobs go through the CLI unless a TOML that extends
// the record gives a rest_url.
const TransportCLI = "cli"

// NginxImage is the frontend image InferenceX stages for a cluster's
// nginx-aliases (infx/launch/drivers/srt/config.py, infx-launch.md §1.5).
const NginxImage = "nginx:1.27.4"

// Source is where one profile value came from: a file, the line in it (0
// when the reader keeps none, as for TOML) and the field there.
type Source struct {
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	Field string `json:"field,omitempty"`
	// Note says how the value was made from the field, when it is not
	// copied as is ("rendered for 4 GPUs", "no REST URL in the record").
	Note string `json:"note,omitempty"`
}

func (s Source) String() string {
	loc := s.File
	if s.Line > 0 {
		loc = fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	if s.Field != "" {
		loc += " " + s.Field
	}
	if s.Note != "" {
		loc += " (" + s.Note + ")"
	}
	return loc
}

// Extends is a TOML profile's `extends` table: the runners.yaml record
// it builds on. Runners is relative to the TOML file ("" takes the
// --runners file); Runner picks the cluster and partition by the label
// rules ("" takes --runner, RUNNER_NAME); Cluster names a cluster id
// instead (its default partition), for an operator who is no runner.
type Extends struct {
	Runners string `toml:"runners"`
	Runner  string `toml:"runner"`
	Cluster string `toml:"cluster"`
}

// DRAM is the host DRAM budget of a cluster's nodes: what '@dram.<name>'
// values of a recipe derive from (with the point's dram-utilization).
type DRAM struct {
	// AvailableMiB is available-cpu-dram-mib; 0 when the record leaves it
	// unmeasured (a point that needs a budget then fails).
	AvailableMiB int `json:"available_mib"`
	GPUsPerNode  int `json:"gpus_per_node"`
}

// RunnersOptions say which record to derive a profile from, and what the
// record cannot say.
type RunnersOptions struct {
	Runners string // the runners.yaml
	Runner  string // a runner name (RUNNER_NAME)
	Cluster string // or a cluster id, when Runner is ""
	// Label is a master entry's runner label, when Runner and Cluster are
	// "": the one cluster it schedules on (a matrix point's).
	Label string
	// RunsDir is paths.runs_dir when given; else the record's
	// shared-run-root or outputs (slurmbench-runs/ under it), else
	// DefaultRunsDir. A TOML that extends the record may set it.
	RunsDir, DefaultRunsDir string
	// Image is the point's main image (IMAGE): the record's
	// container-aliases name it. "" leaves the aliases unset.
	Image string
	// Framework and ModelPrefix choose the squash location of Image.
	Framework, ModelPrefix string
	// PrefillImage is a TileRT point's PREFILL_IMAGE (FrameworkTileRT).
	PrefillImage string
	// Home expands '~' in the record's paths ("" : $HOME).
	Home string
	// AgenticMultiNode: the point is a multi-node AgentX one; its job also
	// mounts the record's agentic volumes (runners.Cluster.AgenticMounts),
	// where the client paths the binder writes point.
	AgenticMultiNode bool
	// SingleNode: the point is single-node (Profile.SingleNode).
	SingleNode bool
	// Lane is the launch as InferenceX's lane rules read it (the
	// workflow's request): where the record's cluster has a row of the
	// lane tables (package lanes), its mounts join the job's and its rule
	// sets the job's time limit. nil: the lane's mounts of a multi-node
	// AgentX point with what Framework and ModelPrefix say, no time rule.
	Lane *srtlanes.Request
}

// laneRequest is the request the lane rules read: Lane, or what the
// options say of the point.
func (o RunnersOptions) laneRequest() srtlanes.Request {
	if o.Lane != nil {
		return *o.Lane
	}
	return srtlanes.Request{Framework: o.Framework, ModelPrefix: o.ModelPrefix, Agentic: o.AgenticMultiNode, MultiNode: o.AgenticMultiNode}
}

// LoadRunners reads the runners.yaml and derives the profile of the
// runner's (or cluster's) record. Errors are the reader's located ones
// (file:line: field: rule).
func LoadRunners(ctx context.Context, o RunnersOptions) (*Profile, error) {
	file, err := Canonical(o.Runners)
	if err != nil {
		return nil, fmt.Errorf("runners.yaml: %w", err)
	}
	inv, err := runners.Load(ctx, file, runners.Options{Home: o.Home})
	if err != nil {
		return nil, err
	}
	res, err := resolveRecord(inv, o.Runner, o.Cluster, o.Label)
	if err != nil {
		return nil, err
	}
	p, err := FromRecord(res, o)
	if err != nil {
		return nil, err
	}
	p.finishRecord()
	if err := p.resolve(filepath.Dir(inv.Path)); err != nil {
		return nil, fmt.Errorf("profile from %s (cluster %s): %w", inv.Path, res.Cluster.ID, err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("profile from %s (cluster %s): %w", inv.Path, res.Cluster.ID, err)
	}
	return p, nil
}

func resolveRecord(inv *runners.Inventory, runner, cluster, label string) (*runners.Resolved, error) {
	if cluster == "" && runner == "" && label != "" {
		ids, err := inv.LabelClusters(label)
		if err != nil {
			return nil, err
		}
		if len(ids) != 1 {
			return nil, fmt.Errorf("%s: runner label %q schedules on %d clusters (%s): name the runner (--runner, RUNNER_NAME) whose record to use", inv.Path, label, len(ids), strings.Join(ids, ", "))
		}
		cluster = ids[0]
	}
	if runner != "" || cluster == "" {
		return inv.Resolve(runner)
	}
	c, ok := inv.Clusters[cluster]
	if !ok {
		return nil, fmt.Errorf("%s: no clusters.%s record (clusters: %s)", inv.Path, cluster, strings.Join(inv.Order, ", "))
	}
	return &runners.Resolved{Inventory: inv, Cluster: c, Partition: c.Slurm.Partition}, nil
}

// FromRecord turns a resolved record into a profile: every value the
// record sets, with Sources naming file, line and field. It does not
// validate (LoadRunners and Load do, after a TOML's overrides).
func FromRecord(res *runners.Resolved, o RunnersOptions) (*Profile, error) {
	c, file := res.Cluster, res.Inventory.Path
	id := c.ID
	p := &Profile{Path: file, Sources: map[string]Source{}, Record: res, SingleNode: o.SingleNode,
		Models: map[string]string{}, Containers: map[string]string{}}
	from := func(key, field, note string) {
		full := "clusters." + id
		if field != "" {
			full += "." + field
		}
		p.Sources[key] = Source{File: file, Line: c.LineOf(field), Field: full, Note: note}
	}
	p.Cluster = id
	from("cluster", "", "")
	if res.LabelLine > 0 {
		p.Sources["cluster"] = Source{File: file, Line: res.LabelLine, Field: "labels." + runners.ClusterLabelPrefix + id, Note: "lists " + res.Runner}
	}
	s := c.Slurm
	p.Slurm.Partition = res.Partition
	from("slurm.partition", "slurm.partition", "")
	if res.PartitionLine > 0 {
		p.Sources["slurm.partition"] = Source{File: file, Line: res.PartitionLine, Field: "labels." + runners.PartitionLabelPrefix + res.Partition, Note: "the runner's partition: label, one of slurm.partitions"}
	}
	if s.Account != "" {
		p.Slurm.Account = s.Account
		from("slurm.account", "slurm.account", "")
	}
	p.Slurm.Exclusive = s.Exclusive
	from("slurm.exclusive", "slurm.exclusive", "")
	if srt := s.SrtSlurm; srt != nil && o.SingleNode {
		// A single-node job asks whole nodes as single-node-exclusive says
		// (default true), not slurm.exclusive (config.py@eacb6075 render).
		p.Slurm.Exclusive = srt.SingleNodeExclusive
		from("slurm.exclusive", "slurm.srt-slurm.single-node-exclusive", "a single-node point's")
	}
	p.Slurm.GPUsPerNode = c.GPUsPerNode
	from("slurm.gpus_per_node", "gpus-per-node", "")
	p.Slurm.ComputeArch = string(c.Arch)
	from("slurm.compute_arch", "arch", "")
	p.Slurm.Transport = TransportCLI
	p.Sources["slurm.transport"] = Source{File: file, Line: c.Line, Field: "clusters." + id, Note: "no REST URL in the record: the Slurm commands"}

	p.Slurm.Directives = map[string]string{}
	if len(s.Exclude) > 0 {
		p.Slurm.Directives["exclude"] = strings.Join(s.Exclude, ",")
		from("slurm.directives.exclude", "slurm.exclude", "")
	}
	srt := s.SrtSlurm
	if srt == nil {
		srt = &runners.SrtSlurm{}
	}
	if s.Gres != "" {
		p.Slurm.GresTemplate = s.Gres
		from("slurm.gres_template", "slurm.gres", "")
		// InferenceX asks GPUs by GRES only where the record turns
		// --gpus-per-node off (config.py@eacb6075 render:
		// default_sbatch_directives.gres when gpus-per-node-directive is
		// false); otherwise srtctl's --gpus-per-node asks them.
		if d := srt.GPUsPerNodeDirective; d != nil && !*d {
			p.Slurm.Directives["gres"] = s.GresFor(c.GPUsPerNode)
			from("slurm.directives.gres", "slurm.gres", "rendered for gpus-per-node "+strconv.Itoa(c.GPUsPerNode)+", as gpus-per-node-directive is false")
		}
	}
	if d := srt.GPUsPerNodeDirective; d != nil {
		p.Slurm.GPUsPerNodeDirective = ptr(*d)
		from("slurm.gpus_per_node_directive", "slurm.srt-slurm.gpus-per-node-directive", "")
	}
	// srtctl asks --segment unless srtslurm.yaml says
	// use_segment_sbatch_directive: false, which InferenceX writes for a
	// single-node job and from segment-directive (config.py@eacb6075).
	switch {
	case o.SingleNode:
		p.Slurm.SegmentDirective = ptr(false)
		from("slurm.segment_directive", "", "a single-node job asks no --segment")
	case srt.SegmentDirective != nil:
		p.Slurm.SegmentDirective = ptr(*srt.SegmentDirective)
		from("slurm.segment_directive", "slurm.srt-slurm.segment-directive", "")
	default:
		p.Slurm.SegmentDirective = ptr(true)
		from("slurm.segment_directive", "slurm.srt-slurm", "no segment-directive: srtctl's default, --segment=<nodes>")
	}
	for k, v := range s.CPUDirectives() {
		p.Slurm.Directives[k] = v
		from("slurm.directives."+k, "slurm."+k, "")
	}
	for i, a := range s.SallocArgs {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		p.Slurm.Directives[name] = value
		from("slurm.directives."+name, fmt.Sprintf("slurm.salloc-args[%d]", i), "")
		p.Sources["slurm.directives."+name] = Source{File: file, Line: c.LineOf("slurm.salloc-args"), Field: fmt.Sprintf("clusters.%s.slurm.salloc-args[%d]", id, i)}
	}
	if len(p.Slurm.Directives) == 0 {
		p.Slurm.Directives = nil
	}
	p.Slurm.NetworkInterface = srt.NetworkInterface
	if srt.NetworkInterface == "" {
		from("slurm.network_interface", "slurm.srt-slurm.network-interface", "empty: each node's hostname looked up in DNS")
	} else {
		from("slurm.network_interface", "slurm.srt-slurm.network-interface", "")
	}
	if len(s.SrunArgs) > 0 {
		p.Slurm.SrunArgs = append([]string(nil), s.SrunArgs...)
		from("slurm.srun_args", "slurm.srun-args", "")
	}

	switch {
	case srt.DefaultTimeLimit != "":
		p.Slurm.TimeLimit = srt.DefaultTimeLimit
		from("slurm.time_limit", "slurm.srt-slurm.default-time-limit", "")
	case o.Lane != nil:
		// A launch InferenceX's rule times (lanes.py srt_time_limit,
		// srtlanes.Table.JobTimeLimit): its lane's limit or long limit,
		// else a single-node point's single-node-time-limit or time bump,
		// else SALLOC_TIME_LIMIT; a cluster without a row times as a row
		// with no limits.
		l, _ := srtlanes.InferenceX.Of(id, *o.Lane)
		if tl, ok := srtlanes.InferenceX.JobTimeLimit(id, l, *o.Lane, srtlanes.Record{SingleNodeTimeLimit: srt.SingleNodeTimeLimit}); ok {
			p.Slurm.TimeLimit = tl.Value
			if field, inRecord := strings.CutPrefix(tl.From, "srt-slurm."); inRecord {
				from("slurm.time_limit", "slurm.srt-slurm."+field, "lanes.py srt_time_limit")
			} else {
				// The environment's or the table's, not the record's.
				p.Sources["slurm.time_limit"] = Source{File: tl.From, Note: "lanes.py srt_time_limit"}
			}
		}
	case o.SingleNode && srt.SingleNodeTimeLimit > 0:
		// lanes.py srt_time_limit: a fixed default-time-limit wins, else a
		// single-node job's single-node-time-limit (minutes).
		p.Slurm.TimeLimit = strconv.Itoa(srt.SingleNodeTimeLimit)
		from("slurm.time_limit", "slurm.srt-slurm.single-node-time-limit", "minutes, a single-node point's")
	}

	switch {
	case o.RunsDir != "":
		p.Paths.RunsDir = o.RunsDir
		p.Sources["paths.runs_dir"] = Source{File: "the caller", Note: "given"}
	case srt.SharedRunRoot != "":
		p.Paths.RunsDir = filepath.Join(srt.SharedRunRoot, "slurmbench-runs")
		from("paths.runs_dir", "slurm.srt-slurm.shared-run-root", "slurmbench-runs/ under it")
	case srt.Outputs != "":
		p.Paths.RunsDir = filepath.Join(srt.Outputs, "slurmbench-runs")
		from("paths.runs_dir", "slurm.srt-slurm.outputs", "slurmbench-runs/ under it")
	case o.DefaultRunsDir != "":
		p.Paths.RunsDir = o.DefaultRunsDir
		p.Sources["paths.runs_dir"] = Source{File: "GITHUB_WORKSPACE", Note: "the record names no shared run root: slurmbench-runs/ in the workspace"}
	}
	if sq := s.Squash; sq != nil {
		pol := sq.Policy(o.Framework, o.ModelPrefix)
		p.Paths.SquashDir = pol.Dir
		from("paths.squash_dir", "slurm.squash.dir", "")
		if pol.Dir != sq.Dir {
			from("paths.squash_dir", "slurm.squash.framework-dirs."+o.Framework, "the framework's (or model prefix's) location")
		}
		switch {
		case pol.NeedsJob() && pol.Import != runners.ImportPreStaged && pol.Import != runners.ImportUnchecked:
			// Only the job's own nodes can fill a node-local cache, and
			// all-nodes asks each node for its own copy.
			p.Container.ImportOn = ImportOnNodes
			from("container.import_on", "slurm.squash.import", string(pol.Import)+", "+string(pol.Visibility)+": on every node of the job")
		case pol.Import == runners.ImportCompute:
			p.Container.ImportOn = "compute"
			from("container.import_on", "slurm.squash.import", string(pol.Import))
		case pol.Import == runners.ImportSubmitHost:
			p.Container.ImportOn = "login"
			from("container.import_on", "slurm.squash.import", string(pol.Import))
		}
	}

	for _, key := range c.Models.EntryOrder {
		e := c.Models.Entries[key]
		p.Models[key] = strings.TrimSuffix(s.Volumes[e.Root].Path, "/") + "/" + e.Dir
		from("models."+key, "models.entries."+key, "volume "+e.Root)
	}
	if err := p.recordAliases(o, srt, from); err != nil {
		return nil, fmt.Errorf("%s (cluster %s): %w", file, id, err)
	}

	for _, vol := range sortedKeys(srt.VolumeMounts) {
		p.Container.Mounts = append(p.Container.Mounts, s.Volumes[vol].Path+":"+srt.VolumeMounts[vol])
	}
	for _, host := range sortedKeys(srt.Mounts) {
		p.Container.Mounts = append(p.Container.Mounts, host+":"+srt.Mounts[host])
	}
	if len(p.Container.Mounts) > 0 {
		from("container.mounts", "slurm.srt-slurm", "volume-mounts (volume path:container path), then mounts")
	}
	lr := o.laneRequest()
	var extra []runners.Mount
	if lr.Agentic && lr.MultiNode {
		extra = c.AgenticMounts()
	}
	if lm := c.LaneMounts(lr); len(lm) > 0 {
		extra = append(extra, lm...)
	}
	if len(extra) > 0 {
		for _, m := range extra {
			if entry := m.Host + ":" + m.Container; !slices.Contains(p.Container.Mounts, entry) {
				p.Container.Mounts = append(p.Container.Mounts, entry)
			}
		}
		from("container.mounts", "slurm.srt-slurm", "volume-mounts, mounts, then a multi-node AgentX job's agentic-volume-mounts, then the mounts of the cluster's lane ("+srtlanes.Source+")")
	}

	if len(c.Env)+len(srt.Env) > 0 {
		p.Env.Set = map[string]string{}
	}
	for _, k := range sortedKeys(c.Env) {
		p.Env.Set[k] = c.Env[k]
		from("env.set."+k, "env."+k, "")
	}
	for _, k := range sortedKeys(srt.Env) {
		p.Env.Set[k] = srt.Env[k]
		from("env.set."+k, "slurm.srt-slurm.env."+k, "")
	}

	switch {
	case srt.PowerExporterPort > 0:
		p.Telemetry.Port = srt.PowerExporterPort
		from("telemetry.port", "slurm.srt-slurm.power-exporter-port", "")
	case srt.PowerTelemetry != nil:
		p.Telemetry.Port = srt.PowerTelemetry.DCGMPort
		from("telemetry.port", "slurm.srt-slurm.power-telemetry.dcgm-port", "")
	}
	if _, ok := srt.Extra["default_gpu_exporter"]; !ok {
		// srtslurm.yaml sets none: srtctl's own default exporter is the
		// one a recipe without dcgm_exporter runs (extra.go).
		p.Telemetry.ExporterImage, p.Telemetry.Port = SrtctlDefaultGPUExporterImage, SrtctlDefaultGPUExporterPort
		from("telemetry.exporter_image", "slurm.srt-slurm", "no extra.default_gpu_exporter: srtctl's default_gpu_exporter")
		from("telemetry.port", "slurm.srt-slurm", "no extra.default_gpu_exporter: srtctl's default_gpu_exporter")
	}

	if srt.HostSetup != nil {
		p.HostSetup = hostSetupOf(srt.HostSetup)
		from("host_setup", "slurm.srt-slurm.host-setup", "srtslurm.yaml's default_host_setup: bash <workspace>/"+srt.HostSetup.Script)
	}
	p.Fabric = srt.Fabric
	if len(p.Fabric.Rendered()) > 0 {
		from("fabric", "slurm.srt-slurm.fabric", "")
	}
	p.DRAM = DRAM{AvailableMiB: c.AvailableCPUDRAMMiB, GPUsPerNode: c.GPUsPerNode}
	if c.AvailableCPUDRAMMiB > 0 {
		from("dram", "available-cpu-dram-mib", "")
	}
	// Every job's srtslurm.yaml has InferenceX's health gate as its
	// default_health_check (config.py@eacb6075 HEALTH_CHECK, from
	// recipe.py@07db303e HEALTH_ATTEMPTS).
	p.Defaults.HealthMaxAttempts, p.Defaults.HealthIntervalSeconds = InferenceXHealthAttempts, InferenceXHealthInterval
	p.Sources["defaults.health_max_attempts"] = Source{File: file, Line: c.Line, Field: "clusters." + id,
		Note: "InferenceX's default_health_check: 720 polls, 10 s apart, for a recipe without health_check"}
	// Last, as InferenceX writes extra after its own keys.
	if err := p.recordExtra(res, o, srt, from); err != nil {
		return nil, err
	}
	return p, nil
}

func ptr[T any](v T) *T { return &v }

// InferenceX's default_health_check, in every srtslurm.yaml its launcher
// writes (config.py@eacb6075 HEALTH_CHECK).
const (
	InferenceXHealthAttempts = 720
	InferenceXHealthInterval = 10
)

// finishRecord fills what a record-derived profile takes from its other
// values once a TOML's overrides are in: without a squash cache in the
// record, slurmbench's own under paths.runs_dir.
func (p *Profile) finishRecord() {
	if p.Record == nil || p.Paths.SquashDir != "" || p.Paths.RunsDir == "" {
		return
	}
	c := p.Record.Cluster
	p.Paths.SquashDir = filepath.Join(p.Paths.RunsDir, "squash")
	p.Sources["paths.squash_dir"] = Source{File: p.Record.Inventory.Path, Line: c.LineOf("slurm"), Field: "clusters." + c.ID + ".slurm",
		Note: "no squash cache: slurmbench's own under paths.runs_dir"}
}

// StagedImage is image as the profile's containers name it: with a squash
// cache that imports (submit-host, compute, all-nodes) the reference, which
// slurmbench imports into paths.squash_dir; where operators stage the file
// (pre-staged, unchecked), the squash file the record's key style names.
// Without a record or a squash cache, the reference.
func (p *Profile) StagedImage(image, framework, modelPrefix string) string {
	if p.Record == nil || p.Record.Cluster.Slurm.Squash == nil {
		return image
	}
	return stagedFile(p.Record.Cluster.Slurm.Squash.Policy(framework, modelPrefix), image)
}

func (p *Profile) stagedHelper(image, helper string) string {
	if p.Record == nil || p.Record.Cluster.Slurm.Squash == nil {
		return image
	}
	return stagedFile(p.Record.Cluster.Slurm.Squash.HelperPolicy(helper), image)
}

func stagedFile(pol runners.SquashPolicy, image string) string {
	switch pol.Import {
	case runners.ImportPreStaged, runners.ImportUnchecked:
		return pol.File(image)
	}
	return image
}

// SquashPolicy is the record's squash policy of an image (ok false
// without a record or a squash cache).
func (p *Profile) SquashPolicy(framework, modelPrefix string) (runners.SquashPolicy, bool) {
	if p.Record == nil || p.Record.Cluster.Slurm.Squash == nil {
		return runners.SquashPolicy{}, false
	}
	return p.Record.Cluster.Slurm.Squash.Policy(framework, modelPrefix), true
}

// ModelDir is what a recipe's model.path names on this cluster: a
// [models] alias, or for "hf:<org>/<name>" the record's staged checkpoint
// of that model (models.entries by basename, node-local copy first).
func (p *Profile) ModelDir(src string) (string, bool) {
	if dir, ok := p.Models[src]; ok {
		return dir, true
	}
	if p.Record != nil && strings.HasPrefix(src, "hf:") {
		if p.SingleNode {
			// A single-node point serves the Hub id unless the record
			// stages single-node checkpoints (single_node_model_path,
			// drivers/srt/models.py, stored id 71170218454).
			if dir := p.Record.Cluster.SingleNodeModel(src); !strings.HasPrefix(dir, "hf:") {
				return dir, true
			}
			return "", false
		}
		if cp, ok := p.Record.Cluster.Checkpoint(src); ok {
			return cp.Path, true
		}
	}
	return "", false
}

// SourceOf is where the profile's key ("slurm.partition",
// "models.DeepSeek-R1-0528") came from; ok false for a default.
func (p *Profile) SourceOf(key string) (Source, bool) {
	s, ok := p.Sources[key]
	return s, ok
}

// maxSourceKeyWidth bounds the key column SourceLines aligns: a longer
// key (an image reference as an alias) is written whole and not aligned.
const maxSourceKeyWidth = 40

// SourceLines are "key  <- source" for every value with a recorded
// origin, sorted by key: what render and doctor show.
func (p *Profile) SourceLines() []string {
	keys := sortedKeys(p.Sources)
	width := 0
	for _, k := range keys {
		if len(k) <= maxSourceKeyWidth {
			width = max(width, len(k))
		}
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%-*s  <- %s", width, k, p.Sources[k])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// extendsOf reads only the `extends` table of a TOML profile.
func extendsOf(data []byte) (*Extends, error) {
	var head struct {
		Extends *Extends `toml:"extends"`
	}
	md, err := toml.Decode(string(data), &head)
	if err != nil {
		return nil, err
	}
	for _, k := range md.Undecoded() {
		if k[0] == "extends" {
			return nil, fmt.Errorf("extends: unknown key %q (runners, runner, cluster)", k.String())
		}
	}
	return head.Extends, nil
}

// tomlSources records the TOML file as the source of every key it sets.
func (p *Profile) tomlSources(path string, md toml.MetaData) {
	if p.Sources == nil {
		return
	}
	for _, k := range md.Keys() {
		if k[0] == "extends" {
			continue
		}
		if t := md.Type(k...); t == "Hash" {
			continue // a table: its keys are listed one by one
		}
		p.Sources[strings.Join(k, ".")] = Source{File: path, Field: strings.Join(k, "."), Note: "set by the profile"}
	}
}

var errNoRunners = errors.New("extends: no runners.yaml: set extends.runners or pass --runners")

// extendedRecord derives the profile an `extends` table names, the
// runners.yaml relative to the TOML file at path.
func extendedRecord(ctx context.Context, path string, e Extends, ro RunnersOptions) (*Profile, error) {
	if e.Runner != "" && e.Cluster != "" {
		return nil, errors.New("set runner or cluster, not both")
	}
	file := ro.Runners
	if e.Runners != "" {
		file = e.Runners
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(path), file)
		}
	}
	if file == "" {
		return nil, errNoRunners
	}
	file, err := Canonical(file)
	if err != nil {
		return nil, fmt.Errorf("runners.yaml: %w", err)
	}
	o := ro
	o.Runners, o.Runner, o.Cluster = file, cmpOr(e.Runner, ro.Runner), e.Cluster
	if e.Cluster != "" {
		o.Runner = ""
	}
	inv, err := runners.Load(ctx, o.Runners, runners.Options{Home: o.Home})
	if err != nil {
		return nil, err
	}
	res, err := resolveRecord(inv, o.Runner, o.Cluster, o.Label)
	if err != nil {
		return nil, err
	}
	return FromRecord(res, o)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
