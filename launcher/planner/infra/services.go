package infra

import (
	"cmp"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// services plans the recipe's generic services: one process per placed
// node (srtctl launches one srun per node), its log named after the
// service (service_<name>, with the node index when it runs on several),
// the recipe's command run as argv in the job container unless the entry
// names one. A preamble runs from a script file before the command.
func (b *builder) services() error {
	for _, s := range b.Recipe().Services {
		if !s.IsEnabled() || s.EffectiveType() != "generic" {
			continue // the discovery kinds run as infra (the v1 fields they map to)
		}
		field := fmt.Sprintf("services[%s]", s.Name) // as the reader names entries
		nodes, err := b.serviceNodes(s.EffectivePlacement(), field+".placement.node")
		if err != nil {
			return err
		}
		image := ""
		if s.Container != "" {
			ref, err := b.Profile().ContainerRef(s.Container)
			if err != nil {
				return b.Fail(field+".container", "%v", err)
			}
			image = ref
		}
		for k, node := range nodes {
			name := "service_" + s.Name
			if len(nodes) > 1 {
				name += "_" + strconv.Itoa(node)
			}
			proc := plan.Process{Name: name, Role: plan.RoleService, Worker: k, Nodes: []int{node}, Container: true, Image: image,
				Mounts: b.Mounts(), Log: b.LogPath(name), Critical: s.EffectiveCritical(), Start: s.EffectiveStart(),
				Env: b.serviceEnv(s, node, k), Srun: plan.SrunOptions{Extra: b.serviceSrun(s)}}
			argv := b.serviceTemplate(s.EffectiveCommand(), node, k, s.EffectivePlacement())
			if plan.IsShellString(argv) {
				return b.Fail(field+".command", "%s hands a string to a shell; put the commands in a script (or in preamble) and run that", plan.QuoteArgv(argv))
			}
			if s.Preamble != "" {
				// Run as a script file, never a shell string in argv: the
				// preamble's exports reach the command it execs.
				script := filepath.Join(b.Plan().Layout.Logs, name+".preamble.sh")
				body := "# services[" + s.Name + "].preamble, then the service's command (slurmbench)\n" +
					b.serviceTemplate([]string{s.Preamble}, node, k, s.EffectivePlacement())[0] + "\nexec \"$@\"\n"
				proc.Files = map[string]string{script: body}
				argv = append([]string{"bash", script}, argv...)
			}
			proc.Argv = argv
			if rd := s.Readiness; rd != nil {
				proc.Ready = serviceProbe(rd, node)
				if proc.Ready.Port > 0 {
					proc.Ports = map[string]int{"service": proc.Ready.Port}
				}
			}
			b.Add(proc)
		}
	}
	return nil
}

// serviceProbe is the plan's form of a readiness block on node.
func serviceProbe(rd *recipe.ServiceReadiness, node int) *plan.Probe {
	pr := &plan.Probe{Node: node, TimeoutSeconds: recipe.DefaultReadinessTimeoutSeconds, IntervalSeconds: recipe.DefaultReadinessIntervalSeconds}
	if rd.TimeoutSeconds != nil {
		pr.TimeoutSeconds = *rd.TimeoutSeconds
	}
	if rd.IntervalSeconds != nil {
		pr.IntervalSeconds = *rd.IntervalSeconds
	}
	switch {
	case rd.Port != nil:
		pr.Port = *rd.Port
	case rd.TCP != nil:
		pr.Port = rd.TCP.Port
	case rd.HTTP != nil:
		pr.Port, pr.Path, pr.Status = rd.HTTP.Port, cmp.Or(rd.HTTP.Path, "/health"), 200
		if rd.HTTP.Status != nil {
			pr.Status = *rd.HTTP.Status
		}
	case rd.Log != nil:
		pr.Pattern = rd.Log.Pattern
	}
	return pr
}

// serviceNodes resolves placement.node as srtctl's services stage does:
// head and infra are one node; prefill, decode and agg every distinct node
// that role's workers use, in launch order; workers and compute every
// worker node; all every node of the allocation.
func (b *builder) serviceNodes(placement, field string) ([]int, error) {
	switch placement {
	case "head":
		return []int{b.HeadNode()}, nil
	case "infra":
		return []int{b.InfraNode()}, nil
	case "all":
		out := make([]int, b.Plan().Nodes)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	roles := map[string][]plan.Role{"prefill": {plan.RolePrefill}, "decode": {plan.RoleDecode}, "agg": {plan.RoleAgg},
		"workers": {plan.RolePrefill, plan.RoleDecode, plan.RoleAgg}, "compute": {plan.RolePrefill, plan.RoleDecode, plan.RoleAgg}}[placement]
	if roles == nil {
		return nil, b.Fail(field, "%q is not a placement slurmbench runs a generic service on (head, infra, prefill, decode, agg, workers, compute, all)", placement)
	}
	seen := map[int]bool{}
	var out []int
	for _, p := range b.Plan().Processes {
		for _, r := range roles {
			if p.Role != r {
				continue
			}
			for _, n := range p.Nodes {
				if !seen[n] {
					seen[n] = true
					out = append(out, n)
				}
			}
		}
	}
	if placement == "workers" || placement == "compute" {
		sort.Ints(out)
	}
	if len(out) == 0 {
		return nil, b.Fail(field, "%q, but the recipe has no %s workers", placement, placement)
	}
	return out, nil
}

// serviceTemplate substitutes srtctl's service placeholders ({node},
// {node_ip}, {node_id}, {index}, {role}, {head_node}, {head_ip},
// {infra_node}, {infra_ip}, {gpus_per_node}) with the plan's {host:N} and
// {ip:N}, which the driver fills; other braces are left alone.
func (b *builder) serviceTemplate(in []string, node, index int, role string) []string {
	r := strings.NewReplacer(
		"{node}", plan.HostPlaceholder(node), "{node_ip}", plan.IPPlaceholder(node), "{node_id}", strconv.Itoa(node),
		"{index}", strconv.Itoa(index), "{role}", role,
		"{head_node}", plan.HostPlaceholder(b.HeadNode()), "{head_ip}", plan.IPPlaceholder(b.HeadNode()),
		"{infra_node}", plan.HostPlaceholder(b.InfraNode()), "{infra_ip}", plan.IPPlaceholder(b.InfraNode()),
		"{gpus_per_node}", strconv.Itoa(b.GPUsPerNode()))
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = r.Replace(s)
	}
	return out
}

// serviceEnv is srtctl's service environment, later layers winning: the
// discovery plane's addresses (inherit_discovery_env, when the job runs
// one), the entry's env with placeholders, then the profile's fixed
// variables (the cluster's, as for every step). A service does not
// inherit the recipe's top-level environment.
func (b *builder) serviceEnv(s recipe.Service, node, index int) map[string]string {
	env := map[string]string{}
	if s.InheritsDiscovery() && b.NeedsInfra() {
		env["ETCD_ENDPOINTS"] = "http://" + plan.HostPlaceholder(b.InfraNode()) + ":" + strconv.Itoa(portEtcd)
		env["NATS_SERVER"] = "nats://" + plan.HostPlaceholder(b.InfraNode()) + ":" + strconv.Itoa(portNATS)
	}
	for _, k := range profile.SortedKeys(s.Env.Strings()) {
		env[k] = b.serviceTemplate([]string{s.Env[k].Text()}, node, index, s.EffectivePlacement())[0]
	}
	for k, v := range b.Profile().Env.Set {
		env[k] = v
	}
	return env
}

// serviceSrun is the recipe's srun_options, then the entry's cpus_per_task,
// cpu_bind and own srun_options.
func (b *builder) serviceSrun(s recipe.Service) []string {
	out := b.SrunExtra()
	if s.CPUsPerTask != nil {
		out = append(out, "--cpus-per-task="+strconv.Itoa(*s.CPUsPerTask))
	}
	if s.CPUBind != "" {
		out = append(out, "--cpu-bind="+s.CPUBind)
	}
	for _, k := range profile.SortedKeys(s.SrunOptions) {
		if v := s.SrunOptions[k].Text(); v != "" {
			out = append(out, "--"+k+"="+v)
		} else {
			out = append(out, "--"+k)
		}
	}
	return out
}
