"""Tests of gpufleet.core.verdicts."""
