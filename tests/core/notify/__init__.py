"""Tests of gpufleet.core.notify."""
