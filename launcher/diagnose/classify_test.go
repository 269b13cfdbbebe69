package diagnose

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Log tails as the engines print them. Lines are joined with "\n"; a
// tail's first line is line 1.

// sglangCUDAGraph ends with the CUDA-graph exception from the issue text,
// after a chained traceback whose first exception matches nothing.
const sglangCUDAGraph = `[2025-06-10 08:12:01 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=20.51 GB, mem usage=56.42 GB.
[2025-06-10 08:12:02 TP0] KV Cache is allocated. #tokens: 401408, KV size: 12.13 GB
[2025-06-10 08:12:03 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=6.98 GB
[2025-06-10 08:12:03 TP0] Capture cuda graph bs [1, 2, 4, 8, 16, 24, 32]
Capturing batches (bs=32 avail_mem=6.90 GB):   0%|          | 0/7 [00:00<?, ?it/s]
[2025-06-10 08:12:05 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 476, in capture
    ) = self.capture_one_batch_size(bs, forward)
        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/local/lib/python3.12/dist-packages/torch/utils/_contextlib.py", line 116, in decorate_context
    return func(*args, **kwargs)
RuntimeError: add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 372, in __init__
    raise Exception(
Exception: Capture cuda graph failed: add(): functions with out=... arguments don't support automatic differentiation
Possible solutions:
1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)
2. set --cuda-graph-max-bs to a smaller value (e.g., 16)
3. disable torch compile by not using --enable-torch-compile
4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)

[2025-06-10 08:12:05] Received sigquit from a child process. It usually means the child failed.`

// sglangOOM ends with the OOM line from the issue text.
const sglangOOM = `[2025-06-10 09:00:00 TP3] Load weight begin. avail mem=78.50 GB
[2025-06-10 09:00:40 TP3] INFO scheduler: error_rate=0 num_errors=0 retries=0
[2025-06-10 09:01:10 TP3] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 310, in load_model
    self.model = get_model(model_config=self.model_config, load_config=self.load_config)
  File "/usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py", line 1340, in convert
    return t.to(
           ^^^^^
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB
[2025-06-10 09:01:10] Received sigquit from a child process. It usually means the child failed.`

// graphThenOOM: a capture failure reported first, an OOM later; the OOM
// is the cause.
const graphThenOOM = `[2025-06-10 08:12:05 TP1] Capture cuda graph failed at bs=64, retrying with a smaller graph
[2025-06-10 08:12:06 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 372, in __init__
    raise Exception(
Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.11 GiB of which 1.02 GiB is free.`

// ncclTimeout is a decode rank whose peer died: torch's watchdog fires.
// The [W ...] barrier warning and NCCL INFO lines appear in healthy runs.
const ncclTimeout = `node-3:412:412 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
[rank3]:[W1203 10:12:31.000000000 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 3]  using GPU 3 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.
[2025-12-03 10:12:40 DP3 TP3] Decode batch. #running-req: 64, #token: 90112, token usage: 0.22, gen throughput (token/s): 2431.11, #queue-req: 0
[rank3]:[E1203 10:22:31.123456789 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=7168, NumelOut=7168, Timeout(ms)=600000) ran for 600047 milliseconds before timing out.
[rank3]:[E1203 10:22:31.124000000 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 3] Exception (either an error or timeout) detected by watchdog at work: 12, last enqueued NCCL work: 12, last completed NCCL work: 11.
terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout`

// dynamoImport: frames from frozen modules have no source line, so the
// exception line right after them must still count.
const dynamoImport = `Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "/opt/dynamo/venv/lib/python3.12/site-packages/dynamo/sglang/__main__.py", line 4, in <module>
    from dynamo.sglang.main import main
ModuleNotFoundError: No module named 'dynamo._core'`

const attributeError = `Traceback (most recent call last):
  File "<string>", line 1, in <module>
AttributeError: module 'sglang.srt.utils' has no attribute 'get_ip'`

