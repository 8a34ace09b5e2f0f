"""Tests of gpufleet.core.history."""
