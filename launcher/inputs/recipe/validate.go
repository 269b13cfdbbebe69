package recipe

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/telemetry"
)

// Backend types slurmbench runs. "mock" is slurmbench's own mock engine.
var backendTypes = map[string]bool{"sglang": true, "vllm": true, "trtllm": true, "mock": true, "mocker": true}

// nginxTimeRe is nginx's time syntax: numbers with units, e.g. "1h30m".
var nginxTimeRe = regexp.MustCompile(`^([0-9]+(ms|s|m|h|d|w|M|y)?)+$`)

// Frontend types slurmbench runs.
var frontendTypes = map[string]bool{"dynamo": true, "sglang": true, "vllm": true, schema2.FrontendSGLangDirect: true, "vllm-router": true}

// validate checks the recipe on its own (the plan checks it against the
// profile). Malformed values come first; then features not run yet.
func (r *Recipe) validate() error {
	// srtctl's schema refuses unknown fields before it checks any value.
	if err := r.srtctlRefuses(); err != nil {
		return err
	}
	var errs []error
	add := func(field, format string, args ...any) { errs = append(errs, r.Errorf(field, format, args...)) }

	if r.Name == "" {
		add("name", "required")
	} else if err := CheckName(r.Name); err != nil {
		add("name", "%v", err)
	}
	if r.Model.Path == "" {
		add("model.path", "required (a [models] alias of the profile, an absolute path, or hf:org/name)")
	}
	if r.Model.Container == "" {
		add("model.container", "required (a [containers] alias of the profile, an image reference, or a .sqsh path)")
	}
	if strings.ContainsAny(r.Model.Container, " \t\n") {
		add("model.container", "%q contains white space", r.Model.Container)
	}

	res := r.Resources
	positive := func(field string, v *int) {
		if v != nil && *v <= 0 {
			add(field, "must be a positive number, got %d", *v)
		}
	}
	nonNegative := func(field string, v *int) {
		if v != nil && *v < 0 {
			add(field, "must not be negative, got %d", *v)
		}
	}
	positive("resources.gpus_per_node", res.GPUsPerNode)
	positive("resources.gpus_per_prefill", res.GPUsPerPrefill)
	positive("resources.gpus_per_decode", res.GPUsPerDecode)
	positive("resources.gpus_per_agg", res.GPUsPerAgg)
	if res.Disaggregated() {
		if res.AggNodes != nil || res.AggWorkers != nil {
			add("resources.agg_nodes", "cannot be mixed with prefill_nodes/decode_nodes: a recipe is either disaggregated or aggregated")
		}
		positive("resources.prefill_nodes", res.PrefillNodes)
		nonNegative("resources.decode_nodes", res.DecodeNodes)
		if res.PrefillWorkers == nil {
			add("resources.prefill_workers", "required with prefill_nodes")
		} else {
			positive("resources.prefill_workers", res.PrefillWorkers)
		}
		if res.DecodeWorkers == nil {
			add("resources.decode_workers", "required with decode_nodes")
		} else {
			positive("resources.decode_workers", res.DecodeWorkers)
		}
		if res.PrefillNodes == nil {
			add("resources.prefill_nodes", "required with decode_nodes")
		}
		if res.DecodeNodes == nil {
			add("resources.decode_nodes", "required with prefill_nodes")
		}
	} else {
		if res.AggNodes == nil && res.AggWorkers == nil {
			add("resources", "needs prefill_nodes/decode_nodes (disaggregated) or agg_nodes/agg_workers (aggregated)")
		}
		positive("resources.agg_nodes", res.AggNodes)
		positive("resources.agg_workers", res.AggWorkers)
	}

	if r.Backend.PublishMetrics != nil && r.Backend.Type != "trtllm" {
		add("backend.publish_metrics", "is a TRT-LLM engine knob; engine type is %q", r.Backend.Type)
	}
	if t := r.Backend.Type; t != "" && !backendTypes[t] && t != "mocker" {
		add("backend.type", "%q is not one of sglang, vllm, trtllm, mocker, mock", t)
	}
	if t := r.Frontend.Type; t != "" && !frontendTypes[t] && t != "trtllm_serve" {
		add("frontend.type", "%q is not one of dynamo, sglang, vllm", t)
	}
	positive("frontend.num_additional_frontends", r.Frontend.NumAdditionalFrontends)
	nonNegative("backend.sequential_node_start", r.Backend.SequentialNode)
	if t := r.Frontend.NginxKeepaliveTimeout; t != "" && !nginxTimeRe.MatchString(t) {
		// It is written into nginx.conf: nginx's time syntax only.
		add("frontend.nginx_keepalive_timeout", "%q is not an nginx time (e.g. 600s, 10m, 1h30m)", t)
	}
	if d := r.Dynamo; countSet(d.Hash != "", d.Wheel != "", d.TopOfTree) > 1 {
		add("dynamo", "only one of hash, wheel, top_of_tree may be set")
	}
	switch r.Dynamo.RequestPlane {
	case "", "tcp", "nats", "http":
	default:
		add("dynamo.request_plane", "%q is not one of tcp, nats, http", r.Dynamo.RequestPlane)
	}
	switch r.Dynamo.EventPlane {
	case "", "nats", "zmq":
	default:
		add("dynamo.event_plane", "%q is not one of nats, zmq", r.Dynamo.EventPlane)
	}

	b := r.Benchmark
	if b.Concurrencies.Err() != "" {
		add("benchmark.concurrencies", "%s", b.Concurrencies.Err())
	}
	// A concurrency listed twice runs once (as srtctl does; the planner
	// warns), so only the distinct values are held to the rule here.
	if err := CheckConcurrencies(distinct(b.Concurrencies.Values)); err != nil {
		add("benchmark.concurrencies", "%v", err)
	}
	if b.Concurrencies.Set && b.Concurrencies.Err() == "" && len(b.Concurrencies.Values) == 0 {
		add("benchmark.concurrencies", "empty list")
	}
	positive("benchmark.isl", b.ISL)
	positive("benchmark.osl", b.OSL)
	positive("benchmark.num_prompts_mult", b.NumPromptsMult)
	nonNegative("benchmark.num_warmup_mult", b.NumWarmupMult)
	if v := b.RandomRangeRatio; v != nil && !(*v > 0 && *v <= 1) { // NaN fails too
		add("benchmark.random_range_ratio", "must be in (0, 1], got %v", *v)
	}
	if b.ReqRate.Set() {
		if t := b.ReqRate.Text(); !validRequestRate(t) {
			add("benchmark.req_rate", "%q is not \"inf\" or a finite positive number of requests per second", t)
		}
	}
	// benchmark.type custom, client placement and tokenizers (srtctl's
	// CustomBenchmarkRunner.validate_config and topology.placed_node).
	if b.Type == "custom" && strings.TrimSpace(b.Command) == "" {
		add("benchmark.command", "required for benchmark.type custom")
	}
	if b.Command != "" && b.Type != "custom" {
		add("benchmark.command", "only runs with benchmark.type custom (type is %q)", b.Type)
	}
	if b.ContainerImage != "" && b.Type != "custom" {
		// srtctl reads it for custom clients only and ignores it elsewhere.
		add("benchmark.container_image", "only used with benchmark.type custom (type is %q)", b.Type)
	}
	if strings.ContainsAny(b.ContainerImage, " \t\n") {
		add("benchmark.container_image", "%q contains white space", b.ContainerImage)
	}
	switch b.ClientPlacement {
	case "", "head", "first_decode", "last_decode":
	default:
		add("benchmark.client_placement", "%q is not one of head, first_decode, last_decode", b.ClientPlacement)
	}
	// srtctl's SrtConfig: the reserved node is the client's "head".
	if b.ClientDedicatedNode && b.ClientPlacement != "" && b.ClientPlacement != "head" {
		add("benchmark.client_dedicated_node", "requires benchmark.client_placement: head, not %q", b.ClientPlacement)
	}
	if strings.ContainsAny(b.CustomTokenizer, " \t\n") {
		add("benchmark.custom_tokenizer", "%q contains white space; want a Python class path (module.Class)", b.CustomTokenizer)
	}
	if strings.ContainsAny(b.TokenizerMode, " \t\n") {
		add("benchmark.tokenizer_mode", "%q contains white space", b.TokenizerMode)
	}
	if h := r.Health; h != nil {
		positive("health_check.max_attempts", h.MaxAttempts)
		positive("health_check.interval_seconds", h.IntervalSeconds)
	}
	for _, env := range []struct {
		field string
		m     EnvMap
	}{
		{"environment", r.Env}, {"backend.prefill_environment", r.Backend.PrefillEnv},
		{"backend.decode_environment", r.Backend.DecodeEnv}, {"backend.aggregated_environment", r.Backend.AggregatedEnv},
		{"frontend.env", r.Frontend.Env}, {"benchmark.env", r.Benchmark.Env},
	} {
		for k := range env.m {
			if !profile.ValidEnvName(k) {
				add(env.field, "%q is not a valid environment variable name", k)
			}
		}
	}
	for i, m := range r.ExtraMount {
		if err := checkMount(m); err != nil {
			add("extra_mount", "entry %d %q: %v", i, m, err)
		}
	}
	for h, c := range r.ContainerMounts {
		if err := checkMount(h + ":" + c); err != nil {
			add("container_mounts", "%q: %q: %v", h, c, err)
		}
	}
	r.Telemetry.Validate(telemetry.Recipe{SchemaVersion: r.SchemaVersion, BenchmarkType: r.Benchmark.Type,
		ClientPlacement: r.Benchmark.ClientPlacement, DedicatedInfraNode: r.Infra.EtcdNATSDedicatedNode,
		Concurrencies: r.Benchmark.Concurrencies.Values}, add)
	r.validateV2(add, func(err error) { errs = append(errs, err) })
	r.validateSrtctlTypes(add)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := r.checkSupported(); err != nil {
		return err
	}
	return r.checkSupportedV2()
}