const portInUse = `INFO:     Started server process [5012]
INFO:     Waiting for application startup.
INFO:     Application startup complete.
ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use
INFO:     Waiting for application shutdown.`

const modelMissing = `[2025-06-10 07:59:58] server_args=ServerArgs(model_path='/models/dsr1-fp4', log_level='info', ...)
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/transformers/configuration_utils.py", line 718, in _get_config_dict
    resolved_config_file = cached_file(pretrained_model_name_or_path, configuration_file)
OSError: /models/dsr1-fp4 does not appear to have a file named config.json. Checkout 'https://huggingface.co//models/dsr1-fp4/tree/None' for available files.`

// noiseThenError: INFO lines full of the word "error" and healthy-run
// warnings, then an error no class covers.
const noiseThenError = `[2025-06-10 08:00:00] INFO metrics: error_rate=0 errors=0 failed=0
[2025-06-10 08:00:00] server_args=ServerArgs(log_level='error', enable_error_log=True, ...)
[rank0]:[W1203 10:12:31.000000000 ProcessGroupNCCL.cpp:4115] using GPU 0 to perform barrier as devices used by this process are currently unknown.
[2025-06-10 08:00:01] Capture cuda graph begin. This can take up to several minutes.
[2025-06-10 08:00:09] Capture cuda graph end. Time elapsed: 8.1 s. mem usage=1.2 GB.
[2025-06-10 08:00:10] no errors while loading; ImportError count: 0
Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1200, in event_loop
    raise RuntimeError("Capture cuda graph failed: see above")
RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.`

// vllmPrefixed: vLLM prefixes every traceback line; a source line under a
// prefixed frame mentioning CUDA OOM must not count.
const vllmPrefixed = `(EngineCore_0 pid=1234) INFO 06-10 08:00:00 [core.py:60] Initializing a V1 LLM engine with config: model='/models/x'
(EngineCore_0 pid=1234) ERROR 06-10 08:00:09 [core.py:700] EngineCore failed to start.
(EngineCore_0 pid=1234) ERROR 06-10 08:00:09 [core.py:700] Traceback (most recent call last):
(EngineCore_0 pid=1234) ERROR 06-10 08:00:09 [core.py:700]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 691, in run_engine_core
(EngineCore_0 pid=1234) ERROR 06-10 08:00:09 [core.py:700]     raise RuntimeError("CUDA out of memory while profiling")
(EngineCore_0 pid=1234) ERROR 06-10 08:00:09 [core.py:700] ValueError: No available memory for the cache blocks.`

const unknownTraceback = `[2025-06-10 08:00:00] INFO loading
Traceback (most recent call last):
  File "/app/main.py", line 10, in <module>
    main()
  File "/app/main.py", line 7, in main
    cfg["missing"]
    ~~~^^^^^^^^^^^
KeyError: 'missing'`

const pyxisError = `slurmstepd: error: pyxis: container start failed with error code: 1
slurmstepd: error: pyxis: printing enroot log file:
slurmstepd: error: pyxis:     [ERROR] No such file or directory: /var/lib/enroot/x.sqsh`

const pyxisNoShell = `slurmstepd-node1: error: pyxis: container start failed with error code: 1
slurmstepd-node1: error: pyxis: printing enroot log file:
slurmstepd-node1: error: pyxis:     enroot-switchroot: failed to execute: /bin/sh: No such file or directory
slurmstepd-node1: error: pyxis: container was not started successfully by another task
slurmstepd-node1: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1
slurmstepd-node1: error: Failed to invoke spank plugin stack`

const pyxisNoSquash = `slurmstepd-node1: error: pyxis: child 14894 failed with error code: 1
slurmstepd-node1: error: pyxis: failed to create container filesystem for image: /srv/shared/img/mock.sqsh
slurmstepd-node1: error: pyxis: printing enroot log file:
slurmstepd-node1: error: pyxis:     [ERROR] No such file or directory: /srv/shared/img/mock.sqsh
slurmstepd-node1: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1
slurmstepd-node1: error: Failed to invoke spank plugin stack
srun: error: node1: task 0: Exited with exit code 1`

