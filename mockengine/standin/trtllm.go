package standin

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// llmapiLaunch is trtllm-llmapi-launch: every MPI task of the worker's srun
// runs it; the task of rank 0 runs the command, the others serve the
// leader's MPI session until the step ends. The rank comes from
// SLURM_PROCID, else OMPI_COMM_WORLD_RANK, PMI_RANK or PMI_ID, else 0 (the
// launcher script's order, tensorrt_llm/llmapi/trtllm-llmapi-launch, as a
// copy of it in the index reads it).
func llmapiLaunch(ctx context.Context, o Options) error {
	if len(o.Args) == 0 {
		return usagef("no command to launch")
	}
	rank := "0"
	for _, k := range []string{"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMI_ID"} {
		if v := o.Getenv(k); v != "" {
			rank = v
			break
		}
	}
	if _, err := strconv.Atoi(rank); err != nil {
		return usagef("MPI rank %q is not a number", rank)
	}
	if rank != "0" {
		fmt.Fprintf(o.Log, "trtllm-llmapi-launch (stand-in): rank %s serves the leader's MPI session\n", rank)
		<-ctx.Done()
		return nil
	}
	fmt.Fprintf(o.Log, "trtllm-llmapi-launch (stand-in): rank 0 runs %q\n", o.Args)
	if o.Exec != nil {
		return o.Exec(o.Args)
	}
	path, err := lookPath(o.Args[0], o.Getenv("PATH"))
	if err != nil {
		return err
	}
	return syscall.Exec(path, o.Args, os.Environ()) //nolint:gosec // the launcher's job is to run its argument
}

func lookPath(name, path string) (string, error) {
	if filepath.IsAbs(name) {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("trtllm-llmapi-launch: %s: not found in PATH", name)
}

// trtllmServeFlags are `trtllm-serve [serve] MODEL`'s options
// (tensorrt_llm/commands/serve.py@00209af1, the serve command's click
// options; --served_model_name is what srtctl passes newer releases).
var trtllmServeFlags = flagSpec{
	"--tokenizer": 1, "--custom_tokenizer": 1, "--host": 1, "--port": 1, "--backend": 1,
	"--custom_module_dirs": 1, "--log_level": 1, "--max_beam_width": 1, "--max_batch_size": 1,
	"--max_num_tokens": 1, "--max_seq_len": 1,
	"--tensor_parallel_size": 1, "--tp_size": 1, "--pipeline_parallel_size": 1, "--pp_size": 1,
	"--context_parallel_size": 1, "--cp_size": 1, "--moe_expert_parallel_size": 1, "--ep_size": 1,
	"--moe_cluster_parallel_size": 1, "--cluster_size": 1, "--gpus_per_node": 1,
	"--free_gpu_memory_fraction": 1, "--kv_cache_free_gpu_memory_fraction": 1,
	"--num_postprocess_workers": 1, "--trust_remote_code": 0, "--revision": 1,
	"--config": 1, "--extra_llm_api_options": 1, "--reasoning_parser": 1, "--tool_parser": 1,
	"--metadata_server_config_file": 1, "--server_role": 1,
	"--fail_fast_on_attention_window_too_large": 0, "--otlp_traces_endpoint": 1,
	"--disagg_cluster_uri": 1, "--enable_chunked_prefill": 0, "--media_io_kwargs": 1,
	"--chat_template": 1, "--served_model_name": 1,
}

// trtllmDisaggFlags are `trtllm-serve disaggregated`'s options (the same
// file's disaggregated command: -c/--config_file, which srtctl's
// trtllm_serve.py passes as --config, the spelling of later releases).
var trtllmDisaggFlags = flagSpec{
	"-c": 1, "--config_file": 1, "--config": 1, "-m": 1, "--metadata_server_config_file": 1,
	"-t": 1, "--server_start_timeout": 1, "-r": 1, "--request_timeout": 1,
	"-l": 1, "--log_level": 1, "--metrics-log-interval": 1,
}

// trtllmServe is `trtllm-serve MODEL ...` (serve is the default command)
// or `trtllm-serve disaggregated ...`.
func trtllmServe(ctx context.Context, o Options) error {
	args := o.Args
	if len(args) > 0 && args[0] == "disaggregated" {
		return trtllmDisaggregated(ctx, o, args[1:])
	}
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	var model string
	got, err := parseFlags(args, trtllmServeFlags, func(a string) error {
		if model != "" {
			return usagef("got unexpected extra argument (%s)", a)
		}
		model = a
		return nil
	})
	if err != nil {
		return err
	}
	if model == "" {
		return usagef("missing argument 'MODEL'")
	}
	// The engine YAML is read as the real server reads it (yaml.safe_load
	// of a mapping): a file the job did not write, or wrote wrong, fails.
	if cfg := last(got, "--config", "--extra_llm_api_options"); cfg != "" {
		var m map[string]any
		if err := readYAML(cfg, &m); err != nil {
			return fmt.Errorf("--config: %w", err)
		}
	}
	host, port := last(got, "--host"), last(got, "--port")
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "8000"
	}
	if _, err := strconv.Atoi(port); err != nil {
		return usagef("--port: %q is not a valid integer", port)
	}
	// OpenAIServer names the model after the checkpoint directory, and
	// answers requests naming any model.
	name := last(got, "--served_model_name")
	if name == "" {
		name = model
		if st, err := os.Stat(model); err == nil && st.IsDir() {
			name = filepath.Base(model)
		}
	}
	opts, err := engineOptions(o, name)
	if err != nil {
		return err
	}
	opts.AnyModel = true
	return serveEngine(ctx, opts, net.JoinHostPort(host, port))
}

