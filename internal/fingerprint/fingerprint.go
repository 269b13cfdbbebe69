// Package fingerprint records what a step really ran, from inside its
// container: the argv it execs, the names (never the values) of its
// environment, the Python packages installed in the image (read from their
// dist-info METADATA files, so the image needs no Python and no pip), and
// the GPUs and driver nvidia-smi reports. It is slurmbench's counterpart of
// srtctl's fingerprint step (pip freeze, GPUs, driver, environment in every
// worker container): the `slurmbench exec` shim probes just before it
// execs the step's program, and the login node folds every record into the
// staged manifest (results.Runtime).
//
// A probe never fails a step: what it cannot read (no nvidia-smi, no
// site-packages, as in the mock engine's image) is said in Notes.
package fingerprint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// SchemaVersion changes when Record's shape does.
const SchemaVersion = 1

// Bounds: a probe reads at most this much of an image, so a strange one
// (a huge site-packages, a METADATA that is not one) cannot stall a step.
const (
	maxDirs        = 32
	maxPackages    = 5000
	metadataHeader = 64 << 10 // the header block of METADATA is first
	maxRecordBytes = 8 << 20
	maxRecords     = 4096
	gpuQueryLimit  = 15 * time.Second
)

// Record is one step's fingerprint, as one of its tasks saw it.
type Record struct {
	SchemaVersion int    `json:"schema_version"`
	Step          string `json:"step"`
	Host          string `json:"host"`
	// Task is SLURM_PROCID: a step with several tasks writes one record each.
	Task     string    `json:"task,omitempty"`
	Time     time.Time `json:"time"`
	Argv     []string  `json:"argv"`
	EnvNames []string  `json:"env_names"`
	// SitePackages are the directories the packages were read from.
	SitePackages []string  `json:"site_packages,omitempty"`
	Packages     []Package `json:"packages,omitempty"`
	GPUs         []GPU     `json:"gpus,omitempty"`
	// Arch is the machine (runtime.GOARCH of the shim, which runs natively);
	// OS is /etc/os-release's PRETTY_NAME inside the container.
	Arch string `json:"arch"`
	OS   string `json:"os,omitempty"`
	// CUDA is the toolkit's version from /usr/local/cuda/version.json
	// (srtctl asks nvcc; the file needs no program).
	CUDA string `json:"cuda,omitempty"`
	CPU  CPU    `json:"cpu"`
	// Notes say what could not be read and why.
	Notes []string `json:"notes,omitempty"`
}

// CPU is the processor and the share of it the step may use, as srtctl's
// cpu_info records it.
type CPU struct {
	Model       string `json:"model,omitempty"`
	LogicalCPUs int    `json:"logical_cpus,omitempty"`
	// AffinityCPUs is how many CPUs the step may run on (its cgroup/affinity).
	AffinityCPUs int               `json:"affinity_cpus"`
	Slurm        map[string]string `json:"slurm,omitempty"`
}

// Package is one installed distribution, as `pip freeze` names it.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// GPU is one line of nvidia-smi --query-gpu.
type GPU struct {
	Index  string `json:"index"`
	Name   string `json:"name"`
	Driver string `json:"driver"`
	Memory string `json:"memory,omitempty"` // memory.total as printed, e.g. "183359 MiB"
	UUID   string `json:"uuid,omitempty"`
}

// DefaultRoots are where images keep Python packages (glob patterns); the
// environment's VIRTUAL_ENV, CONDA_PREFIX and PYTHONPATH add theirs.
var DefaultRoots = []string{
	"/usr/lib/python3*/site-packages", "/usr/lib/python3*/dist-packages", "/usr/lib/python3/dist-packages",
	"/usr/local/lib/python3*/site-packages", "/usr/local/lib/python3*/dist-packages",
	"/opt/dynamo/venv/lib/python3*/site-packages", "/opt/conda/lib/python3*/site-packages", "/opt/venv/lib/python3*/site-packages",
	"/root/.local/lib/python3*/site-packages",
}

