"""Text: every sentence gpufleet says, in one catalogue."""

# The sentences of later features join the catalogue's tables on import of the package, so
# that whoever words an alert or a finding has them (``judgment`` imports ``catalogue``).
from gpufleet.core.text import judgment as _judgment

LATER_TEXTS = (_judgment,)
