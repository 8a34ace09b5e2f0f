"""Tests of the GUI (gui/gpufleet/ui) on Qt offscreen, one folder per layer."""