// GPUQueryArgv is the nvidia-smi query a probe runs.
var GPUQueryArgv = []string{"nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,uuid", "--format=csv,noheader"}

// Options tune a probe; the zero value probes the real image.
type Options struct {
	Step string
	Argv []string
	// Env is the step's environment as it will be exec'd (KEY=VALUE);
	// only names are kept.
	Env []string
	// Roots replace DefaultRoots (tests).
	Roots []string
	// RunGPUQuery runs GPUQueryArgv; nil runs nvidia-smi from Env's PATH.
	RunGPUQuery func(ctx context.Context) ([]byte, error)
	Now         func() time.Time
	Hostname    func() (string, error)
	// Root prefixes /etc/os-release and /proc/cpuinfo (tests); "" is /.
	Root string
}

// Probe fingerprints the current process's view of the image.
func Probe(ctx context.Context, o Options) Record {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	hostname := os.Hostname
	if o.Hostname != nil {
		hostname = o.Hostname
	}
	rec := Record{SchemaVersion: SchemaVersion, Step: o.Step, Time: now().UTC(), Argv: slices.Clone(o.Argv)}
	if rec.Argv == nil {
		rec.Argv = []string{}
	}
	host, err := hostname()
	if err != nil {
		rec.Notes = append(rec.Notes, "hostname: "+err.Error())
	}
	rec.Host = host
	envMap := map[string]string{}
	for _, kv := range o.Env {
		k, v, _ := strings.Cut(kv, "=")
		if k != "" {
			envMap[k] = v
		}
	}
	rec.Task = envMap["SLURM_PROCID"]
	rec.Arch, rec.OS, rec.CPU, rec.CUDA = runtime.GOARCH, osName(o.Root), cpuInfo(o.Root, envMap), cudaVersion(o.Root)
	rec.EnvNames = make([]string, 0, len(envMap))
	for k := range envMap {
		rec.EnvNames = append(rec.EnvNames, k)
	}
	sort.Strings(rec.EnvNames)

	roots := o.Roots
	if roots == nil {
		roots = slices.Clone(DefaultRoots)
		for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
			if p := envMap[k]; filepath.IsAbs(p) {
				roots = append(roots, filepath.Join(p, "lib", "python3*", "site-packages"))
			}
		}
		for _, p := range filepath.SplitList(envMap["PYTHONPATH"]) {
			if filepath.IsAbs(p) {
				roots = append(roots, p)
			}
		}
		// A venv whose bin/ is on PATH (without VIRTUAL_ENV set), as
		// images put /opt/dynamo/venv/bin or /app/.venv/bin there.
		for _, p := range filepath.SplitList(envMap["PATH"]) {
			if filepath.IsAbs(p) && filepath.Base(p) == "bin" {
				roots = append(roots, filepath.Join(filepath.Dir(p), "lib", "python3*", "site-packages"))
			}
		}
	}
	rec.SitePackages, rec.Packages, rec.Notes = packages(roots, rec.Notes)

	run := o.RunGPUQuery
	if run == nil {
		run = func(ctx context.Context) ([]byte, error) { return nvidiaSMI(ctx, envMap["PATH"]) }
	}
	qctx, cancel := context.WithTimeout(ctx, gpuQueryLimit)
	defer cancel()
	out, err := run(qctx)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		rec.Notes = append(rec.Notes, "nvidia-smi not found in PATH: GPU model and driver unknown")
	case err != nil:
		rec.Notes = append(rec.Notes, fmt.Sprintf("nvidia-smi: %v: GPU model and driver unknown", err))
	default:
		gpus, perr := ParseGPUs(out)
		if perr != nil {
			rec.Notes = append(rec.Notes, "nvidia-smi: "+perr.Error())
		}
		rec.GPUs = gpus
		if len(gpus) == 0 && perr == nil {
			rec.Notes = append(rec.Notes, "nvidia-smi listed no GPUs")
		}
	}
	return rec
}

