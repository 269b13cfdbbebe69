package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
	"github.com/slurmbench/slurmbench/launcher/login/workflow"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// laneRunners are built records: two clusters with rows in InferenceX's
// lane tables (gb200-nv with its wheels volume and shared run root; one
// gb300-nv without the wheels volume its lane never mounts) and one
// without (mine).
const laneRunners = `labels:
  cluster:gb200-nv: [gb200-nv_00]
  cluster:b200-nscale: [b200-nscale_00]
  cluster:mine: [mine_00]
clusters:
  gb200-nv:
    gpus-per-node: 4
    arch: aarch64
    scheduler: slurm
    slurm:
      partition: p
      exclusive: true
      volumes:
        dynamo-wheels: {path: /srv/wheels}
      srt-slurm:
        network-interface: eth0
        shared-run-root: /srv/runs
  b200-nscale:
    gpus-per-node: 8
    arch: x86_64
    scheduler: slurm
    slurm:
      partition: p
      exclusive: true
      volumes: {}
      srt-slurm:
        network-interface: eth0
  mine:
    gpus-per-node: 8
    arch: x86_64
    scheduler: slurm
    slurm:
      partition: p
      exclusive: true
      volumes:
        hf-hub-cache: {path: /srv/hf}
      srt-slurm:
        network-interface: eth0
        agentic-volume-mounts: {hf-hub-cache: /agentx_hf}
`

func lanePoint(prefix, prec, fw string, agentic, multi bool) master.MatrixPoint {
	mp := master.MatrixPoint{Key: prefix + "-" + fw, ModelPrefix: prefix, Precision: prec, Framework: fw, Model: "org/" + prefix,
		SpecDecoding: "none", Multinode: multi, Scenario: master.FixedSeqLen, Conc: []int{4, 8}}
	if agentic {
		mp.Scenario = master.AgenticCoding
	}
	if !multi {
		mp.Conc = []int{64}
	}
	return mp
}

