"""Integration tests of `gpufleet serve`, the headless pipeline, as a real subprocess."""
