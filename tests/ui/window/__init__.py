"""Tests of gpufleet.ui.window."""
