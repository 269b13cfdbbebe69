package plan

import "strconv"

// HostPlaceholder is {host:N}: node n's hostname, which the driver fills
// in from the allocation (as srun --nodelist takes it).
func HostPlaceholder(n int) string { return "{host:" + strconv.Itoa(n) + "}" }

// IPPlaceholder is {ip:N}: node n's address for other nodes and clients,
// which the driver fills in from the allocation.
func IPPlaceholder(n int) string { return "{ip:" + strconv.Itoa(n) + "}" }

// PortPublicFrontend is the port of the job's public endpoint, the one
// clients and the health gate reach (srtctl's, docs/plan-format.md).
const PortPublicFrontend = 8000
