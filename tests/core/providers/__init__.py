"""Tests of gpufleet.core.providers."""
