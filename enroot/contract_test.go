package enroot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// pyxis and enroot are not on the test cluster (it runs Slurm's own OCI
// containers): they are checked here as the contract the production
// clusters hold them to. What the builders emit must be what pyxis and
// enroot document, and must say exactly what srtctl's recorded launches
// say (../shared/data/srtctl-reference, srtctl c88ef731 and a98738de).

// pyxisOptions are the srun options pyxis adds, as its documentation lists
// them (srun --help under pyxis: NVIDIA/pyxis wiki "Usage", revision
// 1b5dc2ac): each with whether it takes a value.
var pyxisOptions = map[string]bool{
	"--container-image": true, "--container-mounts": true, "--container-workdir": true,
	"--container-name": true, "--container-save": true, "--container-env": true,
	"--container-mount-home": false, "--no-container-mount-home": false,
	"--container-remap-root": false, "--no-container-remap-root": false,
	"--container-entrypoint": false, "--no-container-entrypoint": false,
	"--container-writable": false, "--container-readonly": false,
}

// enrootVariables are the settings enroot documents (NVIDIA/enroot
// doc/configuration.md@2c410f2a for the paths, doc/cmd/batch.md for
// ENROOT_REMAP_ROOT and ENROOT_ROOTFS_WRITABLE, "same as --root/--rw").
var enrootVariables = map[string]bool{
	"ENROOT_LIBRARY_PATH": true, "ENROOT_SYSCONF_PATH": true, "ENROOT_RUNTIME_PATH": true,
	"ENROOT_CONFIG_PATH": true, "ENROOT_CACHE_PATH": true, "ENROOT_DATA_PATH": true, "ENROOT_TEMP_PATH": true,
	"ENROOT_LOGIN_SHELL": true, "ENROOT_ROOTFS_WRITABLE": true, "ENROOT_REMAP_ROOT": true,
}

// splitFlag is "--name=value" or "--name" as (name, value, has value).
func splitFlag(a string) (string, string, bool) {
	name, value, ok := strings.Cut(a, "=")
	return name, value, ok
}

// TestPyxisFlagsAreDocumented: every flag PyxisFlags can emit is a pyxis
// option, with a value exactly when the option takes one.
func TestPyxisFlagsAreDocumented(t *testing.T) {
	specs := []PyxisSpec{
		{Image: "nvcr.io#nvidia/x:1"},
		{Image: "/s/x.sqsh", Mounts: mustMounts(t, "/a:/b", "/c:/d:ro"), Workdir: "/w", Env: map[string]string{"HF_TOKEN": "x", "A": "1"},
			MountHome: true, Entrypoint: true, RemapRoot: true, Writable: true},
	}
	seen := map[string]bool{}
	for _, spec := range specs {
		inv, err := PyxisFlags(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range inv.Argv {
			name, _, hasValue := splitFlag(a)
			takes, ok := pyxisOptions[name]
			switch {
			case !ok:
				t.Errorf("PyxisFlags emits %q, which pyxis does not document", a)
			case takes != hasValue:
				t.Errorf("PyxisFlags emits %q: pyxis's %s takes a value: %v", a, name, takes)
			}
			seen[name] = true
		}
	}
	// The switches the production launches depend on are all reachable.
	for _, want := range []string{"--container-image", "--container-mounts", "--container-workdir", "--container-env",
		"--no-container-mount-home", "--no-container-entrypoint", "--container-remap-root", "--container-writable"} {
		if !seen[want] {
			t.Errorf("no spec made PyxisFlags emit %s", want)
		}
	}
}

type srtctlRecord struct {
	SrunCalls []struct {
		Argv []string `json:"argv"`
	} `json:"srun_calls"`
}

// srtctlContainerCall is the pyxis part of one recorded srun: each
// container option with its value ("" for a switch), and the ENROOT_*
// variables its --export sets.
type srtctlContainerCall struct {
	file   string
	flags  map[string]string
	enroot []string
}

func srtctlContainerCalls(t *testing.T) []srtctlContainerCall {
	t.Helper()
	dir := shareddata.Path(t, "data", "srtctl-reference")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	pinned, _ := filepath.Glob(filepath.Join(dir, "pinned-*", "*.json"))
	files = append(files, pinned...)
	if len(files) == 0 {
		shareddata.Missing(t, "no srtctl recordings in %s", dir)
	}
	var calls []srtctlContainerCall
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec srtctlRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range rec.SrunCalls {
			call := srtctlContainerCall{file: filepath.Base(f), flags: map[string]string{}}
			for i := 0; i < len(c.Argv); i++ {
				a := c.Argv[i]
				if strings.HasPrefix(a, "--export=") {
					for _, kv := range strings.Split(strings.TrimPrefix(a, "--export="), ",") {
						if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ENROOT_") {
							call.enroot = append(call.enroot, k)
						}
					}
				}
				name, value, hasValue := splitFlag(a)
				takes, ok := pyxisOptions[name]
				if !strings.Contains(name, "container-") {
					continue
				}
				if !ok {
					t.Errorf("%s: srtctl passes %q, which pyxis does not document", call.file, a)
					continue
				}
				if takes && !hasValue && i+1 < len(c.Argv) {
					i++
					value = c.Argv[i] // "--container-image X": srun's getopt takes both forms
				}
				call.flags[name] = value
			}
			if _, ok := call.flags["--container-image"]; ok {
				calls = append(calls, call)
			}
		}
	}
	if len(calls) == 0 {
		t.Fatal("no recorded srun call runs in a pyxis container")
	}
	return calls
}

