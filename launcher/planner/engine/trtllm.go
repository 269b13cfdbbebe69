package engine

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"go.yaml.in/yaml/v3"
)

// trtllmEngine runs TensorRT-LLM: python3 -m dynamo.trtllm under
// trtllm-llmapi-launch, one MPI srun per endpoint with a task per GPU, the
// engine config as a YAML file (srtctl's backends/trtllm.py).
type trtllmEngine struct {
	b Builder
	// nodeProcs counts the node processes srtctl's generic layout made
	// before this endpoint: each took a KV-events port.
	nodeProcs int
}

func (e *trtllmEngine) PerEndpoint() bool     { return true }
func (e *trtllmEngine) VisibleDevices() bool  { return true }
func (e *trtllmEngine) PerGPU(plan.Role) bool { return false }

func (e *trtllmEngine) Complete(w *Worker, proc *plan.Process) error {
	b := e.b
	mode := w.SrtctlMode()
	// The leader's KV-events port in srtctl's layout (unused by the
	// engine; KVBM's leader ports derive from it).
	w.KVEvents = PortKVEventsBase + e.nodeProcs
	e.nodeProcs += len(w.Nodes)
	cfg := b.EngineConfig(w.Role)
	if err := e.checkParallelism(w, cfg); err != nil {
		return err
	}
	serve := b.FrontendType() == "trtllm_serve"
	if serve {
		serveConfigDefaults(cfg)
	}
	conf, err := trtllmConfigYAML(cfg)
	if err != nil {
		return b.Fail("backend.trtllm_config."+w.Mode(), "%v", err)
	}
	// The engine reads the file at /logs, the run's log directory in the
	// container, where srtctl writes it too.
	name := "trtllm_config_" + mode + ".yaml"
	proc.Files = map[string]string{filepath.Join(b.Plan().Layout.Logs, name): conf}

	var argv []string
	gpuType := cmp.Or(b.Recipe().Resources.GPUType, b.DefaultGPUType())
	numactl := (gpuType == "gb200" || gpuType == "gb300") && w.Role != plan.RoleAgg
	if b.Recipe().Backend.NUMABind != nil {
		numactl = *b.Recipe().Backend.NUMABind
	}
	if numactl {
		// Grace-Blackwell: allocate from both sockets' memory.
		argv = append(argv, "numactl", "-m", "0,1")
	}
	if serve {
		return e.completeServe(w, proc, cfg, append(argv, "trtllm-llmapi-launch"), "/logs/"+name)
	}
	argv = append(argv, "trtllm-llmapi-launch", "python3", "-m", "dynamo.trtllm",
		"--model-path", b.WorkerModelArg(), "--served-model-name", b.Plan().Model.ServedName)
	if w.Role != plan.RoleAgg {
		argv = append(argv, "--disaggregation-mode", mode)
	}
	proc.Argv = append(argv, "--extra-engine-args", "/logs/"+name, "--request-plane", b.Plan().Dynamo.RequestPlane)
	b.StartSequentially(proc.Name)
	if pm := b.Recipe().Backend.PublishMetrics; pm != nil && *pm {
		// Schema 2's engine.publish_metrics: engine metrics without KV-cache
		// events (srtctl 2.x's TRTLLMBackend). Unset keeps c88ef731's
		// command, so a schema-2 recipe plans as its schema-1 equivalent.
		proc.Argv = append(proc.Argv, "--publish-metrics")
	}

	// srtctl's MPI launch sets no DYN_REQUEST_PLANE (the flag carries it)
	// unless the recipe does.
	if _, set := b.RoleEnv(w.Role)["DYN_REQUEST_PLANE"]; !set {
		if _, set := b.Recipe().Env["DYN_REQUEST_PLANE"]; !set {
			delete(proc.Env, "DYN_REQUEST_PLANE")
		}
	}
	e.mpiLaunch(w, proc)
	delete(proc.Ports, "http") // dynamo.trtllm serves through the Dynamo runtime
	return nil
}

// mpiLaunch is srtctl's TRT-LLM srun (TRTLLMProtocol.get_srun_config): one
// step over the endpoint's nodes, a PMIx task per GPU, oversubscribed,
// no CPU binding; and the expert-load-balancer's shared memory name,
// unique per worker on a node: srtctl draws a uuid4, this is a digest of
// the plan's and the process's names, so another run of the recipe starts
// the same worker (plan.SameServing: a held deployment keeps it).
func (e *trtllmEngine) mpiLaunch(w *Worker, proc *plan.Process) {
	b := e.b
	sum := sha256.Sum256([]byte(b.Plan().Name + "/" + proc.Name))
	proc.Env["TRTLLM_EPLB_SHM_NAME"] = "moe_shared_" + hex.EncodeToString(sum[:16])
	local := w.EndpointGPUs
	if local > b.GPUsPerNode() {
		local = b.GPUsPerNode()
	}
	proc.Srun.NTasks = len(w.Nodes) * local
	proc.Srun.MPI = "pmix"
	proc.Srun.Extra = append([]string{"--oversubscribe", "--cpu-bind=verbose,none"}, proc.Srun.Extra...)
}

