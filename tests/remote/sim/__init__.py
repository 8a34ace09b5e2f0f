"""Tests of gpufleet_sampler.sim."""
