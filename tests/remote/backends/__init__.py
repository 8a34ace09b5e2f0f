"""Tests of gpufleet_sampler.backends (nvml/: the NVML backend through the fake pynvml)."""