// nvidiaSMI runs the query with the step's PATH (the container's).
func nvidiaSMI(ctx context.Context, path string) ([]byte, error) {
	prog := ""
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, GPUQueryArgv[0])
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			prog = p
			break
		}
	}
	if prog == "" {
		return nil, exec.ErrNotFound
	}
	cmd := exec.CommandContext(ctx, prog, GPUQueryArgv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%w (%s)", err, firstLine(msg))
		}
		return nil, err
	}
	return out, nil
}

// ParseGPUs reads nvidia-smi's csv,noheader lines: index, name, driver,
// memory.total, uuid (names have no commas in nvidia-smi's output).
func ParseGPUs(out []byte) ([]GPU, error) {
	var gpus []GPU
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 3 {
			return gpus, fmt.Errorf("line %d %q: want index, name, driver_version[, memory.total[, uuid]]", n, line)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		g := GPU{Index: f[0], Name: f[1], Driver: f[2]}
		if len(f) > 3 {
			g.Memory = f[3]
		}
		if len(f) > 4 {
			g.UUID = f[4]
		}
		gpus = append(gpus, g)
	}
	return gpus, sc.Err()
}

// packages reads every *.dist-info/METADATA (and *.egg-info/PKG-INFO)
// under the roots that exist, deduplicated and sorted by name.
func packages(roots []string, notes []string) ([]string, []Package, []string) {
	var dirs []string
	for _, pat := range roots {
		matches, _ := filepath.Glob(pat)
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() && !slices.Contains(dirs, m) {
				dirs = append(dirs, m)
			}
		}
	}
	if len(dirs) > maxDirs {
		notes = append(notes, fmt.Sprintf("%d site-packages directories: read the first %d", len(dirs), maxDirs))
		dirs = dirs[:maxDirs]
	}
	if len(dirs) == 0 {
		return nil, nil, append(notes, "no Python site-packages found: engine and library versions unknown")
	}
	seen := map[Package]bool{}
	var pkgs []Package
	unreadable := 0
	buf := make([]byte, metadataHeader)
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			notes = append(notes, fmt.Sprintf("reading %s: %v", dir, err))
			continue
		}
		for _, e := range ents {
			var meta string
			switch name := e.Name(); {
			case strings.HasSuffix(name, ".dist-info"):
				meta = filepath.Join(dir, name, "METADATA")
			case strings.HasSuffix(name, ".egg-info"):
				meta = filepath.Join(dir, name, "PKG-INFO")
				if !e.IsDir() {
					meta = filepath.Join(dir, name) // an egg-info file is the PKG-INFO itself
				}
			default:
				continue
			}
			p, err := readMetadata(meta, buf)
			if err != nil {
				unreadable++
				continue
			}
			if !seen[p] && len(pkgs) < maxPackages {
				seen[p] = true
				pkgs = append(pkgs, p)
			}
		}
	}
	if unreadable > 0 {
		notes = append(notes, fmt.Sprintf("%d package metadata files unreadable or without Name/Version", unreadable))
	}
	if len(pkgs) >= maxPackages {
		notes = append(notes, fmt.Sprintf("more than %d packages: the list is cut", maxPackages))
	}
	sort.Slice(pkgs, func(i, j int) bool {
		a, b := strings.ToLower(pkgs[i].Name), strings.ToLower(pkgs[j].Name)
		if a != b {
			return a < b
		}
		return pkgs[i].Version < pkgs[j].Version
	})
	if len(pkgs) == 0 {
		notes = append(notes, "site-packages hold no package metadata: engine and library versions unknown")
	}
	return dirs, pkgs, notes
}

