"""Tests of gpufleet.core.fleet."""
