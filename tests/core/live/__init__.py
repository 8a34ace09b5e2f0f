"""Tests of gpufleet.core.live."""
