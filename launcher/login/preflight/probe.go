package preflight

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/slurm"
)

// probeScript reports what one compute node has, as key=value lines. It is
// a constant: the only input, the enroot program, comes in the environment.
const probeScript = `#!/bin/sh
echo "arch=$(uname -m)"
echo "host=$(hostname)"
echo "slurm_gpus=${SLURM_GPUS_ON_NODE:-}"
echo "cuda_visible_devices=${CUDA_VISIBLE_DEVICES:-}"
if command -v nvidia-smi >/dev/null 2>&1; then
	echo "nvidia_smi=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
fi
enroot="${SLURMBENCH_PROBE_ENROOT:-enroot}"
if command -v "$enroot" >/dev/null 2>&1; then
	echo "enroot=$("$enroot" version 2>/dev/null | head -n 1)"
else
	echo "enroot=missing"
fi
if srun --help 2>&1 | grep -q -- '--container-image'; then echo "pyxis=yes"; else echo "pyxis=no"; fi
# pyxis's version: the plugin plugstack.conf loads carries the line
# "pyxis: version vX.Y.Z" that slurmd logs (pyxis_slurmd.c).
# PlugStackConfig is "(null)" when unset: then plugstack.conf beside slurm.conf.
config=$(scontrol show config 2>/dev/null)
plugstack=$(printf '%s\n' "$config" | sed -n 's/^PlugStackConfig *= *//p')
case "$plugstack" in ""|"(null)")
	conf=$(printf '%s\n' "$config" | sed -n 's/^SLURM_CONF *= *//p')
	plugstack=$(dirname "${conf:-/etc/slurm/slurm.conf}")/plugstack.conf ;;
esac
so=$(grep -ho '[^ 	]*spank_pyxis\.so' "$plugstack" "$plugstack".d/*.conf 2>/dev/null | head -n 1)
if [ -n "$so" ] && [ -r "$so" ]; then
	echo "pyxis_version=$(grep -ao 'pyxis: version v[0-9][0-9a-z.+~-]*' "$so" | head -n 1 | sed 's/^pyxis: version v//')"
fi
# Slurm's own containers (srun --container) need oci.conf beside slurm.conf
# (oci.conf(5)); its RunTimeRun or RunTimeCreate names the OCI runtime.
slurmconf=$(printf '%s\n' "$config" | sed -n 's/^SLURM_CONF *= *//p')
ociconf=$(dirname "${slurmconf:-/etc/slurm/slurm.conf}")/oci.conf
if [ -r "$ociconf" ]; then
	rt=$(sed -n 's/^[[:space:]]*[Rr][Uu][Nn][Tt][Ii][Mm][Ee]\(Run\|Create\)[[:space:]]*=[[:space:]]*"\{0,1\}\([^ "]*\).*/\2/p' "$ociconf" | head -n 1)
	# crun wants a state directory even for --version.
	v=$(XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}" "$rt" --version 2>/dev/null | head -n 1)
	echo "oci=${v:-${rt:-unknown runtime}}"
else
	echo "oci=missing"
fi
`

// NodeReport is what the probe job found on its node.
type NodeReport struct {
	Host string `json:"host"`
	Arch string `json:"arch"`
	// GPUs is nvidia-smi's count when it is there, else Slurm's
	// SLURM_GPUS_ON_NODE for the GPUs the job asked for; -1 when neither.
	GPUs   int    `json:"gpus"`
	Enroot string `json:"enroot"` // its version, or "" when missing
	Pyxis  bool   `json:"pyxis"`
	// PyxisVersion is the version in the plugin plugstack.conf loads, ""
	// when it could not be read.
	PyxisVersion string `json:"pyxis_version,omitempty"`
	// OCI is the OCI runtime oci.conf names, with its version when it
	// tells ("crun version 1.21"); "" when the node has no oci.conf.
	OCI string `json:"oci,omitempty"`
}

// ParseNodeReport reads the probe script's output.
func ParseNodeReport(out string) (NodeReport, error) {
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
			kv[k] = strings.TrimSpace(v)
		}
	}
	if kv["arch"] == "" {
		return NodeReport{}, errors.New("the probe printed no arch= line")
	}
	n := NodeReport{Host: kv["host"], Arch: kv["arch"], GPUs: -1, Pyxis: kv["pyxis"] == "yes", PyxisVersion: kv["pyxis_version"]}
	if v := kv["oci"]; v != "missing" {
		n.OCI = v
	}
	if v := kv["enroot"]; v != "missing" {
		n.Enroot = firstNonEmpty(v, "(version unknown)")
	}
	for _, k := range []string{"nvidia_smi", "slurm_gpus"} {
		if g, err := strconv.Atoi(kv[k]); err == nil {
			n.GPUs = g
			break
		}
	}
	return n, nil
}

