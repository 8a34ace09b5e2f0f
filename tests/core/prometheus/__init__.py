"""Tests of gpufleet.core.prometheus."""
