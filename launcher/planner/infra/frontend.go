package infra

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
)

// addFrontends places the serving front as srtctl's frontend topology does:
// one frontend on the head node at the public port, or,
// with enable_multiple_frontends (the default) and more than one worker
// node, nginx there in front of routers on the following worker nodes at
// the internal port. Dynamo frontends and SGLang routers share the layout;
// `vllm serve` is its own server.
func (b *builder) addFrontends(head int) error {
	pl := b.Plan()
	ft := b.FrontendType()
	pl.Backend, pl.Frontend = b.BackendType(), ft
	if ft == schema2.FrontendSGLangDirect {
		return b.addSGLangDirect() // the aggregated worker's sglang.launch_server is the server
	}
	if b.BackendType() == "mock" {
		b.Add(plan.Process{
			Name: "frontend_0", Role: plan.RoleFrontend, Nodes: []int{head}, Container: true, Mounts: b.Mounts(),
			Argv: []string{pl.Binary, "mock-engine", "--mode", "frontend", "--listen", "0.0.0.0:" + strconv.Itoa(portPublicFrontend),
				"--model", pl.Model.ServedName},
			Ports: map[string]int{"http": portPublicFrontend}, Log: b.LogPath("frontend_0"), Critical: true,
		})
		return nil
	}
	if ft == "vllm" {
		return nil // the aggregated worker's vllm serve is the server
	}
	if ft == "trtllm_serve" {
		return b.addTRTLLMServe(head) // trtllm_serve.go
	}
	nodes, port, err := b.frontendNodes(head)
	if err != nil {
		return err
	}
	b.SetAPINode(nodes[0])
	if port == portInternalFrontend {
		b.SetAPINode(head) // nginx
	}
	if port == portInternalFrontend {
		if err := b.addNginx(head, nodes); err != nil {
			return err
		}
	}
	for i, node := range nodes {
		switch ft {
		case "sglang":
			b.addRouter(i, node, port)
		case engine.FrontendVLLMRouter:
			if err := b.addVLLMRouter(i, node, port); err != nil {
				return err
			}
		default:
			b.addDynamoFrontend(i, node, port)
		}
	}
	return nil
}

// frontendNodes are the nodes routers run on and the port they listen on.
// A single frontend runs where frontend.orchestrator_placement puts it.
func (b *builder) frontendNodes(head int) ([]int, int, error) {
	r := b.Recipe()
	multiple := r.Frontend.EnableMultipleFrontends == nil || *r.Frontend.EnableMultipleFrontends
	others := b.Plan().Nodes - 1 - head // worker nodes after the head
	if !multiple || others <= 0 {
		node, err := b.PlacedNode(r.Frontend.OrchestratorPlacement, "frontend.orchestrator_placement")
		return []int{node}, portPublicFrontend, err
	}
	if p := r.Frontend.OrchestratorPlacement; p != "" && p != "head" {
		// srtctl keeps nginx on the head node then, but still sends its
		// health checks and clients to the placed node, where nothing
		// listens.
		return nil, 0, b.Fail("frontend.orchestrator_placement", "%q places a single frontend; with enable_multiple_frontends and %d worker nodes nginx serves on the head node (set enable_multiple_frontends: false)", p, b.Plan().Nodes-head)
	}
	routers := deref(r.Frontend.NumAdditionalFrontends, 9) + 1
	if routers > others {
		routers = others
	}
	nodes := make([]int, routers)
	for i := range nodes {
		nodes[i] = head + 1 + i
	}
	return nodes, portInternalFrontend, nil
}