// serConfig is the part of ser.yaml the orchestrator routes by
// (tensorrt_llm/llmapi/disagg_utils.py parse_disagg_config_file's keys).
type serConfig struct {
	Hostname string `yaml:"hostname"`
	Port     int    `yaml:"port"`
	Context  struct {
		NumInstances int      `yaml:"num_instances"`
		URLs         []string `yaml:"urls"`
	} `yaml:"context_servers"`
	Generation struct {
		NumInstances int      `yaml:"num_instances"`
		URLs         []string `yaml:"urls"`
	} `yaml:"generation_servers"`
}

// trtllmDisaggregated is the orchestrator: it reads ser.yaml, waits for
// every listed server's /health (server_start_timeout), then serves the
// OpenAI API on hostname:port, sending each request's prefill to a context
// server and its generation to a generation server.
func trtllmDisaggregated(ctx context.Context, o Options, args []string) error {
	got, err := parseFlags(args, trtllmDisaggFlags, nil)
	if err != nil {
		return err
	}
	file := last(got, "-c", "--config_file", "--config")
	if file == "" {
		return usagef("no config file (-c/--config_file)")
	}
	var ser serConfig
	if err := readYAML(file, &ser); err != nil {
		return err
	}
	if len(ser.Context.URLs) == 0 || len(ser.Generation.URLs) == 0 {
		return fmt.Errorf("%s: context_servers and generation_servers must each list urls", file)
	}
	for _, s := range []struct {
		n    int
		urls []string
		key  string
	}{{ser.Context.NumInstances, ser.Context.URLs, "context_servers"}, {ser.Generation.NumInstances, ser.Generation.URLs, "generation_servers"}} {
		if s.n != len(s.urls) {
			return fmt.Errorf("%s: %s.num_instances is %d but urls lists %d", file, s.key, s.n, len(s.urls))
		}
	}
	if ser.Port <= 0 {
		return fmt.Errorf("%s: port: want a port number, got %d", file, ser.Port)
	}
	timeout := 180
	if t := last(got, "-t", "--server_start_timeout"); t != "" {
		if timeout, err = strconv.Atoi(t); err != nil {
			return usagef("--server_start_timeout: %q is not a valid integer", t)
		}
	}
	r := &pdRouter{name: "trtllm-serve disaggregated", log: o.Log,
		prefill: httpURLs(ser.Context.URLs), decode: httpURLs(ser.Generation.URLs)}
	return r.run(ctx, net.JoinHostPort(ser.Hostname, strconv.Itoa(ser.Port)), timeout)
}

// httpURLs turns ser.yaml's host:port entries into base URLs.
func httpURLs(hostports []string) []string {
	out := make([]string, len(hostports))
	for i, h := range hostports {
		out[i] = "http://" + h
	}
	return out
}

func readYAML(path string, into any) error {
	b, err := readlimit.ReadFile(path, 1<<20)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
