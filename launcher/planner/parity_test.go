package planner

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// testSrtctlParity (TestSrtctlParity) compares every worker, frontend, nginx and infra process
// srtctl launched for the reference recipes (../shared/data/srtctl-reference:
// each srun's flags and its `bash -c` string: the exported environment, the
// preamble and the final command) with slurmbench's planned process for the
// same role, worker index and node: program, flags and values, environment,
// srun options, setup steps. Every difference must be listed in deliberate
// with its reason; any other fails the test. Paths named differently by
// design (container images and mounts, log files) are not compared.
//
// Every recording is compared: a recipe slurmbench refuses fails the test.
func testSrtctlParity(t *testing.T, migrated bool) {
	cases := srtctlCasesForm(t, migrated)
	sum := paritySummary{byReason: map[string]int{}}
	for _, c := range cases {
		pl := c.Plan
		if pl == nil {
			sum.refused = append(sum.refused, filepath.Base(c.Rel)+" ("+c.Refused+")")
			t.Errorf("%s: refused for %s, which srtctl plans", c.Rel, c.Refused)
			continue
		}
		t.Run(c.Rel, func(t *testing.T) {
			diffs, procs := compareWithSrtctl(t, c.Run, pl)
			sum.recipes++
			clean, touched := map[string]bool{}, map[string]bool{}
			for _, p := range procs {
				clean[p] = true
			}
			for _, d := range diffs {
				touched[d.proc] = true
				e := d.deliberate()
				if e == nil {
					t.Errorf("unexplained difference: %s", d)
					clean[d.proc] = false
					sum.unexplained++
					continue
				}
				sum.byReason[e.kind+" "+cmp.Or(e.key, "*")+": "+e.reason]++
			}
			sum.processes += len(procs)
			for _, p := range procs {
				if clean[p] {
					sum.cleanProcesses++
				}
				if !touched[p] {
					sum.identical++
				}
			}
			if len(procs) < 2 {
				t.Errorf("only %d processes compared: parsing the reference went wrong", len(procs))
			}
			for _, d := range compareFiles(c.Run, pl) {
				sum.files++
				if e := d.deliberate(); e != nil {
					sum.byReason[e.kind+" "+cmp.Or(e.key, "*")+": "+e.reason]++
					continue
				}
				if d.kind != "file-same" {
					t.Errorf("unexplained difference: %s", d)
					sum.unexplained++
				}
			}
		})
	}
	t.Log(sum.String())
	// Every recording is compared: a recipe slurmbench stops planning, or a
	// list that loses a line, fails here instead of shrinking the test.
	if want := srtctlRecordings(t); len(cases) != want || sum.recipes != want {
		t.Errorf("compared %d of the %d recipes listed; the reference holds %d recordings", sum.recipes, len(cases), want)
	}
}

// compareFiles compares the files srtctl wrote for the job with the plan's
// file of the same name, byte for byte once placeholders are filled.
func compareFiles(run srtctlRun, pl *plan.Plan) []parityDiff {
	ours := map[string]string{}
	for _, p := range pl.Processes {
		for path, content := range p.Files {
			ours[filepath.Base(path)] = fillPlaceholders(content, run)
		}
	}
	var diffs []parityDiff
	for _, rel := range profile.SortedKeys(run.GeneratedFiles) {
		name := filepath.Base(rel)
		d := parityDiff{frontend: pl.Frontend, proc: "files", kind: "file", key: name, srtctl: run.GeneratedFiles[rel], ours: ours[name]}
		if d.srtctl == d.ours {
			d.kind = "file-same"
		}
		diffs = append(diffs, d)
	}
	return diffs
}

type paritySummary struct {
	recipes, processes, cleanProcesses, identical, unexplained int
	files                                                      int
	refused                                                    []string
	byReason                                                   map[string]int
}

func (s *paritySummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "srtctl parity: %d recipes compared, %d refused by field (%s); %d processes, %d with no unexplained difference (%d identical), %d generated files, %d unexplained differences\n",
		s.recipes, len(s.refused), strings.Join(s.refused, ", "),
		s.processes, s.cleanProcesses, s.identical, s.files, s.unexplained)
	for _, k := range profile.SortedKeys(s.byReason) {
		fmt.Fprintf(&b, "  %5d × %s\n", s.byReason[k], k)
	}
	return b.String()
}