func (b *builder) addDynamoFrontend(i, node, port int) {
	name := fmt.Sprintf("frontend_%d", i)
	env := map[string]string{
		"ETCD_ENDPOINTS":                 "http://" + plan.HostPlaceholder(b.InfraNode()) + ":" + strconv.Itoa(portEtcd),
		"NATS_SERVER":                    "nats://" + plan.HostPlaceholder(b.InfraNode()) + ":" + strconv.Itoa(portNATS),
		"DYN_REQUEST_PLANE":              b.Plan().Dynamo.RequestPlane,
		"DYN_SKIP_SGLANG_LOG_FORMATTING": "1",
	}
	if ep := b.Plan().Dynamo.EventPlane; ep != "" {
		env["DYN_EVENT_PLANE"] = ep
	}
	// The recipe's and the frontend's environment as written: srtctl
	// formats {node} and {node_id} for workers only.
	for k, v := range b.RecipeEnv() {
		env[k] = v
	}
	for k, v := range b.Recipe().Frontend.Env.Strings() {
		env[k] = v
	}
	for k, v := range b.Profile().Env.Set {
		env[k] = v
	}
	argv := append([]string{"python3", "-m", "dynamo.frontend", "--http-port=" + strconv.Itoa(port)}, b.frontendArgs()...)
	proc := plan.Process{Name: name, Role: plan.RoleFrontend, Worker: i, Nodes: []int{node}, Container: true, Mounts: b.engineMounts(),
		Env: env, Argv: argv, Setup: b.setupSteps(true), Ports: map[string]int{"http": port}, Log: b.LogPath(name), Critical: true,
		// srtctl: "I don't have the faintest clue of why this is needed in
		// later versions of Dynamo, but it is."
		Srun: plan.SrunOptions{MPI: "pmix"}}
	if b.Plan().Dynamo.Install {
		proc.Srun.Export = []string{"ENROOT_REMAP_ROOT=yes"}
	}
	b.Add(proc)
}

// addRouter starts SGLang's router over the workers' HTTP endpoints: in
// PD mode every prefill leader with its bootstrap port, then every decode
// leader; aggregated workers as --worker-urls.
func (b *builder) addRouter(i, node, port int) {
	argv := []string{"python", "-m", "sglang_router.launch_router"}
	var agg []string
	disagg := b.Plan().Mode == "disaggregated"
	if disagg {
		argv = append(argv, "--pd-disaggregation")
	}
	for _, proc := range b.Plan().Processes {
		if proc.Rank != 0 || proc.Ports["http"] == 0 {
			continue
		}
		url := "http://" + plan.IPPlaceholder(proc.Nodes[0]) + ":" + strconv.Itoa(proc.Ports["http"])
		switch proc.Role {
		case plan.RolePrefill:
			argv = append(argv, "--prefill", url)
			if bp := proc.Ports["bootstrap"]; bp != 0 {
				argv = append(argv, strconv.Itoa(bp))
			}
		case plan.RoleDecode:
			argv = append(argv, "--decode", url)
		case plan.RoleAgg:
			agg = append(agg, url)
		}
	}
	if !disagg {
		argv = append(append(argv, "--worker-urls"), agg...)
	}
	argv = append(argv, "--host", "0.0.0.0", "--port", strconv.Itoa(port))
	argv = append(argv, b.frontendArgs()...)
	// srtctl's router gets frontend.env alone, as written: not the
	// recipe's environment, which Dynamo frontends and workers get.
	env := b.Recipe().Frontend.Env.Strings()
	for k, v := range b.Profile().Env.Set {
		env[k] = v
	}
	name := fmt.Sprintf("router_%d", i)
	b.Add(plan.Process{Name: name, Role: plan.RoleFrontend, Worker: i, Nodes: []int{node}, Container: true, Mounts: b.Mounts(),
		Env: env, Argv: argv, Ports: map[string]int{"http": port}, Log: b.LogPath(name), Critical: true})
}

