package matrix

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/launcher/inputs/master"
)

// This file packs points by topology (issue 35): the points that fit the
// same allocation — the same entry (so image and model), cluster or
// partition, nodes and GPUs — run in one, their servers restarted in
// place between recipe variants. An entry's variants are tuned per
// concurrency, so few points serve identically, but many differ only in
// engine arguments or in how the same nodes are split between prefill and
// decode: the allocation, the image import, the model staging and the
// Dynamo install stay, only the engines restart.

// Estimates are the durations --plan counts with and a group is split by.
// Each has a stated default (DefaultEstimates); none is measured here.
type Estimates struct {
	// QueueWait is the wait for one allocation in the queue: wall time,
	// not GPU-hours (nothing is held while a job pends).
	QueueWait time.Duration
	// Import, Stage and Dynamo are one allocation's setup: the image
	// import and validation, the model copy to node-local storage and
	// the Dynamo install. They are paid once per allocation.
	Import, Stage, Dynamo time.Duration
	// EngineStart is one start of a point's servers to a passed health
	// gate: paid by the first point of an allocation and by every restart.
	EngineStart time.Duration
	// PerConc is one concurrency of a fixed-seq-len benchmark; an agentic
	// point takes its row's duration per concurrency (PerConc without it).
	PerConc time.Duration
	// Eval is one eval (an eval-only point, or run-eval on a benchmark).
	Eval time.Duration
	// TimeLimit is an allocation's limit when its plan does not say one.
	TimeLimit time.Duration
}

// DefaultEstimates are the stated defaults. Setup (import 10 min, model
// staging 15 min, Dynamo install 5 min) sums to DefaultStartup, the figure
// matrix always counted per allocation; an engine start of 10 minutes is
// the model load of a large MoE engine; 4 hours is the default-time-limit
// several clusters of InferenceX's runners.yaml set
// (inferencex-e2e/configs/runners.yaml@03eaa88a).
var DefaultEstimates = Estimates{
	QueueWait:   30 * time.Minute,
	Import:      10 * time.Minute,
	Stage:       15 * time.Minute,
	Dynamo:      5 * time.Minute,
	EngineStart: 10 * time.Minute,
	PerConc:     10 * time.Minute,
	Eval:        20 * time.Minute,
	TimeLimit:   4 * time.Hour,
}

// Setup is one allocation's setup: import, staging and install.
func (e Estimates) Setup() time.Duration { return e.Import + e.Stage + e.Dynamo }

