"""Text: every sentence gpufleet says, in one catalogue."""
