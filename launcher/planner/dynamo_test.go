package planner

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/infra"
)

// TestDynamoInstallInPlan: every process that runs Dynamo installs it from
// the cache as its last setup step (after the setup script), with root in
// the container and the cache mounted; nothing else does.
func TestDynamoInstallInPlan(t *testing.T) {
	td := testdataDir(t)
	p := loadProfile(t, filepath.Join(td, "profiles", "b200.toml"))
	p.Paths.WheelCache = "/shared/wheels"
	pl, err := Build(inputs(p, loadRecipe(t, filepath.Join(td, "recipes", "4p1d.yaml"))))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{pl.Binary, "dynamo-install", "--cache", "/shared/wheels", "--hash", "5b4bc1dd70965017a737c71b19db5a0aeaa88727"}
	for _, proc := range pl.Processes {
		dynamo := proc.Role == plan.RolePrefill || proc.Role == plan.RoleDecode || proc.Role == plan.RoleFrontend
		has := len(proc.Setup) > 0 && reflect.DeepEqual(proc.Setup[len(proc.Setup)-1], want)
		if has != dynamo {
			t.Errorf("%s: setup %q", proc.Name, proc.Setup)
		}
		if dynamo && (!reflect.DeepEqual(proc.Srun.Export, []string{"ENROOT_REMAP_ROOT=yes"}) || indexOf(proc.Mounts, "/shared/wheels:/shared/wheels") < 0) {
			t.Errorf("%s: export %v, mounts %v", proc.Name, proc.Srun.Export, proc.Mounts)
		}
	}
	// Without a profile cache the runs directory holds it.
	pl = mustBuild(t, "b200.toml", "4p1d.yaml", nil)
	if pl.Dynamo.Cache != "/shared/runs/.dynamo-wheels" {
		t.Errorf("default cache %q", pl.Dynamo.Cache)
	}
}

func TestSetupScript(t *testing.T) {
	td := testdataDir(t)
	text := string(readTestdata(t, "recipes", "4p1d.yaml"))
	path := filepath.Join(t.TempDir(), "setup.yaml")
	writeFile(t, path, text+"setup_script: rebuild-deepep.sh\n")
	pl, err := Build(inputs(loadProfile(t, filepath.Join(td, "profiles", "b200.toml")), loadRecipe(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	for _, proc := range pl.Processes {
		if proc.Role == plan.RolePrefill || proc.Role == plan.RoleFrontend {
			if len(proc.Setup) != 2 || strings.Join(proc.Setup[0], " ") != "bash /configs/rebuild-deepep.sh" || proc.Setup[1][1] != "dynamo-install" {
				t.Errorf("%s: setup %q: want the script, then the install", proc.Name, proc.Setup)
			}
		}
	}
	for _, bad := range []string{"../x.sh", "/etc/x.sh", "a/../../x"} {
		writeFile(t, path, text+"setup_script: "+bad+"\n")
		_, err := Build(inputs(loadProfile(t, filepath.Join(td, "profiles", "b200.toml")), loadRecipe(t, path)))
		if err == nil || !strings.Contains(err.Error(), "setup_script") {
			t.Errorf("setup_script %q: err = %v", bad, err)
		}
	}
}

// TestSetupScriptConfigs: with paths.configs the plan mounts it at
// /configs before the profile's mounts and runs the setup script from
// where it is, the directory or its patches/ (srtctl's fallback); one in
// neither is refused naming setup_script (InferenceX's check_setup_script),
// where srtctl would warn and start the workers without it.
func TestSetupScriptConfigs(t *testing.T) {
	td := testdataDir(t)
	text := string(readTestdata(t, "recipes", "4p1d.yaml"))
	configs := t.TempDir()
	writeFile(t, filepath.Join(configs, "top.sh"), "true\n")
	writeFile(t, filepath.Join(configs, "patches", "patched.sh"), "true\n")
	writeFile(t, filepath.Join(configs, "both.sh"), "true\n")
	writeFile(t, filepath.Join(configs, "patches", "both.sh"), "true\n")
	if err := os.Mkdir(filepath.Join(configs, "dir.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "setup.yaml")
	for _, tc := range []struct {
		script, want, refused string
	}{
		{"top.sh", "bash /configs/top.sh", ""},
		{"patched.sh", "bash /configs/patches/patched.sh", ""},
		{"both.sh", "bash /configs/both.sh", ""},
		{"missing.sh", "", "setup_script: missing.sh is in neither " + configs},
		{"dir.sh", "", "setup_script: dir.sh is in neither"},
	} {
		writeFile(t, path, text+"setup_script: "+tc.script+"\n")
		prof := loadProfile(t, filepath.Join(td, "profiles", "b200.toml"))
		prof.Paths.Configs = configs
		prof.Container.Mounts = append(prof.Container.Mounts, "/shared/wheels:/configs/dynamo-wheels")
		pl, err := Build(inputs(prof, loadRecipe(t, path)))
		if tc.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%s: err = %v, want %q", tc.script, err, tc.refused)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.script, err)
		}
		for _, proc := range pl.Processes {
			if proc.Role != plan.RolePrefill {
				continue
			}
			if strings.Join(proc.Setup[0], " ") != tc.want {
				t.Errorf("%s: setup %q, want %q", tc.script, proc.Setup[0], tc.want)
			}
			at, nested := indexOf(proc.Mounts, configs+":/configs"), indexOf(proc.Mounts, "/shared/wheels:/configs/dynamo-wheels")
			if at < 0 || nested < at {
				t.Errorf("%s: mounts %q: want %s:/configs before the mount inside it", tc.script, proc.Mounts, configs)
			}
		}
	}
}

func readTestdata(t *testing.T, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{testdataDir(t)}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDynamoFork: schema 2's dynamo.source.git names the repository a
// source build clones; the plan carries it to the install step, and the
// upstream repository spelled out is the default.
func TestDynamoFork(t *testing.T) {
	text := strings.Replace(trtllmRecipeV2, "dynamo: {source: {pypi: 1.3.0}}", "dynamo: {source: {git: https://github.com/someone/dynamo.git, rev: 39d2a68abcd}}", 1)
	pl := buildText(t, "gb300.toml", text)
	if pl.Dynamo.Hash != "39d2a68abcd" || pl.Dynamo.Git != "https://github.com/someone/dynamo.git" {
		t.Fatalf("dynamo %+v", pl.Dynamo)
	}
	argv, err := infra.DynamoInstallArgv("/bin/slurmbench", pl.Dynamo)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(argv[len(argv)-4:], " "); got != "--hash 39d2a68abcd --git https://github.com/someone/dynamo.git" {
		t.Errorf("install argv %q", argv)
	}
	up := buildText(t, "gb300.toml", strings.Replace(text, "someone", "ai-dynamo", 1))
	if up.Dynamo.Git != "" || up.Dynamo.Hash != "39d2a68abcd" {
		t.Errorf("upstream spelled out: %+v", up.Dynamo)
	}
}
