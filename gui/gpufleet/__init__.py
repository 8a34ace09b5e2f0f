"""gpufleet: watch every GPU you rent, from your laptop."""

__version__ = "0.1.0"