// checkSupported refuses features that are valid srt-slurm but that
// slurmbench does not run yet, one field at a time, named.
func (r *Recipe) checkSupported() error {
	switch {
	case r.Resources.HetJobs != nil && *r.Resources.HetJobs:
		return r.unsupported("resources.het_jobs", "heterogeneous jobs")
	case r.Dynamo.CargoPatches != nil:
		return r.unsupported("dynamo.cargo_patches", "patched Dynamo source builds")
	case r.Frontend.DedicatedNode:
		return r.unsupported("frontend.dedicated_node", "a dedicated frontend node")
	case r.Benchmark.Type == "manual":
		return r.unsupported("benchmark.type", "benchmark type \"manual\" (serve until cancelled)")
	case r.Benchmark.DatasetName != "" && r.Benchmark.DatasetName != "random":
		return r.unsupported("benchmark.dataset_name", fmt.Sprintf("dataset %q", r.Benchmark.DatasetName))
	case r.Benchmark.AIPerfMetrics != nil && *r.Benchmark.AIPerfMetrics:
		return r.unsupported("benchmark.aiperf_server_metrics", "aiperf server metrics")
	case r.Backend.PublishEvents != nil && *r.Backend.PublishEvents:
		return r.unsupported("backend.publish_events_and_metrics", "TRT-LLM event publishing")
	case r.Backend.Type == "trtllm" && r.Frontend.Type != "" && r.Frontend.Type != "dynamo" && r.Frontend.Type != "trtllm_serve":
		return r.unsupported("frontend.type", "TRT-LLM behind a non-Dynamo frontend")
	}
	if err := r.checkV2Supported(); err != nil {
		return err
	}
	return r.checkSrtctlTypes()
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// validRequestRate is what every client parses the same way: "inf" (as
// srtctl writes it) or a finite positive decimal number; the whole text must
// be the number ("5 per second" is not 5).
func validRequestRate(s string) bool {
	if s == "inf" {
		return true
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f > 0 && !math.IsInf(f, 0) && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r == '.' || r == 'e' || r == 'E' || r == '-' || r == '+')
	}) < 0
}

