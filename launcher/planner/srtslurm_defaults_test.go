package planner

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// TestSrtslurmDefaults: the cluster-wide srtslurm.yaml values a profile
// carries (a runners.yaml record's, its srt-slurm.extra's) reach the plan
// as srtctl applies them, and a recipe's own value wins where srtctl lets
// it.
func TestSrtslurmDefaults(t *testing.T) {
	telemetryOn := func(s string) string {
		return strings.Replace(s, "benchmark:", "telemetry: {enabled: true}\nbenchmark:", 1)
	}
	ownExporter := func(s string) string {
		return strings.Replace(s, "benchmark:", "telemetry: {enabled: true, dcgm_exporter: {container_image: own-exporter, port: 9500}}\nbenchmark:", 1)
	}
	clusterExporter := func(p *profile.Profile) {
		p.Telemetry.ExporterImage, p.Telemetry.Port = "nvcr.io#nvidia/k8s/dcgm-exporter:4.6.0", 9402
		p.Telemetry.ExporterCommand = "dcgm-exporter --collect-interval=1000 --address :{port} -f /configs/dcgm-counters-noprof.csv"
	}
	for _, c := range []struct {
		name   string
		recipe func(string) string // edits trtllmRecipeV2
		prof   func(p *profile.Profile)
		check  func(pl *plan.Plan) string
	}{
		{name: "the cluster's exporter, command too, for a block without one", recipe: telemetryOn, prof: clusterExporter,
			check: func(pl *plan.Plan) string {
				if tl := pl.Telemetry; tl == nil || tl.Port != 9402 || tl.ExporterImage != "nvcr.io#nvidia/k8s/dcgm-exporter:4.6.0" ||
					tl.ExporterCommand != "dcgm-exporter --collect-interval=1000 --address :9402 -f /configs/dcgm-counters-noprof.csv" {
					return fmt.Sprintf("telemetry %+v", pl.Telemetry)
				}
				return ""
			}},
		{name: "an exporter reading /configs without paths.configs is warned of", recipe: telemetryOn, prof: clusterExporter,
			check: func(pl *plan.Plan) string {
				for _, w := range pl.Recipe.Warnings {
					if strings.Contains(w, "reads /configs, and nothing is mounted there") {
						return ""
					}
				}
				return fmt.Sprintf("warnings %q", pl.Recipe.Warnings)
			}},
		{name: "with paths.configs, no warning", recipe: telemetryOn, prof: func(p *profile.Profile) {
			clusterExporter(p)
			p.Paths.Configs = "/shared/configs"
		}, check: func(pl *plan.Plan) string {
			for _, w := range pl.Recipe.Warnings {
				if strings.Contains(w, "/configs") {
					return fmt.Sprintf("warning %q", w)
				}
			}
			return ""
		}},
		{name: "a recipe's exporter takes srtctl's command, not the cluster's", recipe: ownExporter, prof: clusterExporter,
			check: func(pl *plan.Plan) string {
				if tl := pl.Telemetry; tl == nil || tl.Port != 9500 || tl.ExporterImage != "own-exporter" || tl.ExporterCommand != "dcgm-exporter --collect-interval=100 --address :9500" {
					return fmt.Sprintf("telemetry %+v", pl.Telemetry)
				}
				return ""
			}},
		{name: "segment: the job's node count", prof: func(p *profile.Profile) { p.Slurm.SegmentDirective = yes() },
			check: func(pl *plan.Plan) string {
				if got := pl.Slurm.Directives["segment"]; got != strconv.Itoa(pl.Nodes) || pl.Nodes != 3 {
					return fmt.Sprintf("segment %q on %d nodes", got, pl.Nodes)
				}
				return ""
			}},
		{name: "segment: the profile's directive wins", prof: func(p *profile.Profile) {
			p.Slurm.SegmentDirective = yes()
			p.Slurm.Directives = map[string]string{"segment": "1"}
		}, check: func(pl *plan.Plan) string {
			if got := pl.Slurm.Directives["segment"]; got != "1" {
				return fmt.Sprintf("segment %q", got)
			}
			return ""
		}},
		{name: "segment off", prof: func(p *profile.Profile) { p.Slurm.SegmentDirective = no() },
			check: func(pl *plan.Plan) string {
				if got, ok := pl.Slurm.Directives["segment"]; ok {
					return fmt.Sprintf("segment %q", got)
				}
				return ""
			}},
		{name: "no --gpus-per-node", prof: func(p *profile.Profile) { p.Slurm.GPUsPerNodeDirective = no() },
			check: func(pl *plan.Plan) string {
				if !pl.Slurm.NoGPUsPerNode || pl.Slurm.GPUsPerNode != 4 {
					return fmt.Sprintf("slurm %+v", pl.Slurm)
				}
				return ""
			}},
		{name: "the network interface reaches the plan", prof: func(p *profile.Profile) { p.Slurm.NetworkInterface = "eno0,eth1" },
			check: func(pl *plan.Plan) string {
				if pl.Slurm.NetworkInterface != "eno0,eth1" {
					return fmt.Sprintf("slurm.network_interface %q", pl.Slurm.NetworkInterface)
				}
				return ""
			}},
		{name: "no network interface: DNS", check: func(pl *plan.Plan) string {
			if pl.Slurm.NetworkInterface != "" {
				return fmt.Sprintf("slurm.network_interface %q", pl.Slurm.NetworkInterface)
			}
			return ""
		}},
		{name: "--gpus-per-node by default", check: func(pl *plan.Plan) string {
			if pl.Slurm.NoGPUsPerNode {
				return "no --gpus-per-node"
			}
			return ""
		}},
		{name: "ROCm's GPU mask", prof: func(p *profile.Profile) { p.Defaults.VisibleDevicesEnv = "ROCR_VISIBLE_DEVICES" },
			check: func(pl *plan.Plan) string {
				pre := processNamed(pl, "prefill_w0")
				if _, cuda := pre.Env["CUDA_VISIBLE_DEVICES"]; pre.Env["ROCR_VISIBLE_DEVICES"] != "0,1" || cuda {
					return fmt.Sprintf("prefill env %v", pre.Env)
				}
				return ""
			}},
		{name: "the cluster's gpu_type binds NUMA", recipe: func(s string) string { return strings.Replace(s, "gpu_type: gb300, ", "", 1) },
			prof: func(p *profile.Profile) { p.Defaults.GPUType = "gb200" },
			check: func(pl *plan.Plan) string {
				if argv := processNamed(pl, "prefill_w0").Argv; argv[0] != "numactl" {
					return fmt.Sprintf("prefill argv %q", argv)
				}
				return ""
			}},
		{name: "without a gpu_type anywhere no NUMA binding", recipe: func(s string) string { return strings.Replace(s, "gpu_type: gb300, ", "", 1) },
			check: func(pl *plan.Plan) string {
				if argv := processNamed(pl, "prefill_w0").Argv; argv[0] == "numactl" {
					return fmt.Sprintf("prefill argv %q", argv)
				}
				return ""
			}},
		{name: "the bash preamble before every container command but the exporter's", recipe: telemetryOn,
			prof: func(p *profile.Profile) {
				clusterExporter(p)
				p.Defaults.BashPreamble = "ulimit -n 1048576"
			},
			check: func(pl *plan.Plan) string {
				wrapped := 0
				script := filepath.Join(pl.Layout.Logs, "bash_preamble.sh")
				for _, proc := range pl.Processes {
					isWrapped := len(proc.Argv) > 2 && proc.Argv[0] == "bash" && proc.Argv[1] == script &&
						strings.Contains(proc.Files[script], "\nulimit -n 1048576\nexec \"$@\"\n")
					switch {
					case proc.Role == plan.RoleTelemetry && isWrapped:
						return "the distroless exporter got the preamble"
					case proc.Container && proc.Role != plan.RoleTelemetry && !isWrapped:
						return fmt.Sprintf("%s: argv %q", proc.Name, proc.Argv)
					case !proc.Container && isWrapped:
						return fmt.Sprintf("%s runs on the host: argv %q", proc.Name, proc.Argv)
					}
					if isWrapped {
						wrapped++
					}
				}
				if pre := processNamed(pl, "prefill_w0"); wrapped == 0 || pre.Argv[2] != "numactl" {
					return fmt.Sprintf("%d wrapped; prefill %q", wrapped, pre.Argv)
				}
				return ""
			}},
		{name: "default_health_check for a recipe without health_check", prof: func(p *profile.Profile) {
			p.Health = profile.Health{} // gb300.toml's [health] overrides every recipe
			p.Defaults.HealthMaxAttempts, p.Defaults.HealthIntervalSeconds = 720, 10
		}, check: func(pl *plan.Plan) string {
			if pl.Health.MaxAttempts != 720 || pl.Health.IntervalSeconds != 10 {
				return fmt.Sprintf("health %d × %d", pl.Health.MaxAttempts, pl.Health.IntervalSeconds)
			}
			return ""
		}},
		{name: "a recipe's health_check block replaces default_health_check whole", recipe: func(s string) string {
			return strings.Replace(s, "benchmark:", "health_check: {interval_seconds: 5}\nbenchmark:", 1)
		}, prof: func(p *profile.Profile) {
			p.Health = profile.Health{} // gb300.toml's [health] overrides every recipe
			p.Defaults.HealthMaxAttempts, p.Defaults.HealthIntervalSeconds = 720, 10
		}, check: func(pl *plan.Plan) string {
			if pl.Health.MaxAttempts != 180 || pl.Health.IntervalSeconds != 5 {
				return fmt.Sprintf("health %d × %d", pl.Health.MaxAttempts, pl.Health.IntervalSeconds)
			}
			return ""
		}},
		{name: "the cluster's default host_setup commands", prof: func(p *profile.Profile) {
			p.HostSetup = &profile.HostSetup{Commands: []string{"sudo -n nvidia-smi -lgc 1980"}, Teardown: []string{"sudo -n nvidia-smi -rgc"}, Nodes: "workers", TimeoutSeconds: 60, IgnoreFailure: true}
		}, check: func(pl *plan.Plan) string {
			hs := pl.HostSetup
			steps, teardowns := pl.HostSteps(plan.RoleHostSetup), pl.HostSteps(plan.RoleHostTeardown)
			if hs == nil || hs.Nodes != "workers" || hs.TimeoutSeconds != 60 || !hs.IgnoreFailure || len(steps) != 3 || len(teardowns) != 3 {
				return fmt.Sprintf("host setup %+v, %d steps, %d teardowns", hs, len(steps), len(teardowns))
			}
			if argv := steps[0].Argv; len(argv) != 3 || argv[0] != "bash" || argv[2] != "sudo -n nvidia-smi -lgc 1980" {
				return fmt.Sprintf("host setup argv %q", argv)
			}
			return ""
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := trtllmRecipeV2
			if c.recipe != nil {
				text = c.recipe(text)
			}
			r, err := recipe.Parse(filepath.Join(t.TempDir(), "t.yaml"), []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			p := loadProfile(t, filepath.Join(testdataDir(t), "profiles", "gb300.toml"))
			if c.prof != nil {
				c.prof(p)
			}
			pl, err := Build(inputs(p, r))
			if err != nil {
				t.Fatal(err)
			}
			if msg := c.check(pl); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// TestSrtslurmNginxRaiseUlimit: the cluster's nginx_raise_ulimit fills a
// recipe that leaves frontend.nginx_raise_ulimit out; the recipe's own
// value wins.
func TestSrtslurmNginxRaiseUlimit(t *testing.T) {
	for _, c := range []struct {
		name    string
		recipe  string // "", "true" or "false": the recipe's own value
		cluster *bool
		raised  bool
	}{
		{name: "cluster true", cluster: yes(), raised: true},
		{name: "cluster false", cluster: no()},
		{name: "neither"},
		{name: "recipe false over cluster true", recipe: "false", cluster: yes()},
		{name: "recipe true over cluster false", recipe: "true", cluster: no(), raised: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := string(readTestdata(t, "recipes", "gb300.yaml"))
			if c.recipe != "" {
				text = strings.Replace(text, "frontend:\n", "frontend:\n  nginx_raise_ulimit: "+c.recipe+"\n", 1)
			}
			path := filepath.Join(t.TempDir(), "gb300.yaml")
			writeFile(t, path, text)
			p := loadProfile(t, filepath.Join(testdataDir(t), "profiles", "gb300.toml"))
			p.Defaults.NginxRaiseUlimit = c.cluster
			pl, err := Build(inputs(p, loadRecipe(t, path)))
			if err != nil {
				t.Fatal(err)
			}
			ng := processNamed(pl, "nginx")
			if ng == nil {
				t.Fatal("no nginx planned")
			}
			if got := ng.NoFile == 1048576; got != c.raised {
				t.Errorf("raised %v, want %v", got, c.raised)
			}
		})
	}
}
