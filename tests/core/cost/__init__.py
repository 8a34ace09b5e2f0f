"""Tests of gpufleet.core.cost."""
