"""Tests of gpufleet_sampler.daemon."""
