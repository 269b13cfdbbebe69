package dynamoinstall

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

func TestCacheKey(t *testing.T) {
	cases := []struct {
		name    string
		d       plan.Dynamo
		py, m   string
		want    string
		wantErr string
	}{
		{"release", plan.Dynamo{Version: "1.2.1"}, "cp312", "x86_64", "version-1.2.1/cp312-x86_64", ""},
		{"exact wheel", plan.Dynamo{Wheel: "1.2.0.dev20260426"}, "cp312", "aarch64", "wheel-1.2.0.dev20260426/cp312-aarch64", ""},
		{"source", plan.Dynamo{Hash: "5b4bc1dd70965017a737c71b19db5a0aeaa88727"}, "cp310", "aarch64", "hash-5b4bc1dd70965017a737c71b19db5a0aeaa88727/cp310-aarch64", ""},
		// A hash wins over a version, as in the plan (srtctl clears version).
		{"hash over version", plan.Dynamo{Hash: "abcdef1", Version: "0.8.0"}, "cp312", "x86_64", "hash-abcdef1/cp312-x86_64", ""},
		{"nothing", plan.Dynamo{}, "cp312", "x86_64", "", "nothing to install"},
		{"escape by version", plan.Dynamo{Version: "../../etc"}, "cp312", "x86_64", "", "not a version"},
		{"slash in wheel", plan.Dynamo{Wheel: "1.0/../x"}, "cp312", "x86_64", "", "not a version"},
		{"hash not hex", plan.Dynamo{Hash: "main"}, "cp312", "x86_64", "", "not a hex commit"},
		{"python tag", plan.Dynamo{Version: "1.0"}, "py3", "x86_64", "", "python tag"},
		{"machine", plan.Dynamo{Version: "1.0"}, "cp312", "x86 64", "", "machine"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CacheKey(tc.d, tc.py, tc.m)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("key = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestFetchSteps(t *testing.T) {
	steps, err := FetchSteps(plan.Dynamo{Version: "1.2.1"}, "/cache/.tmp-1", "/tmp/w", "/root", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"python3", "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--extra-index-url", "https://pypi.nvidia.com",
		"--dest", "/cache/.tmp-1", "ai-dynamo-runtime==1.2.1", "ai-dynamo==1.2.1"}
	if len(steps) != 1 || !reflect.DeepEqual(steps[0].Argv, want) {
		t.Errorf("release fetch = %+v", steps)
	}
	// An exact wheel may be a pre-release.
	steps, err = FetchSteps(plan.Dynamo{Wheel: "1.3.0.dev20260718"}, "/cache/.tmp-2", "/tmp/w", "/root", true)
	if err != nil || len(steps) != 1 || slices.Index(steps[0].Argv, "--pre") < 0 || slices.Index(steps[0].Argv, "ai-dynamo==1.3.0.dev20260718") < 0 {
		t.Errorf("wheel fetch = %+v, %v", steps, err)
	}
	// A source build installs rustup only without cargo, and builds with
	// srtctl's flags in the bindings directory.
	for _, haveCargo := range []bool{true, false} {
		steps, err = FetchSteps(plan.Dynamo{Hash: "4025cb6a8992d19fd19eead36065e08ea5301f35"}, "/cache/.tmp-3", "/tmp/w", "/root", haveCargo)
		if err != nil {
			t.Fatal(err)
		}
		var maturin *Step
		rustup := false
		for i, s := range steps {
			if strings.Contains(strings.Join(s.Argv, " "), "sh.rustup.rs") {
				rustup = true
			}
			if s.Argv[0] == "maturin" {
				maturin = &steps[i]
			}
			if i := slices.Index(s.Argv, "-c"); i > 0 && (s.Argv[i-1] == "sh" || s.Argv[i-1] == "bash") {
				t.Errorf("step runs a shell string: %q", s.Argv)
			}
		}
		if rustup == haveCargo {
			t.Errorf("haveCargo %v: rustup step present = %v", haveCargo, rustup)
		}
		if maturin == nil || maturin.Dir != "/tmp/w/dynamo/lib/bindings/python" || !strings.Contains(maturin.Env["RUSTFLAGS"], "target-cpu=native") {
			t.Fatalf("maturin step = %+v", maturin)
		}
		if wantPath := !haveCargo; (len(maturin.PathPrepend) == 1 && maturin.PathPrepend[0] == "/root/.cargo/bin") != wantPath {
			t.Errorf("haveCargo %v: PATH prepend %v", haveCargo, maturin.PathPrepend)
		}
		last := steps[len(steps)-1].Argv
		if last[0] != "tar" || slices.Index(last, "/cache/.tmp-3/dynamo-src.tar.gz") < 0 {
			t.Errorf("last step %q does not pack the source into the entry", last)
		}
	}
	if _, err := FetchSteps(plan.Dynamo{Version: "1.0"}, "relative", "/tmp", "/root", true); err == nil {
		t.Error("relative destination accepted")
	}
}

func TestEntryFilesAndInstall(t *testing.T) {
	names := []string{".complete", "ai_dynamo-1.2.1-py3-none-any.whl", "ai_dynamo_runtime-1.2.1-cp310-abi3-manylinux_2_28_x86_64.whl",
		"ai_dynamo_runtime-1.2.10-cp310-abi3-manylinux_2_28_x86_64.whl"}
	files, err := EntryFiles(plan.Dynamo{Version: "1.2.1"}, names)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ai_dynamo_runtime-1.2.1-cp310-abi3-manylinux_2_28_x86_64.whl", "ai_dynamo-1.2.1-py3-none-any.whl"}; !reflect.DeepEqual(files, want) {
		t.Errorf("files = %q, want %q (1.2.10 must not match 1.2.1)", files, want)
	}
	steps, err := InstallSteps(plan.Dynamo{Version: "1.2.1"}, "/cache/version-1.2.1/cp310-x86_64", files, "/tmp")
	if err != nil {
		t.Fatal(err)
	}
	argv := steps[0].Argv
	if len(steps) != 1 || slices.Index(argv, "--break-system-packages") < 0 || slices.Index(argv, "/cache/version-1.2.1/cp310-x86_64/ai_dynamo-1.2.1-py3-none-any.whl") < 0 {
		t.Errorf("install = %+v", steps)
	}
	if _, err := EntryFiles(plan.Dynamo{Version: "1.2.1"}, names[:2]); err == nil || !strings.Contains(err.Error(), "ai_dynamo_runtime-1.2.1-") {
		t.Errorf("missing runtime wheel: %v", err)
	}
	if _, err := EntryFiles(plan.Dynamo{Hash: "abcdef1"}, []string{"ai_dynamo_runtime-a.whl", "ai_dynamo_runtime-b.whl", "dynamo-src.tar.gz"}); err == nil || !strings.Contains(err.Error(), "2 files") {
		t.Errorf("ambiguous entry: %v", err)
	}
	hashFiles, err := EntryFiles(plan.Dynamo{Hash: "abcdef1"}, []string{"dynamo-src.tar.gz", "ai_dynamo_runtime-0.9.0-cp312-cp312-linux_aarch64.whl"})
	if err != nil {
		t.Fatal(err)
	}
	steps, err = InstallSteps(plan.Dynamo{Hash: "abcdef1"}, "/cache/hash-abcdef1/cp312-aarch64", hashFiles, "/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if got := steps[len(steps)-1].Argv; strings.Join(got, " ") != "python3 -m pip install --break-system-packages -e /tmp/dynamo-src/dynamo" {
		t.Errorf("source install ends with %q", got)
	}
	if _, err := InstallSteps(plan.Dynamo{Version: "1.2.1"}, "/cache/x", []string{"../a.whl", "b.whl"}, "/tmp"); err == nil {
		t.Error("a cache file outside the entry was accepted")
	}
}

// TestFetchStepsFork: a source build from a fork (schema 2's
// dynamo.source.git) clones the fork, and caches under its own key.
func TestFetchStepsFork(t *testing.T) {
	const sha = "4025cb6a8992d19fd19eead36065e08ea5301f35"
	fork := plan.Dynamo{Hash: sha, Git: "https://github.com/someone/dynamo.git"}
	steps, err := FetchSteps(fork, "/cache/.tmp-3", "/tmp/w", "/root", true)
	if err != nil {
		t.Fatal(err)
	}
	cloned := ""
	for _, s := range steps {
		if len(s.Argv) > 2 && s.Argv[0] == "git" && s.Argv[1] == "clone" {
			cloned = s.Argv[2]
		}
	}
	if cloned != fork.Git {
		t.Errorf("cloned %q, want the fork", cloned)
	}
	up, err := CacheKey(plan.Dynamo{Hash: sha}, "cp312", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	fk, err := CacheKey(fork, "cp312", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	if up == fk || !strings.HasPrefix(up, "hash-"+sha) {
		t.Errorf("cache keys upstream %q, fork %q: want distinct entries", up, fk)
	}
	if _, err := FetchSteps(plan.Dynamo{Hash: sha, Git: "--upload-pack=touch /tmp/x"}, "/cache/.tmp-4", "/tmp/w", "/root", true); err == nil {
		t.Error("an option as the repository was accepted")
	}
}

// TestTopOfTree: dynamo.top_of_tree builds the source's HEAD (no checkout;
// the commit is logged) into an entry named by the run, so every container
// of the job installs the same build, and installs it as a source build.
func TestTopOfTree(t *testing.T) {
	d := plan.Dynamo{TopOfTree: "r-2026-12-03"}
	key, err := CacheKey(d, "cp312", "x86_64")
	if err != nil || key != "top-of-tree-r-2026-12-03/cp312-x86_64" {
		t.Errorf("key %q, %v", key, err)
	}
	steps, err := FetchSteps(d, "/cache/.tmp-4", "/tmp/w", "/root", true)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, s := range steps {
		cmds = append(cmds, strings.Join(s.Argv[:min(3, len(s.Argv))], " "))
	}
	joined := strings.Join(cmds, "; ")
	if !strings.Contains(joined, "git clone https://github.com/ai-dynamo/dynamo.git; git -C /tmp/w/dynamo; maturin build --release") || strings.Contains(joined, "checkout") {
		t.Errorf("fetch: %s", joined)
	}
	files, err := EntryFiles(d, []string{"dynamo-src.tar.gz", "ai_dynamo_runtime-1.1.0-cp312-cp312-linux_x86_64.whl"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InstallSteps(d, "/cache/"+key, files, "/tmp"); err != nil {
		t.Error(err)
	}
	if _, err := CacheKey(plan.Dynamo{TopOfTree: "../x"}, "cp312", "x86_64"); err == nil {
		t.Error("a top-of-tree id escaping the cache accepted")
	}
}