// paritydiff is one difference between srtctl's launch and the plan.
type parityDiff struct {
	frontend     string // the plan's frontend type
	proc         string // reference name: prefill_w0@node002, frontend_1, nginx, infra
	kind         string // program, flag, order, env, unset, srun, setup, process
	key          string
	srtctl, ours string
}

func (d parityDiff) String() string {
	return fmt.Sprintf("%s %s %s: srtctl %q, slurmbench %q", d.proc, d.kind, d.key, d.srtctl, d.ours)
}

// deliberate is the table entry that explains d, or nil.
func (d parityDiff) deliberate() *deliberateDiff {
	for i, e := range deliberate {
		if e.kind == d.kind && (e.key == "" || e.key == d.key) && (e.when == nil || e.when(d)) {
			return &deliberate[i]
		}
	}
	return nil
}

var (
	eplbName   = regexp.MustCompile(`^moe_shared_(<uuid4hex>|[0-9a-f]{32})$`)
	configDump = regexp.MustCompile(`^/logs/(prefill|decode|agg)_w[0-9]+_r[0-9]+_config\.json$`)
)

// deliberate lists every difference slurmbench keeps on purpose, with its
// reason. A difference matches an entry by kind and key (and the entry's
// condition on the values, when it has one).
type deliberateDiff struct {
	kind, key string
	when      func(parityDiff) bool
	reason    string
}

var deliberate = []deliberateDiff{
	{"flag", "--dump-config-to", func(d parityDiff) bool {
		return strings.HasSuffix(d.srtctl, "_config.json") && configDump.MatchString(d.ours)
	}, "srtctl hands the container a host path (<log dir>/<node>_config.json), which exists there only if mounted at the same path and which the workers of one node overwrite in turn; slurmbench writes /logs/<process>_config.json, the same log directory as the container sees it, one file per process"},
	{"env", "TRTLLM_EPLB_SHM_NAME", func(d parityDiff) bool {
		return eplbName.MatchString(d.srtctl) && eplbName.MatchString(d.ours)
	}, "srtctl draws a fresh uuid4 per worker; slurmbench derives the 32 hex digits from the run id and process name, so a plan is reproducible while names stay unique per worker"},
	{"setup", "fingerprint", nil,
		"srtctl inlines a Python script that records pip freeze, GPUs and environment to /logs/fingerprint_*.json before the engine starts (informational: it only warns on identity mismatch); slurmbench plans no setup step for it: its exec shim records the same facts without Python in every step, after setup and just before exec (internal/fingerprint), into the manifest's runtime"},
	{"setup", "dynamo-install", func(d parityDiff) bool { return sameDynamoSource(d.srtctl, d.ours) },
		"same Dynamo source; srtctl pip-installs (or unpacks its build) in every container of every job behind a bash flock, slurmbench's setup step `slurmbench dynamo-install` fetches or builds it once per cache key into the shared wheel cache and installs from there"},
	{"setup", "setup-script", func(d parityDiff) bool { return d.srtctl == d.ours },
		"same script; srtctl runs /configs/<name> through bash, falling back to /configs/patches/<name> and only warning when neither exists; slurmbench runs `bash /configs/<name>` as a setup step, and a missing script fails the process (a run without its setup is not the recipe's)"},
	{"env", "ETCD_ENDPOINTS", func(d parityDiff) bool { return d.ours == "" && d.frontend != "dynamo" },
		"no Dynamo frontend: nothing in the job uses etcd (srtctl starts it for an SGLang router, not for vllm serve, and points every worker at it either way); slurmbench starts none and names none"},
	{"env", "NATS_SERVER", func(d parityDiff) bool { return d.ours == "" && d.frontend != "dynamo" },
		"no Dynamo frontend: nothing in the job uses NATS (srtctl starts it for an SGLang router, not for vllm serve, and points every worker at it either way); slurmbench starts none and names none"},
	{"process", "missing", func(d parityDiff) bool {
		return d.frontend == "sglang" && strings.Contains(d.srtctl, "/tmp/setup_head.py")
	}, "srtctl starts NATS and etcd for an SGLang router job too, where neither the router nor the SGLang servers use them; slurmbench starts them for Dynamo frontends only"},
	{"env", "", func(d parityDiff) bool {
		return strings.Contains(d.srtctl, "{job_id}") && d.ours == strings.ReplaceAll(d.srtctl, "{job_id}", srtctlJobID)
	}, "the recipe writes {job_id} in an environment value (a per-job directory); srtctl formats only {node} and {node_id} there and passes {job_id} literally, so every job shares one directory; slurmbench fills in the job id"},
	{"file", "nginx.conf", func(d parityDiff) bool { return d.ours != "" && nginxDirectives(d.srtctl) == nginxDirectives(d.ours) },
		"the same nginx directives (upstream servers, listen port, session-affinity hash, body limit, timeouts, keepalive) from slurmbench's own template; only comments, blank lines and the order of the events and http blocks differ from srtctl's nginx.conf.j2"},
	{"process", modelDownloadName, func(d parityDiff) bool { return d.srtctl != "" && d.srtctl == d.ours },
		"srtctl formats HF_HOME and the model id, shell-quoted, into its `bash -c` string; slurmbench runs the same command from a fixed script (logs/model_download.sh) with the two as its arguments: compared with them filled in as srtctl quotes them, the command is srtctl's word for word"},
	{"program", "", func(d parityDiff) bool {
		m := slurmbenchStageModel.FindStringSubmatch(d.ours)
		return strings.HasPrefix(d.proc, "stage_model_") && m != nil && d.srtctl == "bash /srtctl-runtime/stage_model.sh "+m[1]
	}, "srtctl runs its runtime_scripts/stage_model.sh from its checkout mounted at /srtctl-runtime; slurmbench runs its own `slurmbench stage-model` (launcher/job/stagemodel: the same manifest check, copy and verification, in Go) with the same arguments"},
	{"process", "infra", func(d parityDiff) bool { return d.srtctl == "setup_head.py" && d.ours == "nats-server+etcd" },
		"srtctl starts NATS and etcd from one python3 /tmp/setup_head.py step; slurmbench runs each as its own step with its own readiness probe (same flags, NATS max_payload in a config file as setup_head.py writes it), from the profile's binaries or the image's"},
}