// TestDecideLane: a point gets its cluster's lane as the workflow's launch
// of its row does — refused where the lane refuses it, else the lane's
// edits, mounts and a key that tells allocations apart.
func TestDecideLane(t *testing.T) {
	inv, err := runners.Parse("runners.yaml", []byte(laneRunners), runners.Options{Home: "/home/r"})
	if err != nil {
		t.Fatal(err)
	}
	evalOnly := func(mp master.MatrixPoint) master.MatrixPoint { mp.EvalOnly = true; return mp }
	for _, tc := range []struct {
		name    string
		cluster string
		mp      master.MatrixPoint
		noLane  bool
		refused string
		edits   string
		mounts  string
		key     string
	}{
		{name: "gb200-nv dynamo-sglang: torchao", cluster: "gb200-nv", mp: lanePoint("dsr1", "fp8", "dynamo-sglang", false, true),
			edits: "--set setup_script=install-torchao.sh", key: "srt-multi;setup=install-torchao.sh;mounts="},
		{name: "gb200-nv glm5.2 fp4 sglang AgentX: the wheels mount", cluster: "gb200-nv", mp: lanePoint("glm5.2", "fp4", "dynamo-sglang", true, true),
			edits: "--set setup_script=install-torchao.sh", mounts: "/srv/wheels:/configs/dynamo-wheels",
			key: "srt-multi;setup=install-torchao.sh;mounts=/srv/wheels:/configs/dynamo-wheels"},
		{name: "gb200-nv glm5.2 fp4 sglang fixed-sequence: no wheels", cluster: "gb200-nv", mp: lanePoint("glm5.2", "fp4", "dynamo-sglang", false, true),
			edits: "--set setup_script=install-torchao.sh", key: "srt-multi;setup=install-torchao.sh;mounts="},
		{name: "gb200-nv refuses vllm", cluster: "gb200-nv", mp: lanePoint("dsr1", "fp8", "vllm", false, true),
			refused: "Unsupported framework: vllm. Supported frameworks are: dynamo-sglang, dynamo-trt, dynamo-vllm"},
		{name: "b200-nscale refuses multinode dsv4 on trt", cluster: "b200-nscale", mp: lanePoint("dsv4", "fp4", "dynamo-trt", false, true),
			refused: "multinode dsv4 supports only dynamo-vllm"},
		{name: "b200-nscale dsv4 vllm: its native lane", cluster: "b200-nscale", mp: lanePoint("dsv4", "fp4", "dynamo-vllm", false, true),
			key: "srt-native;setup=;mounts="},
		{name: "b200-nscale eval-only: refused as its benchmark", cluster: "b200-nscale", mp: evalOnly(lanePoint("dsv4", "fp8", "dynamo-sglang", true, true)),
			refused: "multinode dsv4 supports only dynamo-vllm"},
		{name: "b200-nscale dsv4 fp4 sglang: native, not refused", cluster: "b200-nscale", mp: evalOnly(lanePoint("dsv4", "fp4", "dynamo-sglang", true, true)),
			key: "srt-native;setup=;mounts="},
		{name: "single-node: no lane refuses it", cluster: "gb200-nv", mp: lanePoint("dsr1", "fp8", "sglang", false, false), key: "srt-single;setup=;mounts="},
		{name: "a cluster outside the table: no row", cluster: "mine", mp: lanePoint("dsr1", "fp8", "vllm", false, true), key: "srt-multi;setup=;mounts="},
		{name: "a cluster outside the table: an AgentX job's agentic mounts", cluster: "mine", mp: lanePoint("dsr1", "fp8", "vllm", true, true),
			mounts: "/srv/hf:/agentx_hf", key: "srt-multi;setup=;mounts=/srv/hf:/agentx_hf"},
		{name: "no record (no runners.yaml): no lane", mp: lanePoint("dsr1", "fp8", "vllm", false, true), noLane: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec *runners.Cluster
			if tc.cluster != "" {
				rec = inv.Clusters[tc.cluster]
			}
			pl, err := decideLane(rec, tc.mp, 0)
			if err != nil {
				t.Fatal(err)
			}
			if tc.noLane {
				if pl != nil || pl.key() != "" {
					t.Fatalf("lane %+v without a record", pl)
				}
				return
			}
			var refused *srtlanes.RefusedError
			if tc.refused != "" {
				if !errors.As(pl.Refusal, &refused) || !strings.Contains(pl.Refusal.Error(), tc.refused) || !strings.Contains(pl.Refusal.Error(), "cluster "+tc.cluster) {
					t.Fatalf("refusal %v, want one of cluster %s naming %q", pl.Refusal, tc.cluster, tc.refused)
				}
				return
			}
			if pl.Refusal != nil {
				t.Fatalf("refused: %v", pl.Refusal)
			}
			var edits []string
			for _, o := range pl.Overrides {
				edits = append(edits, o.String())
			}
			if got := strings.Join(edits, " "); got != tc.edits {
				t.Errorf("edits %q, want %q", got, tc.edits)
			}
			if got := strings.Join(pl.Mounts, " "); got != tc.mounts {
				t.Errorf("mounts %q, want %q", got, tc.mounts)
			}
			if got := pl.key(); got != tc.key {
				t.Errorf("key %q, want %q", got, tc.key)
			}
		})
	}
}

