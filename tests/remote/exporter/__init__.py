"""Tests of gpufleet_sampler.exporter."""