const enrootNoFuse = `[WARN] fuse: device not found, try 'modprobe fuse' first
[ERROR] Failed to mount: /srv/shared/squash/mock.sqsh
srun: error: node2: task 0: Exited with exit code 1`

func TestRuntimeLog(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      []string
	}{
		{"pyxis prints enroot's log", pyxisNoShell, []string{"enroot-switchroot: failed to execute: /bin/sh: No such file or directory"}},
		{"pyxis, enroot's [ERROR]", pyxisNoSquash, []string{"[ERROR] No such file or directory: /srv/shared/img/mock.sqsh"}},
		{"enroot start's own lines", enrootNoFuse, []string{"[WARN] fuse: device not found, try 'modprobe fuse' first", "[ERROR] Failed to mount: /srv/shared/squash/mock.sqsh"}},
		{"an engine log has none", sglangOOM, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RuntimeLog(strings.Split(tc.log, "\n"))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("RuntimeLog =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	var long []string
	for i := range 100 {
		long = append(long, fmt.Sprintf("[INFO] line %d", i))
	}
	if got := RuntimeLog(long); len(got) != maxRuntimeLog || got[len(got)-1] != "[INFO] line 99" {
		t.Errorf("RuntimeLog of 100 lines: %d lines ending %q, want the last %d", len(got), got[len(got)-1], maxRuntimeLog)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name  string
		log   string
		class Class
		first string // the whole FirstError
		line  int
	}{
		{"cuda graph (issue text)", sglangCUDAGraph, CUDAGraph,
			"Exception: Capture cuda graph failed: add(): functions with out=... arguments don't support automatic differentiation", 21},
		{"oom (issue text)", sglangOOM, CUDAOOM,
			"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB", 9},
		{"oom beats cuda graph, first line of the chosen class", graphThenOOM, CUDAOOM,
			"Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.11 GiB of which 1.02 GiB is free.", 5},
		{"nccl watchdog timeout", ncclTimeout, NCCL,
			"[rank3]:[E1203 10:22:31.123456789 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=7168, NumelOut=7168, Timeout(ms)=600000) ran for 600047 milliseconds before timing out.", 4},
		{"module not found after source-less frames", dynamoImport, PythonImport,
			"ModuleNotFoundError: No module named 'dynamo._core'", 6},
		{"attribute error", attributeError, PythonImport,
			"AttributeError: module 'sglang.srt.utils' has no attribute 'get_ip'", 3},
		{"port in use", portInUse, PortInUse,
			"ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use", 4},
		{"model missing", modelMissing, ModelMissing,
			"OSError: /models/dsr1-fp4 does not appear to have a file named config.json. Checkout 'https://huggingface.co//models/dsr1-fp4/tree/None' for available files.", 5},
		{"noise loses to the real error", noiseThenError, Unknown,
			"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", 10},
		{"prefixed traceback source is skipped", vllmPrefixed, Unknown,
			"(EngineCore_0 pid=1234) ERROR 06-10 08:00:09 [core.py:700] EngineCore failed to start.", 2},
		{"unknown traceback gives its exception line", unknownTraceback, Unknown,
			"KeyError: 'missing'", 8},
		{"slurm and pyxis error lines", pyxisError, ContainerRuntime,
			"slurmstepd: error: pyxis: container start failed with error code: 1", 1},
		{"no error at all", "INFO start\nINFO error_rate=0\nDecode batch. #running-req: 1", Unknown, "", 0},
		{"empty", "", Unknown, "", 0},
		// One line per signature not covered above.
		{"cuda oom runtime error", "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported", CUDAOOM, "RuntimeError: CUDA error: out of memory", 1},
		{"cublas alloc", "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", CUDAOOM, "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", 1},
		{"stream capture", "RuntimeError: CUDA error: operation not permitted when stream is capturing", CUDAGraph, "RuntimeError: CUDA error: operation not permitted when stream is capturing", 1},
		{"error during graph capture", "RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture.", CUDAGraph, "RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture.", 1},
		{"nccl error", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error", NCCL, "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error", 1},
		{"nccl warn", "node-1:77:90 [2] NCCL WARN NET/IB : Got async event : port error", NCCL, "node-1:77:90 [2] NCCL WARN NET/IB : Got async event : port error", 1},
		{"nccl internal", "ncclInternalError: Internal check failed.", NCCL, "ncclInternalError: Internal check failed.", 1},
		{"model dir missing", "FileNotFoundError: [Errno 2] No such file or directory: '/model/config.json'", ModelMissing, "FileNotFoundError: [Errno 2] No such file or directory: '/model/config.json'", 1},
		{"not a model identifier", "OSError: dsr1 is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'", ModelMissing, "OSError: dsr1 is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'", 1},
		{"repository not found", "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. Repository Not Found for url: https://huggingface.co/api/models/x.", ModelMissing, "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. Repository Not Found for url: https://huggingface.co/api/models/x.", 1},
		{"hf validation on a missing path", "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/models/dsr1'.", ModelMissing, "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/models/dsr1'.", 1},
		{"rust eaddrinuse", "Error: Os { code: 98, kind: AddrInUse, message: \"Address already in use\" }", PortInUse, "Error: Os { code: 98, kind: AddrInUse, message: \"Address already in use\" }", 1},
		{"import error", "ImportError: cannot import name 'flashinfer_allreduce' from 'sgl_kernel'", PythonImport, "ImportError: cannot import name 'flashinfer_allreduce' from 'sgl_kernel'", 1},
		{"fatal", "INFO ok\nfatal: unable to access '/workspace/.git'", Unknown, "fatal: unable to access '/workspace/.git'", 2},
		// Seen on the test cluster with enroot 4.1.2 and pyxis 0.24.0.
		{"pyxis: image without /bin/sh", pyxisNoShell, ContainerRuntime, "slurmstepd-node1: error: pyxis: container start failed with error code: 1", 1},
		{"pyxis: squash file missing", pyxisNoSquash, ContainerRuntime, "slurmstepd-node1: error: pyxis: child 14894 failed with error code: 1", 1},
		{"enroot start: no /dev/fuse", enrootNoFuse, ContainerRuntime, "[WARN] fuse: device not found, try 'modprobe fuse' first", 1},
		{"enroot import without the helpers' capabilities", "[INFO] Converting whiteouts...\nenroot-aufs2ovlfs: failed to set capabilities: Operation not permitted", ContainerRuntime, "enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted", 2},
		{"an engine's [ERROR] line is not enroot's", "[ERROR] request 17 timed out", Unknown, "", 0},
		// A failed setup step: the shim's own line names it, over whatever
		// the script printed (here a Python error of its pip install).
		{"setup script failed", "e2e-fail: the patch does not apply\nModuleNotFoundError: No module named 'pip'\nslurmbench: setup step 1 (bash /configs/patches/fix.sh): exit status 3", SetupFailed,
			"slurmbench: setup step 1 (bash /configs/patches/fix.sh): exit status 3", 3},
		{"dynamo install step failed, srun label", "0: slurmbench: setup step 2 (slurmbench dynamo-install --source wheel): exit status 1", SetupFailed,
			"0: slurmbench: setup step 2 (slurmbench dynamo-install --source wheel): exit status 1", 1},
		{"a setup banner alone is no failure", "slurmbench exec: w0 setup 1/1 on node1: bash /configs/x.sh\nsetup step 1 (of 2) done", Unknown, "", 0},
		{"python import loses to port in use", "ImportError: cannot import name 'x' from 'y'\nOSError: [Errno 98] Address already in use", PortInUse, "OSError: [Errno 98] Address already in use", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			if tt.log != "" {
				lines = strings.Split(tt.log, "\n")
			}
			got := Classify(lines)
			want := Diagnosis{Class: tt.class, FirstError: tt.first, Hint: tt.class.Hint(), Line: tt.line}
			if got != want {
				t.Errorf("Classify =\n%+v\nwant\n%+v", got, want)
			}
			if got.Line > 0 && strings.TrimSpace(lines[got.Line-1]) != got.FirstError {
				t.Errorf("Line %d is %q, not FirstError", got.Line, lines[got.Line-1])
			}
		})
	}
}

// TestClassifyTail runs a log file through Tail and Classify as the driver
// does, with the error followed by enough shutdown noise that a short tail
// would miss it.
func TestClassifyTail(t *testing.T) {
	var b strings.Builder
	for range 1000 {
		b.WriteString("[2025-06-10 08:00:00 TP0] Decode batch. #running-req: 3, #token: 400, token usage: 0.01\r\n")
	}
	b.WriteString(sglangOOM + "\n")
	for range 30 {
		b.WriteString("[2025-06-10 09:01:11] INFO shutting down\n")
	}
	lines, err := Tail(writeFile(t, b.String()), 200)
	if err != nil {
		t.Fatal(err)
	}
	d := Classify(lines)
	if d.Class != CUDAOOM || d.FirstError != "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB" {
		t.Errorf("Classify(Tail) = %+v", d)
	}
	if d.Line != 200-31 { // the OOM line is the last but one of sglangOOM
		t.Errorf("Line = %d, want %d", d.Line, 200-31)
	}
}

func TestHints(t *testing.T) {
	all := []Class{CUDAOOM, CUDAGraph, NCCL, ModelMissing, PortInUse, PythonImport,
		HealthDeadline, ExitedBeforeHealthy, DiedAfterHealthy, BenchmarkInvalid, Unknown}
	seen := map[string]Class{}
	for _, c := range all {
		h := c.Hint()
		if h == "" || strings.Contains(h, "\n") {
			t.Errorf("%s: hint %q is not one line", c, h)
		}
		if other, dup := seen[h]; dup {
			t.Errorf("%s and %s share the hint %q", c, other, h)
		}
		seen[h] = c
	}
	if got := Class("made_up").Hint(); got != Unknown.Hint() {
		t.Errorf("unknown class hint = %q", got)
	}
	for c, want := range map[Class]string{
		CUDAOOM:        "mem-fraction-static",
		HealthDeadline: "health_check.max_attempts",
		ModelMissing:   "[models]",
	} {
		if !strings.Contains(c.Hint(), want) {
			t.Errorf("%s hint %q lacks %q", c, c.Hint(), want)
		}
	}
}

func TestDiagnosisJSON(t *testing.T) {
	d := Classify(strings.Split(sglangOOM, "\n"))
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class":"cuda_oom","first_error":"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB","hint":"lower mem-fraction-static (sglang) / gpu-memory-utilization (vllm), or max-running-requests / cuda-graph-max-bs","line":9}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
}

func TestDiagnosisWith(t *testing.T) {
	d := Classify(strings.Split(unknownTraceback, "\n")).With(ExitedBeforeHealthy)
	want := Diagnosis{Class: ExitedBeforeHealthy, FirstError: "KeyError: 'missing'", Hint: ExitedBeforeHealthy.Hint(), Line: 8}
	if d != want {
		t.Errorf("With = %+v, want %+v", d, want)
	}
}

func BenchmarkClassify(b *testing.B) {
	lines := strings.Split(strings.Repeat(noiseThenError+"\n", 50), "\n") // 500 lines, no class matches
	for b.Loop() {
		Classify(lines)
	}
}