// readMetadata reads Name and Version from the header block of a core
// metadata file (RFC 822 style: headers end at the first blank line).
func readMetadata(path string, buf []byte) (Package, error) {
	f, err := os.Open(path)
	if err != nil {
		return Package{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return Package{}, fmt.Errorf("%s: not a regular file", path)
	}
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Package{}, err
	}
	head := buf[:n]
	// Only the header block is parsed: the description after it is
	// most of the file.
	if i := bytes.Index(head, []byte("\n\n")); i >= 0 {
		head = head[:i]
	}
	if i := bytes.Index(head, []byte("\r\n\r\n")); i >= 0 {
		head = head[:i]
	}
	var p Package
	for _, line := range strings.Split(string(head), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			switch k {
			case "Name":
				p.Name = strings.TrimSpace(v)
			case "Version":
				p.Version = strings.TrimSpace(v)
			}
		}
	}
	if p.Name == "" || p.Version == "" {
		return p, fmt.Errorf("%s: no Name/Version", path)
	}
	return p, nil
}

// FileName is the record's file in the fingerprint directory: one per
// step and task.
func FileName(step, task string) string {
	if task == "" {
		task = "0"
	}
	return step + ".task" + task + ".json"
}

// Write stores rec in dir (created), atomically.
func Write(dir string, rec Record) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	path := filepath.Join(dir, FileName(rec.Step, rec.Task))
	return path, atomicfile.WriteFile(path, append(b, '\n'), atomicfile.Options{Overwrite: true, Perm: 0o644})
}

// ReadDir reads every record in dir, sorted by step then task; files that
// cannot be read are problems, not errors. A missing dir has no records.
func ReadDir(dir string) ([]Record, []string) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("reading fingerprints: %v", err)}
	}
	var recs []Record
	var problems []string
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), atomicfile.TempPrefix) {
			continue
		}
		if len(recs) >= maxRecords {
			problems = append(problems, fmt.Sprintf("more than %d fingerprints in %s: the rest not read", maxRecords, dir))
			break
		}
		path := filepath.Join(dir, e.Name())
		b, err := readlimit.ReadFile(path, maxRecordBytes)
		if err != nil {
			problems = append(problems, fmt.Sprintf("fingerprint %s: %v", path, err))
			continue
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			problems = append(problems, fmt.Sprintf("fingerprint %s: %v", path, err))
			continue
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].Step != recs[j].Step {
			return recs[i].Step < recs[j].Step
		}
		a, _ := strconv.Atoi(recs[i].Task)
		b, _ := strconv.Atoi(recs[j].Task)
		return a < b
	})
	return recs, problems
}

// osName is PRETTY_NAME from the image's /etc/os-release, as srtctl's
// probe_os reads it.
func osName(root string) string {
	b, err := readlimit.ReadFile(filepath.Join(root, "/etc/os-release"), 64<<10)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// cudaVersion reads the CUDA toolkit's version.json ("" when absent).
func cudaVersion(root string) string {
	b, err := readlimit.ReadFile(filepath.Join(root, "/usr/local/cuda/version.json"), 1<<20)
	if err != nil {
		return ""
	}
	var v struct {
		CUDA struct {
			Version string `json:"version"`
		} `json:"cuda"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v.CUDA.Version
}

// cpuInfo is srtctl's cpu_info: the model from /proc/cpuinfo (x86's
// "model name", else "CPU model"/"Hardware"), the logical CPUs, how many
// this step may use, and Slurm's CPU variables.
func cpuInfo(root string, env map[string]string) CPU {
	c := CPU{AffinityCPUs: runtime.NumCPU()}
	for _, k := range []string{"SLURM_CPUS_ON_NODE", "SLURM_CPUS_PER_GPU", "SLURM_CPUS_PER_TASK", "SLURM_JOB_CPUS_PER_NODE"} {
		if v, ok := env[k]; ok {
			if c.Slurm == nil {
				c.Slurm = map[string]string{}
			}
			c.Slurm[k] = v
		}
	}
	// /proc files report size 0: read through a bounded reader, not Stat.
	f, err := os.Open(filepath.Join(root, "/proc/cpuinfo"))
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 16<<20))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch {
		case k == "processor" && isDecimal(v):
			c.LogicalCPUs++
		case c.Model == "" && v != "" && (k == "model name" || k == "cpu model" || k == "hardware"):
			c.Model = v
		}
	}
	return c
}

func isDecimal(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