// probe runs probeScript as a one-node job asking for the profile's GPUs
// per node, and checks the node against the profile.
func (r *run) probe(ctx context.Context) {
	p := r.p
	dir := filepath.Join(p.Paths.RunsDir, ".doctor")
	out, err := r.runProbe(ctx, dir)
	if err != nil {
		r.fail("probe", layerSlurm, errText(err), "see the job with slurmbench status --profile "+p.Path+" JOBID")
		return
	}
	n, err := ParseNodeReport(out)
	if err != nil {
		r.fail("probe", layerSlurm, fmt.Sprintf("%v; output: %s", err, oneLine(out)), "run the probe's script by hand on a compute node")
		return
	}
	var problems, fixes []string
	if want := p.ComputeArch(); n.Arch != want {
		problems = append(problems, fmt.Sprintf("the node is %s, the profile expects %s", n.Arch, want))
		fixes = append(fixes, fmt.Sprintf("set slurm.compute_arch = %q in %s", n.Arch, p.Path))
	}
	if n.GPUs >= 0 && n.GPUs < p.Slurm.GPUsPerNode {
		problems = append(problems, fmt.Sprintf("the job saw %d GPUs, the profile says %d", n.GPUs, p.Slurm.GPUsPerNode))
		fixes = append(fixes, "set slurm.gpus_per_node in "+p.Path)
	}
	switch p.Container.Runtime {
	case profile.RuntimePyxis:
		if !n.Pyxis {
			problems = append(problems, "srun has no --container-image (no pyxis)")
			fixes = append(fixes, fmt.Sprintf("set container.runtime = \"enroot\" in %s", p.Path))
		}
	case profile.RuntimeEnroot:
		if n.Enroot == "" {
			problems = append(problems, "enroot is not on the node")
			fixes = append(fixes, "set container.enroot in "+p.Path+" to enroot's path on the nodes")
		}
	case profile.RuntimeOCI:
		if n.OCI == "" {
			problems = append(problems, "the node has no oci.conf, so Slurm would ignore srun --container")
			fixes = append(fixes, "configure Slurm's OCI containers on the nodes (oci.conf, slurm.schedmd.com/containers.html), or set container.runtime in "+p.Path)
		}
	}
	gpus := strconv.Itoa(n.GPUs)
	if n.GPUs < 0 {
		gpus = "unknown"
	}
	pyxis := yesNo(n.Pyxis)
	if n.Pyxis && n.PyxisVersion != "" {
		pyxis = n.PyxisVersion
	}
	found := fmt.Sprintf("%s: %s, %s GPUs, enroot %s, pyxis %s", n.Host, n.Arch, gpus, firstNonEmpty(n.Enroot, "missing"), pyxis)
	if n.OCI != "" {
		found += ", oci " + n.OCI
	}
	if len(problems) > 0 {
		r.fail("probe", layerConfig, found+"; "+strings.Join(problems, "; "), strings.Join(fixes, "; "))
		return
	}
	r.pass("probe", "%s", found)
}

// runProbe submits the probe, waits for it (bounded) and returns its output.
func (r *run) runProbe(ctx context.Context, dir string) (string, error) {
	p := r.p
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the probe's directory: %w", err)
	}
	if p.Paths.Owner != "" {
		// Jobs run as another user than slurmbench (a test cluster).
		uid, gid, err := profile.ParseOwner(p.Paths.Owner)
		if err == nil {
			err = os.Chown(dir, uid, gid)
		}
		if err != nil {
			return "", fmt.Errorf("giving %s to %s: %w", dir, p.Paths.Owner, err)
		}
	}
	outFile := filepath.Join(dir, fmt.Sprintf("probe-%d.out", time.Now().UnixNano()))
	defer os.Remove(outFile)
	env := append([]string{}, slurm.DefaultJobEnvironment...)
	if p.Container.Enroot != "" {
		env = append(env, "SLURMBENCH_PROBE_ENROOT="+p.Container.Enroot)
	}
	spec := slurm.JobSpec{
		Name: "slurmbench-doctor", Script: probeScript, Nodes: "1", TasksPerNode: 1,
		Partition: p.Slurm.Partition, Account: p.Slurm.Account, TimeLimit: 5 * time.Minute,
		GPUsPerNode: p.Slurm.GPUsPerNode, Environment: env, WorkDir: dir, StdOut: outFile, StdErr: outFile,
		Comment: "slurmbench doctor probe",
	}
	sub, err := r.client.Submit(context.WithoutCancel(ctx), spec)
	if err != nil {
		return "", fmt.Errorf("submitting the probe job: %w", err)
	}
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, "probe: job %d submitted, waiting up to %s\n", sub.JobID, r.o.ProbeTimeout)
	}
	wctx, cancel := context.WithTimeout(ctx, r.o.ProbeTimeout)
	defer cancel()
	var last slurm.Job
	job, err := r.client.Wait(wctx, sub.JobID, slurm.WaitOptions{OnChange: func(j slurm.Job) {
		last = j
		if r.o.Progress != nil {
			fmt.Fprintf(r.o.Progress, "probe: job %d %s\n", j.ID, j.Outcome())
		}
	}})
	if err != nil {
		_ = r.client.CancelJob(context.WithoutCancel(ctx), sub.JobID)
		if wctx.Err() != nil && ctx.Err() == nil {
			return "", fmt.Errorf("probe job %d did not finish within %s (last %s)", sub.JobID, r.o.ProbeTimeout, orUnknown(last.Outcome()))
		}
		return "", fmt.Errorf("probe job %d: %w", sub.JobID, err)
	}
	b, rerr := os.ReadFile(outFile)
	if !job.Success() {
		return "", fmt.Errorf("probe job %d ended %s: %s", sub.JobID, job.Outcome(), oneLine(string(b)))
	}
	if rerr != nil {
		return "", fmt.Errorf("probe job %d: reading its output: %w", sub.JobID, rerr)
	}
	return string(b), nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
