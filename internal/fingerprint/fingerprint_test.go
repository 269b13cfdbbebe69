package fingerprint

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fixed() (func() time.Time, func() (string, error)) {
	return func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }, func() (string, error) { return "node7", nil }
}

// Packages come from dist-info METADATA and egg-info PKG-INFO headers (the
// body is never read as headers), deduplicated across directories and
// sorted as pip freeze sorts; unreadable metadata is counted in a note.
func TestProbePackagesAndGPUs(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a", "site-packages"), filepath.Join(root, "b", "dist-packages")
	writeFile(t, filepath.Join(a, "vllm-0.11.0.dist-info", "METADATA"), "Metadata-Version: 2.1\nName: vllm\nVersion: 0.11.0\nSummary: x\n\nName: not-a-header\n")
	writeFile(t, filepath.Join(a, "Torch-2.8.0.dist-info", "METADATA"), "Name: Torch\r\nVersion: 2.8.0\r\n\r\n")
	writeFile(t, filepath.Join(b, "vllm-0.11.0.dist-info", "METADATA"), "Name: vllm\nVersion: 0.11.0\n")
	writeFile(t, filepath.Join(b, "old.egg-info"), "Name: old\nVersion: 1.0\n")
	writeFile(t, filepath.Join(b, "nixl-0.6.dist-info", "METADATA"), "Name: nixl\n") // no version
	writeFile(t, filepath.Join(b, "README"), "Name: ignored\nVersion: 9\n")
	now, host := fixed()
	rec := Probe(context.Background(), Options{
		Step: "decode_w0", Argv: []string{"python3", "-m", "vllm"}, Env: []string{"PATH=/x", "HF_TOKEN=secret", "SLURM_PROCID=1", "=bad"},
		Roots: []string{filepath.Join(root, "*", "site-packages"), filepath.Join(root, "*", "dist-packages"), filepath.Join(root, "missing")},
		RunGPUQuery: func(context.Context) ([]byte, error) {
			return []byte("0, NVIDIA GB300, 580.1, 284208 MiB, GPU-1\n\n1, NVIDIA GB300, 580.1, 284208 MiB, GPU-2\n"), nil
		},
		Now: now, Hostname: host,
	})
	want := []Package{{"old", "1.0"}, {"Torch", "2.8.0"}, {"vllm", "0.11.0"}}
	if !reflect.DeepEqual(rec.Packages, want) {
		t.Errorf("packages %v, want %v", rec.Packages, want)
	}
	if !reflect.DeepEqual(rec.EnvNames, []string{"HF_TOKEN", "PATH", "SLURM_PROCID"}) || rec.Task != "1" || rec.Host != "node7" {
		t.Errorf("env names %v, task %q, host %q", rec.EnvNames, rec.Task, rec.Host)
	}
	if len(rec.GPUs) != 2 || rec.GPUs[1] != (GPU{Index: "1", Name: "NVIDIA GB300", Driver: "580.1", Memory: "284208 MiB", UUID: "GPU-2"}) {
		t.Errorf("gpus %+v", rec.GPUs)
	}
	if !slices.Equal(rec.Notes, []string{"1 package metadata files unreadable or without Name/Version"}) {
		t.Errorf("notes %q", rec.Notes)
	}
	b2, _ := json.Marshal(rec)
	if strings.Contains(string(b2), "secret") {
		t.Errorf("record holds an environment value: %s", b2)
	}
}

// The mock engine's image: no site-packages, no nvidia-smi. The probe
// says so and still records argv and environment names.
func TestProbeDegradesGracefully(t *testing.T) {
	now, host := fixed()
	rec := Probe(context.Background(), Options{Step: "agg_w0", Argv: []string{"/slurmbench", "mock-engine"}, Env: []string{"PATH=" + t.TempDir()},
		Roots: []string{filepath.Join(t.TempDir(), "none*")}, Now: now, Hostname: host})
	want := []string{
		"no Python site-packages found: engine and library versions unknown",
		"nvidia-smi not found in PATH: GPU model and driver unknown",
	}
	if !slices.Equal(rec.Notes, want) || len(rec.Packages) != 0 || len(rec.GPUs) != 0 {
		t.Errorf("notes %q, packages %v, gpus %v; want %q", rec.Notes, rec.Packages, rec.GPUs, want)
	}
	if !slices.Equal(rec.Argv, []string{"/slurmbench", "mock-engine"}) || !slices.Equal(rec.EnvNames, []string{"PATH"}) {
		t.Errorf("argv %v env %v", rec.Argv, rec.EnvNames)
	}
	// nvidia-smi present but failing (no driver loaded): its message.
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "nvidia-smi"), "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver' >&2\nexit 9\n")
	if err := os.Chmod(filepath.Join(bin, "nvidia-smi"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec = Probe(context.Background(), Options{Env: []string{"PATH=" + bin}, Roots: []string{}, Now: now, Hostname: host})
	if len(rec.Notes) != 2 || !strings.Contains(rec.Notes[1], "could not communicate with the NVIDIA driver") || !strings.Contains(rec.Notes[1], "exit status 9") {
		t.Errorf("notes %q, want nvidia-smi's failure", rec.Notes)
	}
}

// A query that hangs (a wedged driver) is ended by the probe's bound, so a
// step never waits on it for more than gpuQueryLimit.
func TestProbeBoundsTheGPUQuery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now, host := fixed()
		start := time.Now()
		rec := Probe(context.Background(), Options{Roots: []string{}, Now: now, Hostname: host,
			RunGPUQuery: func(ctx context.Context) ([]byte, error) { <-ctx.Done(); return nil, ctx.Err() }})
		if waited := time.Since(start); waited != gpuQueryLimit {
			t.Errorf("waited %v, want the bound %v", waited, gpuQueryLimit)
		}
		if len(rec.Notes) != 2 || !strings.Contains(rec.Notes[1], "deadline exceeded") {
			t.Errorf("notes %q, want the query's deadline", rec.Notes)
		}
	})
}

