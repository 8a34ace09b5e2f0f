"""Tests of the sampler's arrival benchmark (gpufleet_sampler.benchmark)."""
