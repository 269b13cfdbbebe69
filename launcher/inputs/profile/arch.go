package profile

import "runtime"

// GoArch is this machine's architecture as uname -m names it (and as
// slurm.compute_arch is written): x86_64, aarch64.
func GoArch() string { return ArchName(runtime.GOARCH) }

// ArchName maps a GOARCH to uname -m's name for it.
func ArchName(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return goarch
}

// ComputeArch is the compute nodes' architecture: slurm.compute_arch, or
// this machine's when the profile does not say.
func (p *Profile) ComputeArch() string {
	if p.Slurm.ComputeArch != "" {
		return p.Slurm.ComputeArch
	}
	return GoArch()
}

// ImportOnNodes is container.import_on's value for a squash cache on each
// node's own disk: the job imports the image on every node of its
// allocation before anything starts there (a runners.yaml record's import:
// all-nodes, or a node-local cache; runners.SquashPolicy.NeedsJob).
const ImportOnNodes = "nodes"

// ImportOnNodes reports that the job imports images on its nodes, so
// nothing is imported before it is submitted.
func (p *Profile) ImportOnNodes() bool { return p.Container.ImportOn == ImportOnNodes }

// ImportOnCompute reports where images are imported: as container.import_on
// says, else on a compute node when its architecture differs from this
// machine's (an image is unpacked for the architecture it runs on). The
// job's own nodes (ImportOnNodes) are compute nodes too.
func (p *Profile) ImportOnCompute() bool {
	switch p.Container.ImportOn {
	case "compute", ImportOnNodes:
		return true
	case "login":
		return false
	}
	return p.Slurm.ComputeArch != "" && p.Slurm.ComputeArch != GoArch()
}

// ImportArch is enroot import --arch for an import on this machine: the
// compute nodes' architecture when it differs from this machine's and
// container.import_on = "login" keeps the import here; "" otherwise (an
// import on a compute node unpacks for that node's own architecture).
// ImportOnCompute and ImportArch are the one decision run and images
// import share.
func (p *Profile) ImportArch() string {
	if p.ImportOnCompute() || p.ComputeArch() == GoArch() {
		return ""
	}
	return p.ComputeArch()
}
