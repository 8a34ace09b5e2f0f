"""Tests of gpufleet_sampler.watchdog."""