// trtllmConfigYAML writes a role's trtllm_config as the engine's YAML file,
// as srtctl's yaml.safe_dump does: keys sorted, block style, lists not
// indented under their key, YAML 1.1
// scalars (floats always with a '.', so PyYAML reads them back as floats).
func trtllmConfigYAML(cfg map[string]recipe.Value) (string, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := yamlNode(cfg[k])
		if err != nil {
			return "", fmt.Errorf("%s: %w", k, err)
		}
		doc.Content = append(doc.Content, strNode(k), v)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent() // PyYAML writes a mapping's list items at the key's indent
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// yamlNode rebuilds a config value as a YAML node. Mappings and lists come
// from their JSON rendering (typed, keys sorted); a top-level scalar is an
// int or float when its text is one, else a string.
func yamlNode(v recipe.Value) (*yaml.Node, error) {
	if v.IsNull() {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	if b, ok := v.Bool(); ok {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}, nil
	}
	_, isList := v.List()
	if isList || v.IsMapping() {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(v.String()), &n); err != nil {
			return nil, err
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			blockStyle(n.Content[0])
			return n.Content[0], nil
		}
		return nil, fmt.Errorf("cannot render %q", v.String())
	}
	return scalarNode(v.String()), nil
}

func scalarNode(s string) *yaml.Node {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: s}
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && strings.ContainsAny(s, ".eE") && !strings.ContainsAny(s, "xX_") {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: pyYAMLFloat(s)}
	}
	return strNode(s)
}

// yaml11Special are strings a YAML 1.1 reader (PyYAML, what TRT-LLM
// loads the file with) takes for a bool, null, number or timestamp when
// they are written plain.
var yaml11Special = regexp.MustCompile(`^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|~|null|Null|NULL|)$|^[-+]?\.?[0-9]|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$`)

// strNode is a string scalar, quoted when it would not read back as one.
func strNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if yaml11Special.MatchString(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// pyYAMLFloat is PyYAML's float form: "1e-05" → "1.0e-05".
func pyYAMLFloat(s string) string {
	if i := strings.IndexAny(s, "eE"); i >= 0 && !strings.Contains(s[:i], ".") {
		return s[:i] + ".0" + strings.ToLower(s[i:])
	}
	return s
}

// blockStyle turns a JSON-parsed tree into block style with plain scalars
// where they read back as the same type.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!float":
		n.Value = pyYAMLFloat(n.Value)
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str" && yaml11Special.MatchString(n.Value):
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// checkParallelism holds TRT-LLM's world size (one MPI rank per GPU) to the
// worker's GPUs: tensor × pipeline × context parallel size; the MoE expert
// and tensor split run inside the tensor-parallel group.
func (e *trtllmEngine) checkParallelism(w *Worker, cfg map[string]recipe.Value) error {
	field := "backend.trtllm_config." + w.Mode()
	sizes := map[string]int{}
	for _, k := range []string{"tensor_parallel_size", "pipeline_parallel_size", "context_parallel_size", "moe_expert_parallel_size", "moe_tensor_parallel_size"} {
		n, err := intValue(cfg, k, 1)
		if err == nil && n < 1 {
			err = fmt.Errorf("%s: must be positive, got %d", k, n)
		}
		if err != nil {
			return e.b.Fail(field, "%v", err)
		}
		sizes[k] = n
	}
	tp, pp, cp := sizes["tensor_parallel_size"], sizes["pipeline_parallel_size"], sizes["context_parallel_size"]
	if tp*pp*cp != w.EndpointGPUs {
		return e.b.Fail(field, "tensor_parallel_size %d × pipeline_parallel_size %d × context_parallel_size %d = %d GPUs, but the %s worker has %d (one MPI rank per GPU)",
			tp, pp, cp, tp*pp*cp, w.Mode(), w.EndpointGPUs)
	}
	if ep := sizes["moe_expert_parallel_size"]; ep > tp {
		return e.b.Fail(field, "moe_expert_parallel_size %d exceeds tensor_parallel_size %d", ep, tp)
	}
	return nil
}
