"""The arrival benchmark (``gpufleet_sampler bench``): is this the card that was paid for?

A bounded measurement run once, on request, never by the long-lived sampler: dense matmul
throughput, HBM bandwidth on buffers far larger than L2, pinned host<->device copies and
peer copies, with the card's clocks, power, temperature and clock reasons sampled while it
runs. It uses what the instance already has (PyTorch, else the CUDA driver through ctypes,
else nothing) and installs nothing. The laptop judges the figures (core/verdicts/arrival).

Layout: ``supervisor`` (the subcommand: spawns the worker in a process group of its own and
ends that group on a cancel or past the time bound), ``worker`` (the measurement plan),
``engines`` (torch), ``cudadrv`` (libcuda through ctypes), ``simcards`` (the demo's cards),
``telemetry`` (NVML during the run). Python 3.8, stdlib only at import. The message kinds,
metric names and exit statuses are in ``gpufleet_sampler.bench_protocol``, shared with the
laptop.
"""


class Unmeasured(Exception):
    """A metric this instance cannot measure; the message says why (shown to the user)."""
