"""Tests of gpufleet.core.pipeline."""
