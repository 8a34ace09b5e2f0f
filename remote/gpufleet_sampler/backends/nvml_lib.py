"""pynvml, imported once for every part of the NVML backend: the parts read ``N`` here, so
that a test (or the bench) installs a fake pynvml by setting ``nvml_lib.N`` alone.

Python 3.8, stdlib + pynvml only.
"""

from typing import Optional

try:
    import pynvml as N

    IMPORT_ERROR: Optional[str] = None
except ImportError as _e:  # pragma: no cover - exercised only where pynvml is missing
    N = None
    IMPORT_ERROR = str(_e)


class NvmlUnavailable(RuntimeError):
    """NVML cannot be used here (no pynvml, no driver, no GPU); the text says which."""


__all__ = ["IMPORT_ERROR", "N", "NvmlUnavailable"]
