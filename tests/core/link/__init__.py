"""Tests of gpufleet.core.link."""