// TestLaneRequestIsTheWorkflows: the request the matrix hands the lane
// rules for a point is the one the workflow's run reads from the variables
// InferenceX's workflow passes for that row (workflow.LaneRequest).
func TestLaneRequestIsTheWorkflows(t *testing.T) {
	withEval := func(mp master.MatrixPoint, run, only bool) master.MatrixPoint {
		mp.RunEval, mp.EvalOnly = run, only
		return mp
	}
	spec := func(mp master.MatrixPoint) master.MatrixPoint { mp.SpecDecoding = "mtp"; return mp }
	for _, tc := range []struct {
		name   string
		mp     master.MatrixPoint
		salloc string
	}{
		{"multi-node fixed-sequence", lanePoint("dsr1", "fp8", "dynamo-sglang", false, true), ""},
		{"multi-node AgentX with mtp", spec(lanePoint("glm5.2", "fp4", "dynamo-sglang", true, true)), "240"},
		{"multi-node run-eval", withEval(lanePoint("dsr1", "fp4", "dynamo-trt", false, true), true, false), "90"},
		{"multi-node eval-only", withEval(lanePoint("dsv4", "fp4", "dynamo-trt", true, true), false, true), ""},
		{"single-node: CONC", lanePoint("dsv41flash", "fp4", "sglang", true, false), "180"},
		{"single-node eval-only", withEval(lanePoint("dsr1", "fp8", "sglang", false, false), false, true), "30"},
		{"SALLOC_TIME_LIMIT not a positive integer", lanePoint("dsr1", "fp8", "sglang", false, false), "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := tc.mp
			env := map[string]string{
				"RUNNER_NAME": "r_00", "GITHUB_WORKSPACE": "/ws", "IMAGE": "img", "FRAMEWORK": mp.Framework, "MODEL_PREFIX": mp.ModelPrefix,
				"PRECISION": mp.Precision, "SPEC_DECODING": mp.SpecDecoding, "RESULT_FILENAME": "res", "MODEL": mp.Model,
				"IS_AGENTIC": "0", "RUN_EVAL": strconv.FormatBool(mp.RunEval), "EVAL_ONLY": strconv.FormatBool(mp.EvalOnly),
				"IS_MULTINODE": strconv.FormatBool(mp.Multinode), "SRT_RECIPE": "r.yaml", "THINKING_MODE": "on",
			}
			if mp.Scenario == master.AgenticCoding {
				env["IS_AGENTIC"] = "1"
			}
			if tc.salloc != "" {
				env["SALLOC_TIME_LIMIT"] = tc.salloc
			}
			if !mp.Multinode {
				env["CONC"] = strconv.Itoa(mp.Conc[0])
				for _, k := range []string{"ISL", "OSL", "TP", "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "EP_SIZE", "GPU_COUNT"} {
					env[k] = "1"
				}
				for _, k := range []string{"DP_ATTENTION", "RANDOM_RANGE_RATIO", "GPU_MONITOR_INTERVAL", "HF_HUB_CACHE"} {
					env[k] = "x"
				}
				if tc.salloc == "" {
					env["SALLOC_TIME_LIMIT"] = "60"
				}
			}
			var environ []string
			for k, v := range env {
				environ = append(environ, k+"="+v)
			}
			r, err := workflow.ParseRequest(workflow.EnvOf(environ))
			if err != nil {
				t.Fatal(err)
			}
			want := workflow.LaneRequest(r)
			if got := LaneRequest(mp, SallocTimeLimit(env["SALLOC_TIME_LIMIT"])); got != want {
				t.Errorf("matrix's request\n%+v\nthe workflow's\n%+v", got, want)
			}
		})
	}
}