// nginxDirectives is an nginx.conf's directive lines without comments,
// indentation and blank lines, sorted.
func nginxDirectives(conf string) string {
	var lines []string
	for _, l := range strings.Split(conf, "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// sameDynamoSource compares srtctl's install ("hash 5b4b…") with the
// setup step's ("hash 5b4b…").
func sameDynamoSource(srtctl, ours string) bool { return srtctl != "" && srtctl == ours }

// refProc is one srun of srtctl's, parsed.
type refProc struct {
	name       string // output file base: node002_decode_w0, node001_frontend_0, infra
	nodes      []int
	srun       map[string]string // srun flags beyond placement, flag → value
	env        map[string]string
	unset      []string
	setup      map[string]string // fingerprint, dynamo-install, setup-script
	argv       []string
	benchmarks bool
}

// compareWithSrtctl parses srtctl's sruns and diffs them against plan.
// It returns the differences and the names of the processes compared.
func compareWithSrtctl(t *testing.T, run srtctlRun, pl *plan.Plan) ([]parityDiff, []string) {
	t.Helper()
	index := map[string]int{}
	for i, n := range run.Nodelist {
		index[n] = i
	}
	fill := func(s string) string {
		return fillPlaceholders(s, run)
	}
	var diffs []parityDiff
	var names []string
	used := map[int]bool{}
	for _, call := range run.SrunCalls {
		ref, err := parseSrun(call.Argv, index)
		if err != nil {
			t.Fatalf("parsing srun %q: %v", call.Argv, err)
		}
		if ref.benchmarks {
			// Custom commands and custom-tokenizer SA-Bench run as srtctl
			// runs them (parity_benchmark_test.go); other points run
			// slurmbench's own client.
			if benchmarkCompared(pl) {
				names = append(names, "benchmark")
				diffs = append(diffs, compareBenchmark(t, call.Argv, index, pl, fill)...)
			}
			continue
		}
		if ref.name == "infra" {
			names = append(names, "infra")
			diffs = append(diffs, compareInfra(ref, pl, used, fill)...)
			continue
		}
		if ref.name == modelDownloadName {
			names = append(names, ref.name)
			diffs = append(diffs, compareModelDownload(call.Argv[len(call.Argv)-1], ref, pl, used, fill)...)
			continue
		}
		if m := refStageName.FindStringSubmatch(ref.name); m != nil {
			// srtctl names the staging step by host, slurmbench by index.
			ref.name = stageModelName(index[m[1]])
		}
		label, match := refLabel(ref)
		i := findPlanProcess(pl, match, ref.name, ref.nodes, used)
		names = append(names, label)
		if i < 0 {
			diffs = append(diffs, parityDiff{proc: label, kind: "process", key: "missing", srtctl: strings.Join(ref.argv, " ")})
			continue
		}
		used[i] = true
		diffs = append(diffs, compareProcess(label, ref, pl, pl.Processes[i], fill)...)
	}

	for i, p := range pl.Processes {
		switch p.Role {
		case plan.RoleBenchmark, plan.RoleEval:
			continue
		}
		if !used[i] {
			diffs = append(diffs, parityDiff{proc: p.Name, kind: "process", key: "extra", ours: strings.Join(p.Argv, " ")})
		}
	}
	for i := range diffs {
		diffs[i].frontend = pl.Frontend
	}
	return diffs, names
}

// srtctlJobID is the job id the reference was recorded with.
const srtctlJobID = "424242"

var (
	refWorkerName   = regexp.MustCompile(`^(node\d+)_(prefill|decode|agg)_w(\d+)$`)
	refFrontendName = regexp.MustCompile(`^(node\d+)_(?:frontend|router)_(\d+)$`)
	refNginxName    = regexp.MustCompile(`^(node\d+)_nginx$`)
	refStageName    = regexp.MustCompile(`^stage_model_(node\d+)$`)
	// slurmbenchStageModel is the plan's staging command; the group is its
	// arguments.
	slurmbenchStageModel = regexp.MustCompile(`^/\S*/slurmbench stage-model (.+)$`)
)

type procMatch struct {
	role   plan.Role
	worker int
}

func refLabel(ref refProc) (string, procMatch) {
	if m := refWorkerName.FindStringSubmatch(ref.name); m != nil {
		w, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("%s_w%s@%s", m[2], m[3], m[1]), procMatch{plan.Role(m[2]), w}
	}
	if m := refFrontendName.FindStringSubmatch(ref.name); m != nil {
		w, _ := strconv.Atoi(m[2])
		return "frontend_" + m[2], procMatch{plan.RoleFrontend, w}
	}
	if refNginxName.MatchString(ref.name) {
		return "nginx", procMatch{plan.RoleNginx, 0}
	}
	return ref.name, procMatch{role: "unknown"}
}

// findPlanProcess is the plan's first process not yet matched of that
// role and index whose first node is the reference's first node (a node
// process, an MPI launch's leader, or each per-GPU DP rank in turn), or
// of the reference's name (mooncake_master).
func findPlanProcess(pl *plan.Plan, m procMatch, name string, nodes []int, used map[int]bool) int {
	for i, p := range pl.Processes {
		if used[i] || len(nodes) == 0 || p.Nodes[0] != nodes[0] {
			continue
		}
		if p.Role == m.role && p.Worker == m.worker || m.role == "unknown" && p.Name == name {
			return i
		}
	}
	return -1
}

func fillPlaceholders(s string, run srtctlRun) string {
	return planPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		if m == "{job_id}" {
			return run.JobID
		}
		sub := planPlaceholder.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		if n >= len(run.Nodelist) {
			return m
		}
		if sub[1] == "host" {
			return run.Nodelist[n]
		}
		return run.NodeIPs[run.Nodelist[n]]
	})
}

