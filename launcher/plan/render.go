package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// JSON renders the plan as indented JSON with a trailing newline. Map keys
// are sorted by encoding/json, so equal plans give equal bytes.
func (p *Plan) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteHuman prints the plan for a person: node map, ports, then each
// process with its argv, environment, mounts and log.
func (p *Plan) WriteHuman(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("Plan %s (run %s)\n", p.Name, p.RunID)
	ew.printf("  recipe   %s (schema %d)\n  profile  %s\n  run dir  %s\n", p.Recipe.Path, p.Recipe.Schema, p.Profile.Path, p.RunDir)
	ew.printf("  mode     %s, backend %s, frontend %s\n", p.Mode, p.Backend, p.Frontend)
	ew.printf("  nodes    %d × %d GPUs; GPUs prefill %d, decode %d, agg %d, total %d\n",
		p.Nodes, p.GPUsPerNode, p.GPUs.Prefill, p.GPUs.Decode, p.GPUs.Agg, p.GPUs.Total)
	img := p.Image.Ref
	if img == "" {
		img = "(local squash)"
	}
	if p.Runtime == profile.RuntimeOCI {
		// Slurm's own containers start an OCI bundle, not a squash file.
		ew.printf("  image    %s\n           bundle %s  (runtime %s)\n", img, p.Image.Squash, p.Runtime)
	} else {
		ew.printf("  image    %s\n           enroot %s\n           squash %s  (runtime %s)\n", img, p.Image.EnrootURI, p.Image.Squash, p.Runtime)
	}
	ew.printf("  model    %s → %s, served as %q\n", p.Model.Source, p.Model.Path, p.Model.ServedName)
	ew.printf("  slurm    partition %s, account %s, %d min, job name %s\n", p.Slurm.Partition, orDash(p.Slurm.Account), p.Slurm.TimeLimitMinutes, p.Slurm.JobName)
	if p.Slurm.NetworkInterface != "" {
		ew.printf("  network  each node's address on %s, asked of the node when the job starts (srtctl's rule)\n", p.Slurm.NetworkInterface)
	}
	p.writeProvenance(ew)

	p.writeNodeMap(ew)
	p.writePorts(ew)

	p.writeHostSetup(ew)
	ew.printf("\nHealth gate: %s GET :%d%s on node %d, expect %d prefill + %d decode, %d × %ds\n",
		p.Health.Kind, p.Health.Port, p.Health.Path, p.Health.Node, p.Health.Prefill, p.Health.Decode, p.Health.MaxAttempts, p.Health.IntervalSeconds)
	for _, w := range p.Health.Workers {
		ew.printf("  then GET :%d%s on node %d answers 200 (every worker in one pass)\n", w.Port, w.Path, w.Node)
	}
	if len(p.Points) > 0 {
		ew.printf("\nBenchmark: %s (%s client), ISL %d, OSL %d, range ratio %g, rate %s\n", p.Benchmark.Type, p.Benchmark.Client, p.Benchmark.ISL, p.Benchmark.OSL, p.Benchmark.RangeRatio, p.Benchmark.RequestRate)
		for _, pt := range p.Points {
			ew.printf("  c%-6d %6d prompts (+%d warmup) → %s\n", pt.Concurrency, pt.NumPrompts, pt.WarmupPrompts, pt.ResultFile)
		}
	}
	p.writeBenchmarkNotes(ew)
	p.writeSrtctlNotes(ew)
	switch {
	case p.Eval.Enabled && len(p.Eval.Command) > 0:
		ew.printf("\nEval: post_eval.command %s, EVAL_CONC %d, only=%v; results %s; from the submitting environment when set: %s\n",
			QuoteArgv(p.Eval.Command), p.Eval.Concurrency, p.Eval.Only, p.Eval.ResultDir, strings.Join(p.Eval.Passenv, ", "))
	case p.Eval.Enabled:
		if len(p.Eval.Concurrencies) > 1 {
			ew.printf("\nEval: gsm8k (%s client), at each concurrency of %v (staged as *_conc<N>), only=%v\n", p.Eval.Client, p.Eval.Concurrencies, p.Eval.Only)
		} else {
			ew.printf("\nEval: gsm8k (%s client), concurrency %d, only=%v\n", p.Eval.Client, p.Eval.Concurrency, p.Eval.Only)
		}
	}

	p.writeLegend(ew)
	shared := p.workerSharedEnv()
	if len(shared) > 0 {
		ew.printf("\nWorker environment (every prefill, decode and agg worker; not repeated below)\n")
		for _, k := range sortedKeys(shared) {
			ew.printf("  env   %s=%s\n", k, shared[k])
		}
	}

	ew.printf("\nProcesses\n")
	for _, proc := range p.Processes {
		where := "host"
		if proc.Container {
			where = "container"
			if proc.Image != "" {
				where += " " + proc.Image
			}
		}
		gpus := "all GPUs"
		if len(proc.GPUs) > 0 {
			gpus = "GPUs " + JoinInts(proc.GPUs)
		} else if proc.Role != RolePrefill && proc.Role != RoleDecode && proc.Role != RoleAgg {
			gpus = "no GPU slice"
		}
		ew.printf("\n  %s [%s] node %s, %s, %s\n", proc.Name, proc.Role, JoinInts(proc.Nodes), gpus, where)
		for i, step := range proc.Setup {
			ew.printf("    setup %d %s\n", i+1, QuoteArgv(step))
		}
		ew.printf("    argv  %s\n", WrapArgv(proc.Argv, argvWidth, "          "))
		if len(proc.Unset) > 0 {
			ew.printf("    unset %s\n", strings.Join(proc.Unset, " "))
		}
		for _, k := range sortedKeys(proc.Env) {
			if _, ok := shared[k]; ok && IsWorker(proc.Role) {
				continue
			}
			ew.printf("    env   %s=%s\n", k, proc.Env[k])
		}
		for _, m := range proc.Mounts {
			ew.printf("    mount %s\n", m)
		}
		for _, f := range sortedKeys(proc.Files) {
			ew.printf("    file  %s (%d bytes, written before start)\n", f, len(proc.Files[f]))
		}
		if proc.Srun.MPI != "" || len(proc.Srun.Extra) > 0 || len(proc.Srun.Export) > 0 || proc.Srun.NTasks > len(proc.Nodes) {
			ew.printf("    srun  ntasks %d %s\n", proc.Srun.NTasks, strings.TrimSpace(strings.Join(append(append(mpiFlag(proc.Srun.MPI), proc.Srun.Extra...), exportFlag(proc.Srun.Export)...), " ")))
		}
		ew.printf("    log   %s\n", proc.Log)
		if len(proc.After) > 0 {
			ew.printf("    after %s serve (GET of each one's readiness probe answers 200)\n", strings.Join(proc.After, ", "))
		}
		if proc.Role == RoleService {
			ew.printf("    start %s, %s\n", proc.Start, describeService(proc))
		}
	}
	if len(p.EnvPassthrough) > 0 {
		ew.printf("\nPassed through from the submitting environment (values not shown): %s\n", strings.Join(p.EnvPassthrough, ", "))
	}
	return ew.err
}