// TestTopologyKeyLane: points that share an entry, cluster, image, model
// and nodes share an allocation only where the lane gives them the same
// time limit, mounts and setup script (the job is submitted with the
// first point's).
func TestTopologyKeyLane(t *testing.T) {
	lane := func(path srtlanes.Path, script string, mounts ...string) *pointLane {
		pl := &pointLane{Launch: srtlanes.Launch{Path: path}, Mounts: mounts}
		if script != "" {
			pl.Launch.Lane = &srtlanes.Lane{SetupScripts: map[string]string{"f": script}}
			pl.Launch.Request.Framework = "f"
		}
		return pl
	}
	point := func(minutes int, pl *pointLane) *Point {
		p := &Point{MatrixPoint: master.MatrixPoint{Key: "e", Cluster: "c", Row: map[string]any{}, Multinode: true, Conc: []int{1}}, lane: pl}
		p.Plan = &plan.Plan{Slurm: plan.Slurm{Partition: "p", Nodes: 2, GPUsPerNode: 4, TimeLimitMinutes: minutes}}
		return p
	}
	base := lane(srtlanes.SrtMulti, "s.sh", "/a:/b", "/c:/d")
	for _, tc := range []struct {
		name   string
		second *Point
		shared bool
	}{
		{"the same lane and limit: one allocation", point(240, lane(srtlanes.SrtMulti, "s.sh", "/a:/b", "/c:/d")), true},
		{"mounts in another order: the same", point(240, lane(srtlanes.SrtMulti, "s.sh", "/c:/d", "/a:/b")), true},
		{"another time limit (the lane's long limit)", point(480, base), false},
		{"another mount (an AgentX row's wheels cache)", point(240, lane(srtlanes.SrtMulti, "s.sh", "/a:/b", "/c:/d", "/w:/configs/dynamo-wheels")), false},
		{"another setup script", point(240, lane(srtlanes.SrtMulti, "t.sh", "/a:/b", "/c:/d")), false},
		{"no lane against a lane", point(240, nil), false},
		{"another path (the native lane)", point(240, lane(srtlanes.SrtNative, "s.sh", "/a:/b", "/c:/d")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := groupByTopology([]*Point{point(240, base), tc.second}, DefaultEstimates)
			if shared := len(gs) == 1; shared != tc.shared {
				t.Errorf("%d allocations (keys %q, %q), want shared %v", len(gs), topologyKey(point(240, base)), topologyKey(tc.second), tc.shared)
			}
		})
	}
}