// checkMount checks a container mount "host:container[:ro|rw]" as pyxis and
// enroot take them: comma-joined into one list (so no comma), one word (no
// white space), absolute paths on both sides, three fields at most.
func checkMount(m string) error {
	if strings.ContainsAny(m, ", \t\n\r\x00") {
		return fmt.Errorf("contains a comma, white space or NUL, which a container mount list cannot carry")
	}
	parts := strings.Split(m, ":")
	switch {
	case len(parts) < 2 || len(parts) > 3:
		return fmt.Errorf("want host:/container/path[:ro|:rw], got %d fields", len(parts))
	case !strings.HasPrefix(parts[0], "/"):
		return fmt.Errorf("host path %q must be absolute (relative to what, on the compute node?)", parts[0])
	case !strings.HasPrefix(parts[1], "/"):
		return fmt.Errorf("container path %q must be absolute", parts[1])
	case len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw":
		return fmt.Errorf("option %q is not ro or rw", parts[2])
	}
	return nil
}

// CheckName validates a recipe or run name: it becomes a Slurm job name and
// a directory name, so no '/', NUL, white space or leading dot, and at most
// 128 bytes.
func CheckName(s string) error {
	switch {
	case s == "":
		return errors.New("empty name")
	case len(s) > 128:
		return fmt.Errorf("%d bytes long; at most 128", len(s))
	case strings.HasPrefix(s, ".") || strings.HasPrefix(s, "-"):
		return fmt.Errorf("%q must not start with '.' or '-'", s)
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-+", c)) {
			return fmt.Errorf("%q contains %q; use letters, digits and . _ - +", s, c)
		}
	}
	return nil
}

// distinct is xs without repeats, in first-seen order.
func distinct(xs []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