var planPlaceholder = regexp.MustCompile(`\{(host|ip):(\d+)\}|\{job_id\}`)

func compareProcess(label string, ref refProc, pl *plan.Plan, p plan.Process, fill func(string) string) []parityDiff {
	var diffs []parityDiff
	add := func(kind, key, srtctl, ours string) {
		diffs = append(diffs, parityDiff{proc: label, kind: kind, key: key, srtctl: srtctl, ours: ours})
	}
	argv := make([]string, len(p.Argv))
	for i, a := range p.Argv {
		argv[i] = fill(a)
	}
	for _, d := range diffCommandLines(ref.argv, argv) {
		add(d.kind, d.key, d.srtctl, d.ours)
	}
	env := map[string]string{}
	for k, v := range p.Env {
		env[k] = fill(v)
	}
	for _, k := range profile.SortedKeys(unionKeys(ref.env, env)) {
		if ref.env[k] != env[k] {
			add("env", k, ref.env[k], env[k])
		}
	}
	if a, b := strings.Join(ref.unset, " "), strings.Join(p.Unset, " "); a != b {
		add("unset", "", a, b)
	}
	ours := planSrun(p)
	for _, k := range profile.SortedKeys(unionKeys(ref.srun, ours)) {
		if ref.srun[k] != ours[k] {
			add("srun", k, ref.srun[k], ours[k])
		}
	}
	oursSetup := planSetup(pl, p)
	for _, k := range profile.SortedKeys(unionKeys(ref.setup, oursSetup)) {
		if ref.setup[k] != oursSetup[k] {
			add("setup", k, ref.setup[k], oursSetup[k])
		} else if k != "" {
			// Same content, different mechanism: listed with its reason.
			add("setup", k, ref.setup[k], oursSetup[k]+"")
		}
	}
	return diffs
}

