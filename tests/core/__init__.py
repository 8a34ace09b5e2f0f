"""Tests of the app's Qt-free core: one folder per stage of gui/gpufleet/core, and cli/ for the
command line."""
