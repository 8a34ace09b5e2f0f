"""Tests of gpufleet_sampler.procs."""