// planSetup describes the plan's setup steps in the reference's terms.
func planSetup(pl *plan.Plan, p plan.Process) map[string]string {
	out := map[string]string{}
	for _, step := range p.Setup {
		switch {
		case len(step) == 2 && step[0] == "bash" && strings.HasPrefix(step[1], "/configs/"):
			out["setup-script"] = strings.TrimPrefix(step[1], "/configs/")
		case len(step) == 6 && step[0] == pl.Binary && step[1] == "dynamo-install":
			out["dynamo-install"] = strings.TrimPrefix(step[4], "--") + " " + step[5]
		default:
			out["unknown: "+strings.Join(step, " ")] = "?"
		}
	}
	return out
}

// planSrun is the plan's srun options in the reference's terms.
func planSrun(p plan.Process) map[string]string {
	out := map[string]string{"--nodes": strconv.Itoa(len(p.Nodes)), "--ntasks": strconv.Itoa(p.Srun.NTasks)}
	if p.Srun.MPI != "" {
		out["--mpi"] = p.Srun.MPI
	}
	if len(p.Srun.Export) > 0 {
		out["--export"] = "ALL," + strings.Join(p.Srun.Export, ",")
	}
	for _, e := range p.Srun.Extra {
		k, v, _ := strings.Cut(e, "=")
		out[k] = v
	}
	return out
}

// compareInfra checks srtctl's setup_head.py step against the plan's NATS
// and etcd steps: same node, same NATS payload limit.
func compareInfra(ref refProc, pl *plan.Plan, used map[int]bool, fill func(string) string) []parityDiff {
	var nats, etcd *plan.Process
	for i := range pl.Processes {
		p := &pl.Processes[i]
		switch p.Name {
		case "infra_nats":
			nats = p
		case "infra_etcd":
			etcd = p
		default:
			continue
		}
		used[i] = true
	}
	if nats == nil || etcd == nil {
		return []parityDiff{{proc: "infra", kind: "process", key: "missing", srtctl: strings.Join(ref.argv, " ")}}
	}
	diffs := []parityDiff{{proc: "infra", kind: "process", key: "infra", srtctl: "setup_head.py", ours: "nats-server+etcd"}}
	if len(ref.argv) < 2 || ref.argv[1] != "/tmp/setup_head.py" {
		diffs = append(diffs, parityDiff{proc: "infra", kind: "program", srtctl: strings.Join(ref.argv, " ")})
	}
	for _, p := range []*plan.Process{nats, etcd} {
		if len(ref.nodes) != 1 || p.Nodes[0] != ref.nodes[0] {
			diffs = append(diffs, parityDiff{proc: "infra", kind: "srun", key: "--nodelist", srtctl: fmt.Sprint(ref.nodes), ours: fmt.Sprint(p.Nodes)})
		}
	}
	// --nats-max-payload-mb M ↔ max_payload M MiB in the plan's nats.conf.
	want := ""
	for i, a := range ref.argv {
		if a == "--nats-max-payload-mb" && i+1 < len(ref.argv) {
			n, _ := strconv.Atoi(ref.argv[i+1])
			want = fmt.Sprintf("max_payload: %d", n*1024*1024)
		}
	}
	got := ""
	for _, content := range nats.Files {
		if strings.HasPrefix(content, "max_payload: ") {
			got = strings.SplitN(content, "\n", 2)[0]
		}
	}
	if want != got {
		diffs = append(diffs, parityDiff{proc: "infra", kind: "flag", key: "--nats-max-payload-mb", srtctl: want, ours: got})
	}
	return diffs
}

