"""Tests of gpufleet.core.wire."""
