"""Tests of gpufleet_sampler.backends.nvml."""
