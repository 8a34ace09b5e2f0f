"""Tests of gpufleet.ui.desktop."""