// compareModelDownload checks srtctl's model pre-download against the
// plan's step of that name on the same node: srun options, environment,
// and the command, srtctl's `bash -c` text against the plan's script line
// with its arguments filled in as srtctl's shlex.quote writes them.
func compareModelDownload(text string, ref refProc, pl *plan.Plan, used map[int]bool, fill func(string) string) []parityDiff {
	i := findPlanProcess(pl, procMatch{role: "unknown"}, ref.name, ref.nodes, used)
	if i < 0 {
		return []parityDiff{{proc: ref.name, kind: "process", key: "missing", srtctl: text}}
	}
	used[i] = true
	p := pl.Processes[i]
	// Everything but the command, as for any process.
	ref.argv, p.Argv, p.Setup = nil, nil, nil
	diffs := compareProcess(ref.name, ref, pl, p, fill)
	return append(diffs, parityDiff{proc: ref.name, kind: "process", key: modelDownloadName, srtctl: text, ours: modelDownloadCommand(pl.Processes[i])})
}

// modelDownloadCommand is the model_download step's script line with $1
// and $2 replaced by its arguments, shell-quoted as Python's shlex.quote
// does; "" when the step is not `bash /logs/<its script> HF_HOME ID`.
func modelDownloadCommand(p plan.Process) string {
	if len(p.Argv) != 4 || p.Argv[0] != "bash" || !strings.HasPrefix(p.Argv[1], "/logs/") {
		return ""
	}
	var script string
	for path, content := range p.Files {
		if filepath.Base(path) == filepath.Base(p.Argv[1]) {
			script = content
		}
	}
	lines := strings.Split(strings.TrimRight(script, "\n"), "\n")
	line := lines[len(lines)-1]
	return strings.NewReplacer(`"$1"`, pyShlexQuote(p.Argv[2]), `"$2"`, pyShlexQuote(p.Argv[3])).Replace(line)
}

// pyShlexQuote is Python's shlex.quote.
func pyShlexQuote(s string) string {
	if s == "" {
		return "''"
	}
	if !shlexUnsafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

var shlexUnsafe = regexp.MustCompile(`[^\w@%+=:,./-]`)

// cmdLine is a command split into its program (the words before the first
// --flag) and its flags with their values, in order.
type cmdLine struct {
	program []string
	flags   []flagUse
}

type flagUse struct {
	name   string
	values []string
}

func splitCommandLine(argv []string) cmdLine {
	var c cmdLine
	for _, a := range argv {
		switch {
		case strings.HasPrefix(a, "--"):
			name, value, ok := strings.Cut(a, "=")
			f := flagUse{name: name}
			if ok {
				f.values = []string{value}
			}
			c.flags = append(c.flags, f)
		case len(c.flags) == 0:
			c.program = append(c.program, a)
		default:
			last := &c.flags[len(c.flags)-1]
			last.values = append(last.values, a)
		}
	}
	return c
}

// diffCommandLines compares two command lines flag by flag (every use of a
// flag, in order), then the order of the flags both use equally often.
func diffCommandLines(ref, ours []string) []parityDiff {
	a, b := splitCommandLine(ref), splitCommandLine(ours)
	var diffs []parityDiff
	if x, y := strings.Join(a.program, " "), strings.Join(b.program, " "); x != y {
		diffs = append(diffs, parityDiff{kind: "program", srtctl: x, ours: y})
	}
	uses := func(c cmdLine) map[string][]string {
		m := map[string][]string{}
		for _, f := range c.flags {
			v := strings.Join(f.values, " ")
			if len(f.values) == 0 {
				v = "(set)"
			}
			m[f.name] = append(m[f.name], v)
		}
		return m
	}
	ua, ub := uses(a), uses(b)
	differs := map[string]bool{}
	for _, k := range profile.SortedKeys(unionKeys(ua, ub)) {
		x, y := strings.Join(ua[k], " | "), strings.Join(ub[k], " | ")
		if len(ua[k]) != len(ub[k]) || x != y {
			// Order is compared over the flags both use as often.
			differs[k] = len(ua[k]) != len(ub[k])
			if _, ok := ua[k]; !ok {
				x = "(absent)"
			}
			if _, ok := ub[k]; !ok {
				y = "(absent)"
			}
			diffs = append(diffs, parityDiff{kind: "flag", key: k, srtctl: x, ours: y})
		}
	}
	order := func(c cmdLine) string {
		var names []string
		for _, f := range c.flags {
			if !differs[f.name] {
				names = append(names, f.name)
			}
		}
		return strings.Join(names, " ")
	}
	if x, y := order(a), order(b); x != y {
		diffs = append(diffs, parityDiff{kind: "order", srtctl: x, ours: y})
	}
	for i := range diffs {
		diffs[i].proc = "" // the caller names the process
	}
	return diffs
}

func unionKeys[V any](ms ...map[string]V) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			out[k] = true
		}
	}
	return out
}

