"""Tests of gpufleet.ui.controllers."""
