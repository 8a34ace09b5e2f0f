"""Tests of gpufleet.core.config."""
