"""Tests of the whole running app (gpufleet.ui.app)."""
