"""Tests of gpufleet_sampler.loop."""
