"""Tests of gpufleet.ui.dialogs."""