// TestComposerLanes composes points of a copy of the sample tree whose
// master moves one b200-nscale entry to a model prefix its lane refuses
// (dsv4 on dynamo-trt) beside a gb200-nv dynamo-sglang entry (its lane's
// torchao setup script). --plan plans both as InferenceX's generator lists
// them and notes the refusal; a run lists the refused points not planned
// for the lane's reason and submits nothing, and plans the gb200-nv
// points with the lane's setup script from the staged /configs — refused
// for it until the tree holds it.
func TestComposerLanes(t *testing.T) {
	sample := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	root := filepath.Join(t.TempDir(), "inferencex-e2e")
	if err := os.CopyFS(root, os.DirFS(sample)); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(root, "configs", "nvidia-master.yaml")
	data, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	const refusedKey, torchaoKey = "dsr1-fp4-b200-dynamo-trt", "dsr1-fp8-gb200-dynamo-sglang"
	head := refusedKey + ":\n"
	i := strings.Index(string(data), head)
	j := strings.Index(string(data)[i:], "  model-prefix: dsr1\n")
	if i < 0 || j < 0 {
		t.Fatalf("the sample's master has no %s with model-prefix dsr1", refusedKey)
	}
	data = []byte(string(data)[:i+j] + "  model-prefix: dsv4\n" + string(data)[i+j+len("  model-prefix: dsr1\n"):])
	if err := os.WriteFile(mpath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(planOnly bool) (*Matrix, Options) {
		t.Helper()
		o := todayOptions(root)
		o.Selection.Keys = []string{refusedKey, torchaoKey}
		o.PlanOnly, o.StageDir = planOnly, t.TempDir()
		if !planOnly {
			o.Workspace = root
		}
		o.Compose = Composer(o)
		m, err := Build(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return m, o
	}
	runsTorchao := func(p *Point) bool {
		for _, proc := range p.Plan.Processes {
			for _, step := range proc.Setup {
				if strings.HasSuffix(strings.Join(step, " "), "/configs/install-torchao.sh") {
					return true
				}
			}
		}
		return false
	}

	m, o := build(true)
	refused, torchao := 0, 0
	for _, p := range m.Points {
		switch p.Key {
		case refusedKey:
			if p.Plan == nil || p.LaunchRefusal == nil || !strings.Contains(p.LaunchRefusal.Error(), "cluster b200-nscale, srt-multi lane") ||
				!strings.Contains(p.LaunchRefusal.Error(), "multinode dsv4 supports only dynamo-vllm") {
				t.Fatalf("--plan %s: plan %v (%v), launch refusal %v; want planned, its refusal noted", p.Name(), p.Plan != nil, p.NoPlan, p.LaunchRefusal)
			}
			refused++
		case torchaoKey:
			if p.Plan == nil || p.LaunchRefusal != nil || !runsTorchao(p) {
				t.Fatalf("--plan %s: plan %v (%v), refusal %v; want planned running the lane's install-torchao.sh", p.Name(), p.Plan != nil, p.NoPlan, p.LaunchRefusal)
			}
			po := planOptions(o, p)
			if po.Lane == nil || po.Lane.Framework != "dynamo-sglang" || len(po.Overrides) == 0 ||
				po.Overrides[len(po.Overrides)-1].String() != "--set setup_script=install-torchao.sh" {
				t.Errorf("%s: a run's plan options lack the lane (%v, %v)", p.Name(), po.Lane, po.Overrides)
			}
			torchao++
		}
	}
	if refused == 0 || torchao == 0 {
		t.Fatalf("%d refused and %d torchao points", refused, torchao)
	}
	var out bytes.Buffer
	if err := PrintPlan(&out, m); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"a launch refuses [" + ReasonLane + "]: " + refusedKey + "#0(8k1k) (line ",
		fmt.Sprintf("of the planned, %d a launch refuses (%s", refused, ReasonLane),
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("--plan lacks %q:\n%s", s, out.String())
		}
	}
	if j := m.JSON(); j.LaunchRefused != refused || j.Unplanned != 0 {
		t.Errorf("--plan --json: launch_refused %d, unplanned %d; want %d and 0", j.LaunchRefused, j.Unplanned, refused)
	}

	// A run: the lane's refusals are not planned; the torchao points
	// need the script in the tree's /configs.
	m, _ = build(false)
	for _, p := range m.Points {
		want := ReasonLane
		if p.Key == torchaoKey {
			want = ReasonNoPlan
			if p.NoPlan == nil || !strings.Contains(p.NoPlan.Error(), "install-torchao.sh") {
				t.Errorf("run %s: %v; want refused for the lane's missing setup script", p.Name(), p.NoPlan)
			}
		}
		if p.Plan != nil || p.Err != nil || noPlanReason(p) != want {
			t.Errorf("run %s: plan %v, err %v, no plan %v; want not planned: %s", p.Name(), p.Plan != nil, p.Err, p.NoPlan, want)
		}
	}
	if rc := refusalCounts(m.Points); len(rc) != 2 || rc[0][0] != ReasonLane || rc[0][1] != strconv.Itoa(refused) {
		t.Errorf("refusal counts %v; want %d %q first", rc, refused, ReasonLane)
	}
	script := filepath.Join(root, "benchmarks", "multi_node", "srt-slurm-recipes", "configs", "install-torchao.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("pip install torchao\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, o = build(false)
	for _, p := range m.Points {
		if p.Key == torchaoKey && (p.Plan == nil || !runsTorchao(p)) {
			t.Errorf("run %s with the script staged: plan %v (%v)", p.Name(), p.Plan != nil, p.NoPlan)
		}
	}
	var stderr bytes.Buffer
	o.Stderr = &stderr
	err = Run(context.Background(), o)
	if exitcode.Of(err) != exitcode.Config || !strings.Contains(fmtErr(err), fmt.Sprintf("%d of %d points cannot be planned", refused, len(m.Points))) ||
		!strings.Contains(stderr.String(), "not planned ["+ReasonLane+"]: "+refusedKey+"#0(8k1k)") {
		t.Errorf("run: %v\n%s", err, stderr.String())
	}
}

// TestRealVerification: an eval-only point whose lane verifies for real
// binds a copy of its TRT-LLM recipe from the multi-node mirror without the
// forced-acceptance lines; every other point binds its recipe as it is.
func TestRealVerification(t *testing.T) {
	root := t.TempDir()
	const forced = "environment:\n  TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: \"3\"\n  KEEP: \"1\"\n"
	write := func(rel string) string {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(forced), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trt := write(multinodeRecipes + "/dsv4/trtllm/gb300/agentx.yaml")
	sgl := write(multinodeRecipes + "/dsv4/sglang/gb300/agentx.yaml")
	outside := write("elsewhere/trtllm/x.yaml")
	point := func(evalOnly bool) master.MatrixPoint {
		mp := lanePoint("dsv4", "fp4", "dynamo-trt", true, true)
		mp.EvalOnly = evalOnly
		return mp
	}
	for _, tc := range []struct {
		name, cluster, file string
		mp                  master.MatrixPoint
		stripped            bool
	}{
		{"gb300-nv trt AgentX eval-only: stripped", "gb300-nv", trt, point(true), true},
		{"its benchmark: as it is", "gb300-nv", trt, point(false), false},
		{"a recipe outside */trtllm/*", "gb300-nv", sgl, point(true), false},
		{"a file outside the mirror", "gb300-nv", outside, point(true), false},
		{"a lane without real verification", "gb200-nv", trt, point(true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := LaneRequest(tc.mp, 0)
			pl := &pointLane{Request: req, Launch: srtlanes.InferenceX.Decide(tc.cluster, req)}
			dir := t.TempDir()
			got, err := realVerification(context.Background(), pl, root, tc.file, dir)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.stripped {
				if got != tc.file {
					t.Errorf("bound from %s, want %s as it is", got, tc.file)
				}
				return
			}
			rel, _ := filepath.Rel(filepath.Join(root, multinodeRecipes), tc.file)
			if want := filepath.Join(dir, "real-verification", rel); got != want {
				t.Errorf("bound from %s, want %s", got, want)
			}
			data, err := os.ReadFile(got)
			if err != nil || string(data) != "environment:\n  KEEP: \"1\"\n" {
				t.Errorf("stripped copy %q (%v)", data, err)
			}
		})
	}
}

// TestLaneCreatesMountHosts: before a matrix allocation is submitted, the
// host directories of its job's volumes are created as the workflow's run
// creates them — the lane's wheels cache of a gb200-nv glm5.2 fp4 sglang
// AgentX point, opened to every user; nothing for a point whose job does
// not mount it.
func TestLaneCreatesMountHosts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		agentic bool
		want    bool
	}{
		{"AgentX: created, world-writable", true, true},
		{"fixed-sequence: not mounted, not created", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wheels := filepath.Join(t.TempDir(), "wheels")
			rec := fmt.Sprintf(`labels:
  cluster:gb200-nv: [gb200-nv_00]
clusters:
  gb200-nv:
    gpus-per-node: 4
    arch: aarch64
    scheduler: slurm
    slurm:
      partition: p
      exclusive: true
      volumes:
        dynamo-wheels: {path: %q}
      srt-slurm:
        network-interface: eth0
        shared-run-root: /srv/runs
`, wheels)
			inv, err := runners.Parse("runners.yaml", []byte(rec), runners.Options{Home: "/home/r"})
			if err != nil {
				t.Fatal(err)
			}
			pl, err := decideLane(inv.Clusters["gb200-nv"], lanePoint("glm5.2", "fp4", "dynamo-sglang", tc.agentic, true), 0)
			if err != nil || pl.Refusal != nil {
				t.Fatal(err, pl.Refusal)
			}
			if err := pl.createMountHosts(); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(wheels)
			if tc.want != (err == nil) {
				t.Fatalf("stat %s: %v, want created %v", wheels, err, tc.want)
			}
			if tc.want && st.Mode().Perm() != 0o777 {
				t.Errorf("%s mode %v, want world-writable", wheels, st.Mode().Perm())
			}
		})
	}
}
