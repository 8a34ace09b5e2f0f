"""What kind of GPU a ``hello`` entry is: a whole card, a MIG slice of one, a vGPU guest.

MIG slices travel as GPUs of their own (``protocol.mig_index``) with a ``mig`` object in their
``hello`` entry; these helpers read it, so the views can list a slice under its parent and
count slices rather than cards. The virtualization mode arrives as NVML's number from the
NVML sampler (``nvmlDeviceGetVirtualizationMode``: 1 = pass-through) and as a name from the
sim and nvidia-smi ("passthrough", "Pass-Through"): ``virtualization_name`` makes one name of
either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gpufleet_sampler import protocol

from gpufleet.core.wire.messages import GpuInfo

# nvmlGpuVirtualizationMode_t, in NVML's order.
VIRT_NAMES: Final = ("none", "passthrough", "vgpu", "host_vgpu", "host_vsga")
_ALIASES: Final = {
    "pass-through": "passthrough",
    "pass_through": "passthrough",
    "bare metal": "none",
    "n/a": "none",
    "vgpu guest": "vgpu",
}


def virtualization_name(mode: Any) -> str | None:
    """ "none" | "passthrough" | "vgpu" | "host_vgpu" | "host_vsga", or None when unknown."""
    if isinstance(mode, bool) or mode is None:
        return None
    if isinstance(mode, int):
        return VIRT_NAMES[mode] if 0 <= mode < len(VIRT_NAMES) else None
    if isinstance(mode, str):
        low = mode.strip().lower()
        low = _ALIASES.get(low, low)
        return low if low in VIRT_NAMES else None
    return None


@dataclass(frozen=True)
class Slice:
    """A MIG slice's facts from its ``hello`` entry."""

    index: int
    parent: int
    slot: int
    profile: str | None
    sm_count: int | None
    sm_share: float | None


def mig_slice(info: GpuInfo | None) -> Slice | None:
    """The slice facts of a ``hello`` GPU entry, or None for a whole card."""
    if info is None:
        return None
    m = info.extra.get(protocol.MIG_KEY)
    if not isinstance(m, Mapping) or not isinstance(m.get("parent"), int):
        return None
    slot = m.get("slot")
    sms = m.get("sm_count")
    share = m.get("sm_share")
    profile = m.get("profile")
    return Slice(
        index=info.index,
        parent=int(m["parent"]),
        slot=int(slot) if isinstance(slot, int) else info.index % protocol.MIG_INDEX_BASE,
        profile=str(profile) if isinstance(profile, str) else None,
        sm_count=int(sms) if isinstance(sms, int) else None,
        sm_share=float(share) if isinstance(share, (int, float)) else None,
    )


def order_key(index: int, slices: Mapping[int, Slice]) -> tuple[int, int]:
    """Sort key that lists a slice right under its parent GPU."""
    s = slices.get(index)
    return (s.parent, s.slot + 1) if s is not None else (index, 0)


def count_units(gpus: Sequence[GpuInfo]) -> tuple[int, int]:
    """(GPUs a job can be given, of which MIG slices): a GPU in MIG mode counts as its slices,
    not as one more card."""
    slices = [s for s in (mig_slice(g) for g in gpus) if s is not None]
    split = {s.parent for s in slices}
    cards = [g for g in gpus if mig_slice(g) is None and g.index not in split]
    return len(cards) + len(slices), len(slices)


def short_index(index: int) -> str:
    """How a GPU's index reads in a narrow column: "3", or "0·2" for slice 2 of GPU 0."""
    if index >= protocol.MIG_INDEX_BASE:
        return f"{index // protocol.MIG_INDEX_BASE - 1}·{index % protocol.MIG_INDEX_BASE}"
    return str(index)
