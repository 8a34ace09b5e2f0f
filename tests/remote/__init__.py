"""Tests of the sampler (remote/gpufleet_sampler), one folder per part."""