func TestParseGPUs(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    []GPU
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "0, NVIDIA H100 80GB HBM3, 550.54.15\n", want: []GPU{{Index: "0", Name: "NVIDIA H100 80GB HBM3", Driver: "550.54.15"}}},
		{in: "0, A, 1, 80 MiB, U\n1, B, 2, 96 MiB, V", want: []GPU{{"0", "A", "1", "80 MiB", "U"}, {"1", "B", "2", "96 MiB", "V"}}},
		{in: "garbage\n", wantErr: true},
	} {
		got, err := ParseGPUs([]byte(c.in))
		if (err != nil) != c.wantErr || (!c.wantErr && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("ParseGPUs(%q) = %+v, %v", c.in, got, err)
		}
	}
}

func TestWriteReadDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fp")
	for _, r := range []Record{{Step: "w", Task: "10"}, {Step: "w", Task: "2"}, {Step: "a"}} {
		if _, err := Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "broken.json"), "{")
	recs, problems := ReadDir(dir)
	var got []string
	for _, r := range recs {
		got = append(got, r.Step+"/"+r.Task)
	}
	if !slices.Equal(got, []string{"a/", "w/2", "w/10"}) || len(problems) != 1 || !strings.Contains(problems[0], "broken.json") {
		t.Errorf("records %v problems %q", got, problems)
	}
	if recs, problems := ReadDir(filepath.Join(dir, "none")); recs != nil || problems != nil {
		t.Errorf("missing dir: %v %v", recs, problems)
	}
}

// The OS and CPU facts srtctl's probe records, read from the image's
// /etc/os-release and /proc/cpuinfo: x86's "model name", and ARM's
// "CPU model" when there is no model name.
func TestProbeOSAndCPU(t *testing.T) {
	now, host := fixed()
	for _, c := range []struct{ cpuinfo, model string }{
		{"processor\t: 0\nmodel name\t: AMD EPYC 9654\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 9654\n", "AMD EPYC 9654"},
		{"processor : 0\nBogoMIPS : 2000\nCPU model : NVIDIA Grace\nprocessor : 1\n", "NVIDIA Grace"},
	} {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "etc", "os-release"), "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.2 LTS\"\n")
		writeFile(t, filepath.Join(root, "proc", "cpuinfo"), c.cpuinfo)
		writeFile(t, filepath.Join(root, "usr", "local", "cuda", "version.json"), `{"cuda": {"name": "CUDA SDK", "version": "12.9.1"}}`)
		rec := Probe(context.Background(), Options{Root: root, Roots: []string{}, Env: []string{"SLURM_CPUS_PER_TASK=16"}, Now: now, Hostname: host,
			RunGPUQuery: func(context.Context) ([]byte, error) { return nil, nil }})
		if rec.OS != "Ubuntu 24.04.2 LTS" || rec.CPU.Model != c.model || rec.CPU.LogicalCPUs != 2 || rec.CPU.AffinityCPUs < 1 ||
			rec.CPU.Slurm["SLURM_CPUS_PER_TASK"] != "16" || rec.Arch == "" || rec.CUDA != "12.9.1" {
			t.Errorf("os %q arch %q cpu %+v, want model %q over 2 CPUs", rec.OS, rec.Arch, rec.CPU, c.model)
		}
	}
}

// BenchmarkProbe is the probe's cost on an image with 400 packages (no
// nvidia-smi): what it adds to every step's start.
func BenchmarkProbe(b *testing.B) {
	root := b.TempDir()
	header := "Metadata-Version: 2.1\nName: pkg%d\nVersion: 1.%d\n" + strings.Repeat("Classifier: Programming Language :: Python :: 3\n", 100) + "\n" + strings.Repeat("body ", 4000)
	for i := range 400 {
		dir := filepath.Join(root, "site-packages", fmt.Sprintf("pkg%d-1.%d.dist-info", i, i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "METADATA"), fmt.Appendf(nil, header, i, i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	o := Options{Roots: []string{filepath.Join(root, "site-packages")}, Env: []string{"PATH=" + root}}
	b.ResetTimer()
	for b.Loop() {
		if rec := Probe(context.Background(), o); len(rec.Packages) != 400 {
			b.Fatalf("%d packages", len(rec.Packages))
		}
	}
}

// Without Roots, a venv whose bin/ is on PATH is searched (VIRTUAL_ENV
// unset), as images put /opt/dynamo/venv/bin there.
func TestProbeFindsVenvOnPath(t *testing.T) {
	venv := t.TempDir()
	writeFile(t, filepath.Join(venv, "lib", "python3.12", "site-packages", "ai_dynamo-0.6.1.dist-info", "METADATA"), "Name: ai-dynamo\nVersion: 0.6.1\n")
	if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	now, host := fixed()
	rec := Probe(context.Background(), Options{Env: []string{"PATH=" + filepath.Join(venv, "bin") + ":/nonexistent/bin"}, Now: now, Hostname: host,
		RunGPUQuery: func(context.Context) ([]byte, error) { return nil, nil }})
	if !slices.Contains(rec.Packages, Package{Name: "ai-dynamo", Version: "0.6.1"}) ||
		!slices.Contains(rec.SitePackages, filepath.Join(venv, "lib", "python3.12", "site-packages")) {
		t.Errorf("packages %v from %v: want the venv's ai-dynamo", rec.Packages, rec.SitePackages)
	}
}
