"""Tests of the command line (gpufleet.cli)."""