// withDefaults fills the zero fields from DefaultEstimates.
func (e Estimates) withDefaults() Estimates {
	d := DefaultEstimates
	for _, f := range []struct{ v, def *time.Duration }{
		{&e.QueueWait, &d.QueueWait}, {&e.Import, &d.Import}, {&e.Stage, &d.Stage}, {&e.Dynamo, &d.Dynamo},
		{&e.EngineStart, &d.EngineStart}, {&e.PerConc, &d.PerConc}, {&e.Eval, &d.Eval}, {&e.TimeLimit, &d.TimeLimit},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return e
}

// rowTime is the estimated time of one point once its servers are up:
// its benchmark over every concurrency, then its eval.
func (e Estimates) rowTime(p *Point) time.Duration {
	if p.EvalOnly {
		return e.Eval
	}
	per := e.PerConc
	if p.Scenario == master.AgenticCoding {
		if s := rowInt(p.Row, "duration"); s > 0 {
			per = time.Duration(s) * time.Second
		}
	}
	d := time.Duration(max(len(p.Conc), 1)) * per
	if p.RunEval {
		d += e.Eval
	}
	return d
}

func rowInt(row map[string]any, k string) int {
	switch v := row[k].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

// topologyKey is what an allocation is fixed by: the entry (its image and
// model), where it runs (cluster or runner label, partition), the node
// count and GPUs. "" for a point that shares nothing: one refused for a
// reason other than not yet composed.
func topologyKey(p *Point) string {
	where := p.Cluster
	if where == "" {
		where = p.Runner
	}
	if pl := p.Plan; pl != nil {
		// The lane's settings fix the job too (lane.go): its time limit
		// (the plan's), mounts and setup script. Points of one entry
		// differ in them where the lane's rules read the scenario, the
		// eval selection or a single-node point's concurrency.
		return strings.Join([]string{p.Key, where, pl.Slurm.Partition, pl.Image.Ref, pl.Image.Squash, pl.Model.Source,
			strconv.Itoa(pl.Slurm.Nodes), strconv.Itoa(pl.Slurm.GPUsPerNode), strconv.Itoa(pl.Slurm.TimeLimitMinutes), p.lane.key()}, "|")
	}
	if p.Row == nil || (p.Err != nil && ReasonOf(p.Err) != ReasonNotComposed) {
		return ""
	}
	nodes := 1
	if p.Multinode {
		nodes = p.NodeCount
	}
	return strings.Join([]string{p.Key, where, p.Image, p.Model, strconv.Itoa(nodes), strconv.Itoa(p.AllocGPUs())}, "|")
}

// splitKey is how the allocation's GPUs are split between the servers'
// roles: points of one split restart only engine arguments.
func splitKey(p *Point) string {
	if pl := p.Plan; pl != nil {
		return fmt.Sprintf("%d/%d/%d", pl.GPUs.Prefill, pl.GPUs.Decode, pl.GPUs.Agg)
	}
	side := func(w map[string]any) string {
		return fmt.Sprintf("%dx%d", rowInt(w, "num-worker"), rowInt(w, "tp")*max(rowInt(w, "pp"), 1)*max(rowInt(w, "pcp-size"), 1))
	}
	return side(p.Prefill) + "/" + side(p.Decode)
}

// serverKey identifies the servers a point starts: equal keys serve
// identically, so the second point runs without a restart. Agentic points
// never share servers ("" : a restart before each), as InferenceX gives
// every AgentX point its own: trace replay reuses the KV cache, and a
// server warmed by another concurrency's run would measure differently.
func serverKey(p *Point) string {
	if p.Scenario == master.AgenticCoding {
		return ""
	}
	if p.Plan != nil {
		return p.Plan.ServingDigest()
	}
	if p.Row != nil {
		return servingKey(p)
	}
	return ""
}

// groupByTopology packs points into allocations: one per topology, its
// points ordered so identical servers run back to back and points of one
// split follow each other, split into several allocations when the
// estimated time (setup, each engine start, each point) exceeds the
// allocation's time limit. Points that share nothing stand alone.
func groupByTopology(pts []*Point, est Estimates) []Group {
	type bucket struct {
		splits  []string
		bySplit map[string][]*Point
	}
	var order []string
	buckets := map[string]*bucket{}
	var gs []Group
	for _, p := range pts {
		k := topologyKey(p)
		if k == "" {
			order = append(order, "")
			gs = append(gs, Group{Points: []*Point{p}})
			continue
		}
		b, ok := buckets[k]
		if !ok {
			b = &bucket{bySplit: map[string][]*Point{}}
			buckets[k] = b
			order = append(order, k)
		}
		s := splitKey(p)
		if _, ok := b.bySplit[s]; !ok {
			b.splits = append(b.splits, s)
		}
		b.bySplit[s] = append(b.bySplit[s], p)
	}
	// Lay the groups out in the order their topologies first appear,
	// standalone points where they stood.
	var out []Group
	alone := 0
	for _, k := range order {
		if k == "" {
			out = append(out, gs[alone])
			alone++
			continue
		}
		b := buckets[k]
		var ordered []*Point
		for _, s := range b.splits {
			ordered = append(ordered, byServers(b.bySplit[s])...)
		}
		out = append(out, pack(ordered, est)...)
	}
	for i := range out {
		out[i].restarts()
	}
	return out
}

// byServers orders points so that those with identical servers are
// adjacent, in the order each set first appears.
func byServers(pts []*Point) []*Point {
	var keys []string
	by := map[string][]*Point{}
	for _, p := range pts {
		k := serverKey(p)
		if k == "" {
			// Shares with none: a key of its own.
			k = fmt.Sprintf("\x00%p", p)
		}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], p)
	}
	out := make([]*Point, 0, len(pts))
	for _, k := range keys {
		out = append(out, by[k]...)
	}
	return out
}

