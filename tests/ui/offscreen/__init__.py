"""Tests of gpufleet.ui.offscreen."""
