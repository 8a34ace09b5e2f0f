"""gpufleet's remote sampler: reads NVML on a rented instance and streams JSON lines.

Runs on the instance with Python >= 3.8, the stdlib and pynvml only.
"""

__version__ = "0.1.0"
