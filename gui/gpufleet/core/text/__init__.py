"""Text: every sentence gpufleet says, by what it words (format, alerts, findings, cost,
reasons), gathered under one name in ``catalogue``."""