// writeNodeMap is the node map: each node's roles and GPU slices.
func (p *Plan) writeNodeMap(ew *errWriter) {
	ew.printf("\nNode map\n")
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  node\troles\tGPU slices\n")
	for _, n := range p.NodeMap {
		fmt.Fprintf(tw, "  %d\t%s\t%s\n", n.Index, strings.Join(n.Roles, ","), strings.Join(n.GPUs, " "))
	}
	tw.Flush()

}

// writePorts lists every port a process listens on, by node.
func (p *Plan) writePorts(ew *errWriter) {
	ew.printf("\nPorts\n")
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  node\tport\tprocess\tuse\n")
	type row struct {
		node, port int
		name, kind string
	}
	var rows []row
	for _, proc := range p.Processes {
		for kind, port := range proc.Ports {
			if port != 0 {
				rows = append(rows, row{proc.Nodes[0], port, proc.Name, kind})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].node != rows[j].node {
			return rows[i].node < rows[j].node
		}
		return rows[i].port < rows[j].port
	})
	for _, r := range rows {
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\n", r.node, r.port, r.name, r.kind)
	}
	tw.Flush()
}

// WriteBrief is the plan for a big topology at a glance: what runs where
// and on which ports, without each process's argv and environment.
func (p *Plan) WriteBrief(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("Plan %s (run %s): %s, %d nodes × %d GPUs (prefill %d, decode %d, agg %d), %d processes\n",
		p.Name, p.RunID, p.Mode, p.Nodes, p.GPUsPerNode, p.GPUs.Prefill, p.GPUs.Decode, p.GPUs.Agg, len(p.Processes))
	p.writeNodeMap(ew)
	p.writePorts(ew)
	return ew.err
}

