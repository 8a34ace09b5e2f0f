"""What the arrival benchmark says on the wire, shared with the laptop (Python 3.8, stdlib).

The benchmark payload (``gpufleet_sampler.benchmark``) prints JSON lines of these kinds with
these metric names, and the laptop (``gpufleet.core.verdicts.arrival``, the bench dialog)
reads them: one vocabulary for both sides, like ``protocol`` for the sampler's stream, so the
laptop needs nothing of the payload itself (the import contracts keep it out).
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