// pack splits ordered points of one topology into allocations that each
// fit the time limit: setup, then per point its engine start (when it
// restarts) and its own time.
func pack(pts []*Point, est Estimates) []Group {
	var out []Group
	var cur Group
	var used time.Duration
	for _, p := range pts {
		limit := timeLimit(p, est)
		cost := est.rowTime(p)
		if len(cur.Points) == 0 || !sameServers(cur.Points[len(cur.Points)-1], p) {
			cost += est.EngineStart
		}
		// A point that alone estimates past the limit says the estimates
		// do not fit this cluster (the test cluster's jobs are 20
		// minutes): it splits nothing.
		alone := est.Setup() + est.EngineStart + est.rowTime(p)
		if len(cur.Points) > 0 && used+cost > limit && alone <= limit {
			out = append(out, cur)
			cur, used = Group{}, 0
			cost = est.rowTime(p) + est.EngineStart
		}
		if len(cur.Points) == 0 {
			used = est.Setup()
		}
		cur.Points = append(cur.Points, p)
		used += cost
		cur.Estimate, cur.TimeLimit = used, limit
	}
	if len(cur.Points) > 0 {
		out = append(out, cur)
	}
	return out
}

// timeLimit is the allocation's limit: the plan's, else the stated default.
func timeLimit(p *Point, est Estimates) time.Duration {
	if p.Plan != nil && p.Plan.Slurm.TimeLimitMinutes > 0 {
		return time.Duration(p.Plan.Slurm.TimeLimitMinutes) * time.Minute
	}
	return est.TimeLimit
}

// sameServers reports whether b runs on a's servers without a restart.
func sameServers(a, b *Point) bool {
	ka := serverKey(a)
	return ka != "" && ka == serverKey(b)
}

// restarts marks, per point after the first, whether its servers replace
// the previous point's (Restart) and whether the split changes too
// (Resplit).
func (g *Group) restarts() {
	g.Restart = make([]bool, len(g.Points))
	g.Resplit = make([]bool, len(g.Points))
	for i := 1; i < len(g.Points); i++ {
		a, b := g.Points[i-1], g.Points[i]
		g.Restart[i] = !sameServers(a, b)
		g.Resplit[i] = splitKey(a) != splitKey(b)
	}
}

// Restarts counts the group's restarts: all, and those that change the
// prefill/decode split.
func (g Group) Restarts() (all, resplit int) {
	for i := range g.Restart {
		if g.Restart[i] {
			all++
		}
		if g.Resplit[i] {
			resplit++
		}
	}
	return all, resplit
}

// Costs are a plan's estimated costs, packed and with one allocation per
// point.
type Costs struct {
	Points      int `json:"points"`
	Allocations int `json:"allocations"`
	// Starts counts engine starts: one per allocation and per restart.
	Starts         int `json:"engine_starts"`
	StartsPerPoint int `json:"engine_starts_per_point"`
	// SetupGPUHours is import, staging and install on all of each
	// allocation's GPUs; EngineGPUHours the engine starts likewise.
	SetupGPUHours          float64 `json:"setup_gpu_hours"`
	SetupGPUHoursPerPoint  float64 `json:"setup_gpu_hours_per_point"`
	EngineGPUHours         float64 `json:"engine_gpu_hours"`
	EngineGPUHoursPerPoint float64 `json:"engine_gpu_hours_per_point"`
	// QueueHours is the estimated queue wait, summed over allocations
	// (wall time: no GPU is held while a job pends).
	QueueHours         float64 `json:"queue_hours"`
	QueueHoursPerPoint float64 `json:"queue_hours_per_point"`
}

// Costs counts the matrix's estimated setup, engine start and queue wait,
// as packed and as one allocation per point.
func (m *Matrix) Costs() Costs {
	e := m.Est
	c := Costs{Points: len(m.Points), Allocations: len(m.Groups)}
	setup, start, queue := m.Startup.Hours(), e.EngineStart.Hours(), e.QueueWait.Hours()
	for _, g := range m.Groups {
		gpus := float64(g.GPUs())
		restarts, _ := g.Restarts()
		n := len(g.Points)
		c.Starts += 1 + restarts
		c.StartsPerPoint += n
		c.SetupGPUHours += gpus * setup
		c.SetupGPUHoursPerPoint += float64(n) * gpus * setup
		c.EngineGPUHours += float64(1+restarts) * gpus * start
		c.EngineGPUHoursPerPoint += float64(n) * gpus * start
		c.QueueHours += queue
		c.QueueHoursPerPoint += float64(n) * queue
	}
	return c
}
