"""The interface every sampler backend (nvml, sim) implements.

The sampling loop owns the clock and the sequence numbers; a backend only answers "what are
the values now". Tiers (per tick, every few seconds, every minute, once) are the backend's
business except for process lists, which the loop asks for every ``procs_interval`` seconds
because they are the costliest call.
"""

from typing import Any, Dict, List


class Backend(object):
    """Base class: subclasses override every method."""

    name = "base"

    def hello(self) -> Dict[str, Any]:
        """Static facts for ``hello``: ``host`` (dict) and ``gpus`` (list of dicts with
        ``index``, ``uuid``, ``name``, ``pci_bus_id``, ``nominal`` and ``unsupported``)."""
        raise NotImplementedError

    def tick(self, mono: float) -> List[List[Any]]:
        """One sample row per GPU: ``[index, *values in protocol.COLUMNS order]``.

        ``mono`` is the loop's monotonic time (simulated under ``--no-wait``); rates are
        computed from counter deltas over it or over NVML's own timestamps."""
        raise NotImplementedError

    def procs(self, mono: float) -> List[Dict[str, Any]]:
        """The processes on all GPUs, each a dict with ``protocol.PROC_KEYS``."""
        raise NotImplementedError

    def links(self, mono: float) -> List[List[Any]]:
        """Per-link NVLink rows (``protocol.LINK_COLUMNS``) read since the last call, one per
        GPU with NVLink links, or [] when none are due. The backend reads them on its medium
        tier (every ``links_interval`` seconds); the loop asks after every tick and sends a
        ``links`` message when there are rows. The default: no NVLink, nothing to send."""
        return []

    def watch_links(self, seconds: float, mono: float) -> None:
        """Someone looks at the per-link NVLink values (the laptop's per-link view is open, or
        it evaluates a link alert) for the next ``seconds``: read them at the period they are
        wanted at even where the CPU plan stretched them. The default: nothing to do."""

    def events(self, mono: float) -> List[Dict[str, Any]]:
        """Events since the last call (Xid, ECC / remap changes, lost GPUs, notes), each a
        dict with ``type``, ``gpu`` (index or None), optional ``code``, and ``message``."""
        raise NotImplementedError

    def info(self) -> Dict[str, Any]:
        """The inventory, for ``info``."""
        raise NotImplementedError

    def check(self) -> Dict[str, Any]:
        """The start-of-rental health facts, for ``check`` (facts only; verdicts are the
        laptop's)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release NVML / stop simulated processes."""
