package fragment

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Component is a master-config component's metadata: a row's router or
// kv-offload-backend {name, version} (configs/CONFIGS.md).
type Component struct{ Name, Version string }

// The master fields whose version a repository installer takes, and the
// env name the binder writes it as (workload.py@f57e21f1 VERSION_ENV).
const (
	RouterField    = "router"
	KVOffloadField = "kv-offload-backend"
)

var versionEnvOf = map[string]string{RouterField: "ROUTER_VERSION", KVOffloadField: "KV_OFFLOAD_BACKEND_VERSION"}

type installed struct{ field, name string }

// installers are the repository setup scripts that install a component the
// master config versions (workload.py@f57e21f1 INSTALLERS).
var installers = map[string]installed{
	"glm5.3-tilert-rocm.sh":   {RouterField, "tilert-pd-router"},
	"kimik3-b300-mooncake.sh": {KVOffloadField, "mooncake"},
	"lmcache-mp-rocm.sh":      {KVOffloadField, "lmcache"},
	"vllm-mooncake.sh":        {KVOffloadField, "mooncake"},
	"vllm-router.sh":          {RouterField, "vllm-router"},
}

// pipComponents: a pin of these packages in SETUP_PIP_PACKAGES must be the
// master's version (workload.py PIP_COMPONENTS).
var pipComponents = map[string]installed{"vllm-router": {RouterField, "vllm-router"}}

var (
	pipName  = regexp.MustCompile(`^[\w.-]+`)
	pipNorm  = regexp.MustCompile(`[-_.]+`)
	envLists = []string{"environment", "frontend.env"}
)

// masterVersion is the version the point declares for the component an
// installer installs; a point that does not declare it fails.
func (p Point) masterVersion(c installed, what string) (string, error) {
	m := p.Router
	if c.field == KVOffloadField {
		m = p.KVOffloadBackend
	}
	if m == nil || m.Name != c.name || m.Version == "" {
		have := "none"
		if m != nil {
			have = fmt.Sprintf("{name: %s, version: %s}", m.Name, m.Version)
		}
		return "", fmt.Errorf("%s installs %s, so the master config must declare %s {name: %s, version: ...}; the point has %s", what, c.name, c.field, c.name, have)
	}
	return m.Version, nil
}

// bindComponents writes the master version of each component a repository
// script installs where the script runs: the top-level environment for
// setup_script, a service's env for a preamble that runs /configs/<script>
// (services do not inherit environment); and checks a SETUP_PIP_PACKAGES
// pin of a master component (workload.py _bind_components).
func bindComponents(file string, doc *yaml.Node, p Point) error {
	fail := func(n *yaml.Node, field string, err error) error {
		return &yamltree.Error{File: file, Line: n.Line, Field: field, Msg: err.Error()}
	}
	if k, v := yamltree.KeyValue(doc, "setup_script"); k != nil {
		if c, ok := installers[v.Value]; ok {
			ver, err := p.masterVersion(c, v.Value)
			if err != nil {
				return fail(k, "setup_script", err)
			}
			set(child(doc, "environment"), versionEnvOf[c.field], strNode(ver, 0))
		}
	}
	if services := yamltree.Get(doc, "services"); services != nil && services.Kind == yaml.SequenceNode {
		for i, s := range services.Content {
			pre := yamltree.Get(s, "preamble")
			if pre == nil {
				continue
			}
			for script, c := range installers {
				if !strings.Contains(pre.Value, "/configs/"+script) {
					continue
				}
				ver, err := p.masterVersion(c, script)
				if err != nil {
					return fail(pre, fmt.Sprintf("services[%d].preamble", i), err)
				}
				set(child(s, "env"), versionEnvOf[c.field], strNode(ver, 0))
			}
		}
	}
	envs := append([]string(nil), envLists...)
	if roles := yamltree.Get(doc, "roles"); roles != nil && roles.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(roles.Content); i += 2 {
			envs = append(envs, "roles."+roles.Content[i].Value+".env")
		}
	}
	for _, path := range envs {
		_, env := lookupPath(doc, strings.Split(path, "."))
		k, v := lookupPath(env, []string{"SETUP_PIP_PACKAGES"})
		if k == nil {
			continue
		}
		for _, spec := range strings.Fields(v.Value) {
			pkg := pipName.FindString(spec)
			c, ok := pipComponents[strings.ToLower(pipNorm.ReplaceAllString(pkg, "-"))]
			if !ok {
				continue
			}
			pin := "SETUP_PIP_PACKAGES " + spec
			ver, err := p.masterVersion(c, pin)
			if err != nil {
				return fail(k, path+".SETUP_PIP_PACKAGES", err)
			}
			if spec != pkg+"=="+ver {
				return fail(k, path+".SETUP_PIP_PACKAGES", fmt.Errorf("%s is not the master %s %s", pin, c.field, ver))
			}
		}
	}
	return nil
}
