"""Text: every sentence gpufleet says, by what it words (format, alerts, findings, cost,
reasons), gathered under one name in ``catalogue``."""

# The sentences of later features join the tables on import of the package, so that whoever
# words an alert or a finding has them (``judgment`` imports ``catalogue``).
from gpufleet.core.text import judgment as _judgment

LATER_TEXTS = (_judgment,)