// argKeysInOrder are frontend.args' keys in the order the recipe wrote
// them (Python's dict order, which srtctl's renderings follow), by line
// and column, then name.
func argKeysInOrder[V interface{ Pos() (int, int) }](args map[string]V) []string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		li, ci := args[keys[i]].Pos()
		lj, cj := args[keys[j]].Pos()
		if li != lj {
			return li < lj
		}
		if ci != cj {
			return ci < cj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// frontendArgs renders frontend.args by srtctl's rule for router flags,
// which is not the engine-config rule: keys as written (no '_' → '-'), in
// the recipe's order (Python's dict order), true → --key, false and null → omitted, anything else
// → --key str(value).
func (b *builder) frontendArgs() []string {
	args := b.Recipe().Frontend.Args
	keys := argKeysInOrder(args)
	var out []string
	for _, k := range keys {
		v := args[k]
		if v.IsNull() {
			continue
		}
		if t, ok := v.Bool(); ok {
			if t {
				out = append(out, "--"+k)
			}
			continue
		}
		out = append(out, "--"+k, v.String())
	}
	return out
}

var headerNameRe = regexp.MustCompile(`^[A-Za-z0-9-]+$`)

// addNginx puts nginx on the head node at the public port in front of the
// routers (srtctl's nginx.conf.j2, rendered into the logs directory).
func (b *builder) addNginx(head int, routers []int) error {
	r := b.Recipe()
	image, err := b.Profile().ContainerRef(cmp.Or(r.Frontend.NginxContainer, "nginx:1.27.4"))
	if err != nil {
		return b.Fail("frontend.nginx_container", "%v", err)
	}
	header := cmp.Or(r.Frontend.NginxAffinityHeader, "X-Dynamo-Session-ID")
	if r.Frontend.NginxSessionAffinity && !headerNameRe.MatchString(header) {
		return b.Fail("frontend.nginx_session_affinity_header", "%q is not an HTTP header name", header)
	}
	conf := nginxConf(routers, portInternalFrontend, portPublicFrontend, r.Frontend.NginxSessionAffinity, header,
		cmp.Or(r.Frontend.NginxKeepaliveTimeout, "600s"))
	// srtslurm.yaml's nginx_raise_ulimit fills a recipe that leaves it out
	// (core/config.py@020fbc6c resolve_config_with_defaults).
	raiseSet := cmp.Or(r.Frontend.NginxRaiseUlimit, b.Profile().Defaults.NginxRaiseUlimit)
	raise := raiseSet != nil && *raiseSet
	if raise {
		conf = raiseNginxNoFile(conf)
	}
	b.Add(plan.Process{Name: "nginx", Role: plan.RoleNginx, Nodes: []int{head}, Container: true, Image: image,
		Mounts: b.Mounts(), Argv: []string{"nginx", "-c", "/logs/nginx.conf", "-g", "daemon off;"},
		Files: map[string]string{filepath.Join(b.Plan().Layout.Logs, "nginx.conf"): conf},
		Ports: map[string]int{"http": portPublicFrontend}, Log: b.LogPath("nginx"), Critical: true,
		Srun: plan.SrunOptions{Extra: []string{"--container-remap-root"}}})
	if raise {
		b.Plan().Processes[len(b.Plan().Processes)-1].NoFile = nginxNoFile
	}
	return nil
}

// nginxConf is srtctl's nginx.conf: round-robin (or, with session
// affinity, consistent hashing of the session header) over the routers,
// bodies up to 45 MB (the Dynamo frontend's own limit), long proxy
// timeouts for streaming and kept-alive upstream connections, idle for
// keepalive (frontend.nginx_keepalive_timeout, default 600s) on both sides.
// Router addresses are {ip:N} placeholders the driver fills.
func nginxConf(routers []int, routerPort, listen int, affinity bool, header, keepalive string) string {
	var s strings.Builder
	s.WriteString("# Rendered by slurmbench from srt-slurm's nginx.conf.j2.\n")
	s.WriteString("worker_processes auto;\n\nevents {\n    worker_connections 65535;\n    multi_accept on;\n    use epoll;\n}\n\n")
	fmt.Fprintf(&s, "http {\n    client_max_body_size 45m;\n    access_log off;\n    keepalive_timeout %s;\n", keepalive)
	if affinity {
		v := "$http_" + strings.ReplaceAll(strings.ToLower(header), "-", "_")
		fmt.Fprintf(&s, "\n    # One session stays on one frontend; requests without the header spread.\n")
		fmt.Fprintf(&s, "    map %s $frontend_hash_key {\n        default %s;\n        \"\" $request_id;\n    }\n", v, v)
	}
	s.WriteString("\n    upstream backend_servers {\n")
	if affinity {
		s.WriteString("        hash $frontend_hash_key consistent;\n")
	}
	for _, n := range routers {
		fmt.Fprintf(&s, "        server %s:%d;\n", plan.IPPlaceholder(n), routerPort)
	}
	fmt.Fprintf(&s, "        keepalive 512;\n        keepalive_timeout %s;\n    }\n\n", keepalive)
	fmt.Fprintf(&s, "    server {\n        listen %d;\n\n        location / {\n", listen)
	s.WriteString("            proxy_pass http://backend_servers;\n            proxy_http_version 1.1;\n")
	s.WriteString("            proxy_set_header Connection \"\";\n            proxy_buffering off;\n")
	s.WriteString("            proxy_read_timeout 24h;\n            proxy_send_timeout 24h;\n        }\n    }\n}\n")
	return s.String()
}
