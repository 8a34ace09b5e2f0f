"""Tests of the translations (gpufleet.ui.i18n)."""
