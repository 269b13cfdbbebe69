package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// IsServer reports whether a process of role r serves the model (infra,
// the steps that prepare the workers, workers, routers): what a held
// deployment keeps between runs. Benchmark, eval and telemetry steps
// belong to one run.
func IsServer(r Role) bool {
	switch r {
	case RoleHostSetup, RoleImage, RoleInfra, RolePrepare, RolePrefill, RoleDecode, RoleAgg, RoleFrontend, RoleNginx:
		return true
	}
	return false
}

// servingView is what decides whether two plans serve the same thing: the
// server processes (programs, arguments, environment, placement, files),
// the image, runtime, model and health gate. Run-specific paths are
// written relative to each plan's run directory and logs are left out, so
// two runs of one recipe compare equal.
type servingView struct {
	Runtime   string    `json:"runtime"`
	Enroot    string    `json:"enroot"`
	Squash    string    `json:"squash"`
	Model     Model     `json:"model"`
	Backend   string    `json:"backend"`
	Frontend  string    `json:"frontend"`
	Health    Health    `json:"health"`
	Dynamo    Dynamo    `json:"dynamo"`
	Passenv   []string  `json:"env_passthrough"`
	Processes []Process `json:"processes"`
}

func (p *Plan) servingJSON() []byte {
	v := servingView{Runtime: string(p.Runtime), Enroot: p.Enroot, Squash: p.Image.Squash, Model: p.Model,
		Backend: p.Backend, Frontend: p.Frontend, Health: p.Health, Dynamo: p.Dynamo, Passenv: p.EnvPassthrough}
	for _, proc := range p.Processes {
		if IsServer(proc.Role) {
			proc.Log = ""
			v.Processes = append(v.Processes, proc)
		}
	}
	b, _ := json.Marshal(v) // plain data: cannot fail
	// The run directory appears in the encoding as json.Marshal writes it.
	dir, _ := json.Marshal(p.RunDir)
	return bytes.ReplaceAll(b, bytes.Trim(dir, `"`), []byte("{run_dir}"))
}

// SameServing reports whether plan b would start exactly the servers a
// runs: then a held deployment of a can run b's benchmark and eval as they
// are, without restarting anything.
func SameServing(a, b *Plan) bool {
	return bytes.Equal(a.servingJSON(), b.servingJSON())
}

// SameProcess reports whether process pa of plan a and pb of plan b are
// the same process: name, program, arguments, environment, placement,
// ports and files, in the same image and runtime, run-specific paths
// written relative to each plan's run directory and logs left out. A held
// deployment keeps such a process (NATS, etcd, a finished model staging)
// across a restart in place.
func SameProcess(a *Plan, pa Process, b *Plan, pb Process) bool {
	return bytes.Equal(a.processJSON(pa), b.processJSON(pb))
}

func (p *Plan) processJSON(proc Process) []byte {
	proc.Log = ""
	v := struct {
		Runtime, Enroot, Squash string
		Proc                    Process
	}{string(p.Runtime), p.Enroot, p.Image.Squash, proc}
	b, _ := json.Marshal(v) // plain data: cannot fail
	dir, _ := json.Marshal(p.RunDir)
	return bytes.ReplaceAll(b, bytes.Trim(dir, `"`), []byte("{run_dir}"))
}

// ServingDigest is a digest of what SameServing compares: two plans
// serve identically exactly when their digests are equal (matrix orders
// the rows of one allocation by it, so identical servers run back to
// back without a restart).
func (p *Plan) ServingDigest() string {
	sum := sha256.Sum256(p.servingJSON())
	return hex.EncodeToString(sum[:])
}

// Fits checks that p can run inside an allocation of nodes nodes with
// gpusPerNode GPUs each; the error names both sides.
func (p *Plan) Fits(nodes, gpusPerNode int) error {
	var short []string
	if p.Nodes > nodes {
		short = append(short, fmt.Sprintf("%d more node(s)", p.Nodes-nodes))
	}
	if p.GPUsPerNode > gpusPerNode {
		short = append(short, fmt.Sprintf("%d more GPU(s) per node", p.GPUsPerNode-gpusPerNode))
	}
	if len(short) == 0 {
		return nil
	}
	return fmt.Errorf("%s needs %d nodes × %d GPUs (%d GPUs: %d prefill, %d decode), the allocation has %d nodes × %d GPUs: short by %s",
		p.Name, p.Nodes, p.GPUsPerNode, p.GPUs.Total, p.GPUs.Prefill, p.GPUs.Decode+p.GPUs.Agg, nodes, gpusPerNode, strings.Join(short, " and "))
}