// srunPlacement are the srun flags that place a step or name its files:
// compared through the node map, or different by design (images, mounts).
var srunPlacement = map[string]bool{
	"--jobid": true, "--nodelist": true, "--output": true, "--container-image": true,
	"--container-mounts": true,
}

var srunBare = map[string]bool{
	"--overlap": true, "--no-container-entrypoint": true, "--no-container-mount-home": true,
}

// parseSrun splits one recorded srun into its flags and its bash -c string.
func parseSrun(argv []string, index map[string]int) (refProc, error) {
	ref := refProc{srun: map[string]string{}, env: map[string]string{}, setup: map[string]string{}}
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "bash" {
			break
		}
		if !strings.HasPrefix(a, "--") {
			return ref, fmt.Errorf("unexpected srun word %q", a)
		}
		name, value, hasValue := strings.Cut(a, "=")
		takesValue := !hasValue && !srunBare[name] && name != "--oversubscribe" && name != "--container-remap-root" && !strings.HasPrefix(name, "--mem")
		if takesValue {
			if i+1 >= len(argv) {
				return ref, fmt.Errorf("srun flag %s without value", name)
			}
			value = argv[i+1]
			i++
		}
		switch {
		case name == "--output":
			ref.name = strings.TrimSuffix(filepath.Base(value), ".out")
		case name == "--nodelist":
			for _, n := range strings.Split(value, ",") {
				idx, ok := index[n]
				if !ok {
					return ref, fmt.Errorf("unknown node %q", n)
				}
				ref.nodes = append(ref.nodes, idx)
			}
		case srunPlacement[name], srunBare[name]:
		default:
			ref.srun[name] = value
		}
	}
	if i+3 != len(argv) || argv[i+1] != "-c" {
		return ref, fmt.Errorf("want `bash -c <string>` at the end")
	}
	if ref.name == "benchmark" {
		ref.benchmarks = true
		return ref, nil
	}
	// The recorder wrote the random EPLB name as "<uuid4hex>", which a
	// shell would read as redirections.
	parts, err := bashParts(strings.ReplaceAll(argv[i+2], "<uuid4hex>", uuidMarker))
	if err != nil {
		return ref, err
	}
	for n, part := range parts {
		words := part.words()
		last := n == len(parts)-1
		switch {
		case last:
			ref.argv = words
		case len(words) == 2 && words[0] == "export":
			k, v, ok := strings.Cut(words[1], "=")
			if !ok {
				return ref, fmt.Errorf("export without '=': %q", part.text)
			}
			ref.env[k] = strings.ReplaceAll(v, uuidMarker, "<uuid4hex>")
		case len(words) >= 2 && words[0] == "unset" && words[1] == "--":
			// What the engine sees: exported, then removed.
			for _, k := range words[2:] {
				delete(ref.env, k)
			}
			ref.unset = append(ref.unset, words[2:]...)
		case strings.Contains(part.text, "__FINGERPRINT_EOF__"):
			ref.setup["fingerprint"] = "capture"
		case strings.HasPrefix(part.text, "DYN_LOCK_DIR="):
			// The install's lock directory; the next part is the install.
		case strings.Contains(part.text, "srtctl_dynamo_install"):
			src, err := srtctlDynamoSource(part.text)
			if err != nil {
				return ref, err
			}
			ref.setup["dynamo-install"] = src
		case len(words) == 1 && strings.HasPrefix(words[0], "setup_script="):
			ref.setup["setup-script"] = strings.TrimPrefix(words[0], "setup_script=")
		case strings.Contains(part.text, "script_path") || strings.HasPrefix(part.text, "echo \"Running setup script"):
			// The rest of srtctl's setup-script runner.
		default:
			return ref, fmt.Errorf("unclassified preamble part %q", part.text)
		}
	}
	return ref, nil
}

const uuidMarker = "UUID4HEX"

