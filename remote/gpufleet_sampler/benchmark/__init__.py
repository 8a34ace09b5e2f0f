"""The arrival benchmark (``gpufleet_sampler bench``): is this the card that was paid for?

A bounded measurement run once, on request, never by the long-lived sampler: dense matmul
throughput, HBM bandwidth on buffers far larger than L2, pinned host<->device copies and
peer copies, with the card's clocks, power, temperature and clock reasons sampled while it
runs. It uses what the instance already has (PyTorch, else the CUDA driver through ctypes,
else nothing) and installs nothing. The laptop judges the figures (core/verdicts/arrival).

Layout: ``supervisor`` (the subcommand: spawns the worker in a process group of its own and
ends that group on a cancel or past the time bound), ``worker`` (the measurement plan),
``engines`` (torch), ``cudadrv`` (libcuda through ctypes), ``simcards`` (the demo's cards),
``telemetry`` (NVML during the run). Python 3.8, stdlib only at import.
"""

BENCH_VERSION = 1

KIND_START = "bench_start"
KIND_PROGRESS = "bench_progress"
KIND_RESULT = "bench_result"
KIND_SKIP = "bench_skip"
KIND_REFUSED = "bench_refused"
KIND_TELEMETRY = "bench_telemetry"
KIND_END = "bench_end"
KINDS = (
    KIND_START,
    KIND_PROGRESS,
    KIND_RESULT,
    KIND_SKIP,
    KIND_REFUSED,
    KIND_TELEMETRY,
    KIND_END,
)

METRICS = (
    "matmul_bf16_tflops",
    "matmul_fp16_tflops",
    "matmul_tf32_tflops",
    "hbm_gbps",
    "h2d_gbps",
    "d2h_gbps",
    "p2p_gbps",
)

# Exit statuses of the subcommand besides 0 (done) and 2 (usage).
EXIT_CANCELLED = 3
EXIT_TIMEOUT = 4
EXIT_FAILED = 1


class Unmeasured(Exception):
    """A metric this instance cannot measure; the message says why (shown to the user)."""