func IsWorker(r Role) bool { return r == RolePrefill || r == RoleDecode || r == RoleAgg }

// workerSharedEnv is the environment every worker process has with the
// same value, when there are two workers or more: printed once, it leaves
// each worker's own lines to what differs.
func (p *Plan) workerSharedEnv() map[string]string {
	var shared map[string]string
	workers := 0
	for _, proc := range p.Processes {
		if !IsWorker(proc.Role) {
			continue
		}
		workers++
		if shared == nil {
			shared = maps.Clone(proc.Env)
			continue
		}
		for k, v := range shared {
			if w, ok := proc.Env[k]; !ok || w != v {
				delete(shared, k)
			}
		}
	}
	if workers < 2 {
		return nil
	}
	return shared
}

// placeholderPattern matches what the driver fills in from the allocation.
var placeholderPattern = regexp.MustCompile(`\{(host|ip):\d+\}|\{job_id\}`)

// writeLegend explains the placeholders the plan uses, if any.
func (p *Plan) writeLegend(ew *errWriter) {
	used := map[string]bool{}
	note := func(s string) {
		for _, m := range placeholderPattern.FindAllStringSubmatch(s, -1) {
			used[cmp.Or(m[1], "job_id")] = true
		}
	}
	for _, proc := range p.Processes {
		for _, a := range proc.Argv {
			note(a)
		}
		for _, v := range proc.Env {
			note(v)
		}
		for _, f := range proc.Files {
			note(f)
		}
		for _, step := range proc.Setup {
			for _, a := range step {
				note(a)
			}
		}
	}
	if len(used) == 0 {
		return
	}
	ew.printf("\nPlaceholders (the driver fills them in inside the allocation, before each process starts)\n")
	if used["host"] {
		ew.printf("  {host:N}  hostname of node N of the node map (as srun --nodelist takes it)\n")
	}
	if used["ip"] {
		ew.printf("  {ip:N}    IP address of node N, for addresses other nodes and clients connect to\n")
	}
	if used["job_id"] {
		ew.printf("  {job_id}  the Slurm job id\n")
	}
}

// QuoteArgv shows an argv on one line, unambiguously: words that are empty
// or hold white space, quotes, backslashes or shell-special characters are
// Go-quoted, so a multi-line argument cannot pose as a line of output. It
// is for reading only (plans, logs); nothing parses it back.
func QuoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\r\"'\\$`") {
			out[i] = strconv.Quote(a)
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

func mpiFlag(mpi string) []string {
	if mpi == "" {
		return nil
	}
	return []string{"--mpi", mpi}
}

func exportFlag(export []string) []string {
	if len(export) == 0 {
		return nil
	}
	return []string{"--export=ALL," + strings.Join(export, ",")}
}