// TestPyxisFlagsSayWhatSrtctlSays: for every containerized srun srtctl
// recorded, the spec read back from its flags renders the same options
// with the same values (mount lists byte for byte), so the runner's pyxis
// steps ask pyxis for exactly what srtctl's do.
func TestPyxisFlagsSayWhatSrtctlSays(t *testing.T) {
	calls := srtctlContainerCalls(t)
	for _, c := range calls {
		spec := PyxisSpec{Image: c.flags["--container-image"], Workdir: c.flags["--container-workdir"]}
		_, spec.MountHome = c.flags["--container-mount-home"]
		_, spec.Entrypoint = c.flags["--container-entrypoint"]
		_, spec.RemapRoot = c.flags["--container-remap-root"]
		_, spec.Writable = c.flags["--container-writable"]
		if m := c.flags["--container-mounts"]; m != "" {
			for _, s := range strings.Split(m, ",") {
				mount, err := ParseMount(s)
				if err != nil {
					t.Errorf("%s: srtctl's mount %q: %v", c.file, s, err)
					continue
				}
				spec.Mounts = append(spec.Mounts, mount)
			}
		}
		inv, err := PyxisFlags(spec)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		got := map[string]string{}
		for _, a := range inv.Argv {
			name, value, _ := splitFlag(a)
			got[name] = value
		}
		// srtctl leaves pyxis's defaults implicit where we say them.
		for _, implicit := range []string{"--no-container-mount-home", "--no-container-entrypoint"} {
			if _, ok := c.flags[implicit]; !ok {
				delete(got, implicit)
			}
		}
		if !equalFlags(got, c.flags) {
			t.Errorf("%s: srtctl's pyxis options\n  %v\nrender as\n  %v", c.file, sortedFlags(c.flags), sortedFlags(got))
		}
	}
	t.Logf("%d containerized srun calls compared", len(calls))
}

// TestSrtctlEnrootVariablesAreDocumented: the ENROOT_* settings srtctl
// exports to its steps (ENROOT_REMAP_ROOT at the pinned revision) and the
// ones the importer sets are settings enroot documents.
func TestSrtctlEnrootVariablesAreDocumented(t *testing.T) {
	used := map[string]bool{"ENROOT_CACHE_PATH": true, "ENROOT_DATA_PATH": true, "ENROOT_TEMP_PATH": true, "ENROOT_RUNTIME_PATH": true}
	for _, c := range srtctlContainerCalls(t) {
		for _, v := range c.enroot {
			used[v] = true
		}
	}
	if !used["ENROOT_REMAP_ROOT"] {
		t.Error("no recording exports ENROOT_REMAP_ROOT (the pinned revision's workers do): the recordings were not read")
	}
	for v := range used {
		if !enrootVariables[v] {
			t.Errorf("%s is not a setting enroot documents", v)
		}
	}
}

func equalFlags(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sortedFlags(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