var (
	srtctlHashInstall    = regexp.MustCompile(`Installing dynamo from source \(([0-9a-f]+),`)
	srtctlWheelInstall   = regexp.MustCompile(`from wheel ai_dynamo-(.+?)-py3-none-any\.whl`)
	srtctlVersionInstall = regexp.MustCompile(`Installing dynamo ([0-9][^ ']*?)\.\.\.`)
)

// srtctlDynamoSource reads what srtctl's install command installs.
func srtctlDynamoSource(text string) (string, error) {
	if m := srtctlHashInstall.FindStringSubmatch(text); m != nil {
		return "hash " + m[1], nil
	}
	if m := srtctlWheelInstall.FindStringSubmatch(text); m != nil {
		return "wheel " + m[1], nil
	}
	if m := srtctlVersionInstall.FindStringSubmatch(text); m != nil {
		return "version " + m[1], nil
	}
	return "", fmt.Errorf("unrecognised dynamo install %.200q", text)
}

// shToken is a word (unquoted) or an operator of a bash string.
type shToken struct {
	word, op   string
	start, end int
}

// bashPart is one `&&`-separated command of a bash string at the top level.
type bashPart struct {
	text   string
	tokens []shToken
}

func (p bashPart) words() []string {
	var out []string
	for _, t := range p.tokens {
		if t.op == "" {
			out = append(out, t.word)
		}
	}
	return out
}

// bashParts splits srtctl's `bash -c` string at its top-level `&&` (not
// inside parentheses), with shell quoting removed from the words. Heredoc
// bodies (the fingerprint script) are cut out first.
func bashParts(s string) ([]bashPart, error) {
	s = cutHeredocs(s)
	toks, err := shTokens(s)
	if err != nil {
		return nil, err
	}
	var parts []bashPart
	depth, from := 0, 0
	flush := func(to int) {
		if to > from {
			parts = append(parts, bashPart{text: s[toks[from].start:toks[to-1].end], tokens: toks[from:to]})
		}
		from = to + 1
	}
	for i, t := range toks {
		switch t.op {
		case "(":
			depth++
		case ")":
			depth--
		case "&&":
			if depth == 0 {
				flush(i)
			}
		}
		if depth < 0 {
			return nil, fmt.Errorf("unbalanced parentheses in %.80q", s)
		}
	}
	flush(len(toks))
	return parts, nil
}

func cutHeredocs(s string) string {
	for {
		i := strings.Index(s, "<<'")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i+3:], "'")
		if j < 0 {
			return s
		}
		delim := s[i+3 : i+3+j]
		bodyStart := i + 3 + j + 1
		end := strings.Index(s[bodyStart:], "\n"+delim+"\n")
		if end < 0 {
			return s
		}
		// Keep the marker as a plain word so the part is recognisable.
		s = s[:i] + delim + s[bodyStart+end+len(delim)+1:]
	}
}

// shTokens tokenizes a bash string: words with quotes and backslashes
// resolved, and the operators that matter for splitting.
func shTokens(s string) ([]shToken, error) {
	var toks []shToken
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case strings.HasPrefix(s[i:], "&&") || strings.HasPrefix(s[i:], "||"):
			toks = append(toks, shToken{op: s[i : i+2], start: i, end: i + 2})
			i += 2
		case strings.ContainsRune(";()|<>&", rune(c)):
			toks = append(toks, shToken{op: string(c), start: i, end: i + 1})
			i++
		default:
			start := i
			var w strings.Builder
			for i < len(s) && !strings.ContainsRune(" \t\n;()|<>&", rune(s[i])) {
				switch s[i] {
				case '\'':
					j := strings.IndexByte(s[i+1:], '\'')
					if j < 0 {
						return nil, fmt.Errorf("unterminated ' at %d", i)
					}
					w.WriteString(s[i+1 : i+1+j])
					i += j + 2
				case '"':
					i++
					for i < len(s) && s[i] != '"' {
						if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
							w.WriteByte(s[i+1])
							i += 2
							continue
						}
						w.WriteByte(s[i])
						i++
					}
					if i >= len(s) {
						return nil, fmt.Errorf("unterminated \" at %d", start)
					}
					i++
				case '\\':
					if i+1 < len(s) {
						w.WriteByte(s[i+1])
					}
					i += 2
				default:
					w.WriteByte(s[i])
					i++
				}
			}
			toks = append(toks, shToken{word: w.String(), start: start, end: i})
		}
	}
	return toks, nil
}
