"""Tests of gpufleet.core.text."""
