"""Tests of gpufleet.ui.tabs."""
