"""Reading a hello entry's kind: NVML's virtualization number or a name, MIG slices and how
they are counted and labelled; the health check on the H200's recorded check output names
its pass-through (NVML sends the number 1)."""

from __future__ import annotations

import json

from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts.health import evaluate_check
from gpufleet.core.wire.gpu_kind import (
    count_units,
    mig_slice,
    order_key,
    short_index,
    virtualization_name,
)
from gpufleet.core.wire.messages import GpuInfo
from gpufleet_sampler import protocol

from tests.support.paths import ROOT


def test_virtualization_names() -> None:
    assert [virtualization_name(i) for i in range(5)] == list(
        ("none", "passthrough", "vgpu", "host_vgpu", "host_vsga")
    )
    assert virtualization_name("Pass-Through") == "passthrough"
    assert virtualization_name("VGPU") == "vgpu" and virtualization_name("None") == "none"
    assert virtualization_name(9) is None and virtualization_name(True) is None
    assert virtualization_name("weird") is None and virtualization_name(None) is None


def _gpu(index: int, mig: dict[str, object] | None = None) -> GpuInfo:
    extra = {protocol.MIG_KEY: mig} if mig is not None else {}
    return GpuInfo(index, f"GPU-{index}", "H100", "", {}, {}, extra)


def test_slices_are_counted_instead_of_their_card_and_sorted_under_it() -> None:
    gpus = [_gpu(0), _gpu(1)] + [
        _gpu(protocol.mig_index(0, k), {"parent": 0, "slot": k, "profile": "1g.10gb"})
        for k in range(3)
    ]
    assert count_units(gpus) == (4, 3)  # GPU 1 and the three slices of GPU 0
    s = mig_slice(gpus[4])
    assert s is not None and (s.parent, s.slot, s.profile) == (0, 2, "1g.10gb")
    assert mig_slice(gpus[1]) is None and mig_slice(None) is None
    slices = {g.index: sl for g in gpus if (sl := mig_slice(g)) is not None}
    order = sorted((g.index for g in gpus), key=lambda i: order_key(i, slices))
    assert order == [0, 100, 101, 102, 1]
    assert [short_index(i) for i in order] == ["0", "0·0", "0·1", "0·2", "1"]


def test_recorded_h200_check_names_its_pass_through() -> None:
    facts = json.loads((ROOT / "docs" / "device" / "h200-check.json").read_text())
    assert facts["gpus"][0]["virtualization_mode"] == 1
    (f,) = [f for f in evaluate_check(facts) if f.id == "virtualization"]
    assert f.verdict == "pass" and "passthrough" in finding_sentence(f)
