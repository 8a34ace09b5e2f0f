"""Tests of gpufleet.core.alerts."""
