"""The one sentence under each tab's plots, computed from the series on screen (Qt-free).

Each function takes plain NumPy arrays and nominal values, so it is tested without a display.
Sentences say what the data shows and, where it matters, what it means for the user's job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
from gpufleet_sampler import protocol
from PySide6.QtCore import QCoreApplication

from gpufleet.core.alerts.throttle import reason_bits
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP

# lupdate extracts translate("Context", "text") calls.
translate = QCoreApplication.translate

F64 = npt.NDArray[np.float64]
# The reasons as the sentences name them (protocol.REASON_BITS' long names).
_LABEL = {
    0x1: QT_TRANSLATE_NOOP("Sentences", "GPU idle"),
    0x2: QT_TRANSLATE_NOOP("Sentences", "applications clocks setting"),
    0x4: QT_TRANSLATE_NOOP("Sentences", "SW power cap"),
    0x8: QT_TRANSLATE_NOOP("Sentences", "HW slowdown"),
    0x10: QT_TRANSLATE_NOOP("Sentences", "sync boost"),
    0x20: QT_TRANSLATE_NOOP("Sentences", "SW thermal slowdown"),
    0x40: QT_TRANSLATE_NOOP("Sentences", "HW thermal slowdown"),
    0x80: QT_TRANSLATE_NOOP("Sentences", "HW power brake"),
    0x100: QT_TRANSLATE_NOOP("Sentences", "display clock setting"),
}
assert set(_LABEL) == {bit for bit, _, _ in protocol.REASON_BITS}


# Reasons that mean "slower than it could be" (idle, app clocks and display are not).
_SLOWING = 0x04 | 0x08 | 0x20 | 0x40 | 0x80


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return translate("Sentences", "{n} s").format(n=f"{seconds:.0f}")
    if seconds < 5400:
        return translate("Sentences", "{n} min").format(n=f"{seconds / 60:.0f}")
    return translate("Sentences", "{n} h").format(n=f"{seconds / 3600:.1f}")


def _dominant_reason(masks: F64) -> int:
    m = reason_bits(masks)  # NaN counts as no reason
    best, count = 0, 0
    for bit in (0x40, 0x20, 0x08, 0x80, 0x04):
        c = int(np.count_nonzero(m & bit))
        if c > count:
            best, count = bit, c
    return best


def clocks_sentence(
    gpus: Sequence[int],
    clocks: Mapping[int, F64],
    reasons: Mapping[int, F64],
    temps: Mapping[int, F64],
    max_clock: Mapping[int, float | None],
    interval_s: float,
) -> str:
    """Which GPU ran below its max clock, for how long, why; or that none did."""
    worst: tuple[float, int, float, int] | None = None  # (slow seconds, gpu, deficit, reason)
    for g in gpus:
        r = reasons.get(g)
        c = clocks.get(g)
        if r is None or c is None or not len(r):
            continue
        slow = (reason_bits(r) & _SLOWING) != 0  # a NaN mask is no reason
        n = int(slow.sum())
        if not n:
            continue
        mx = max_clock.get(g)
        cs = c[slow & np.isfinite(c)] if len(c) == len(r) else c[np.isfinite(c)]
        deficit = 1.0 - float(np.mean(cs)) / mx if mx and len(cs) else 0.0
        cand = (n * interval_s, g, deficit, _dominant_reason(r[slow]))
        if worst is None or cand[:1] > worst[:1]:
            worst = cand
    if worst is None:
        finite = [c[np.isfinite(c)] for c in clocks.values() if len(c)]
        vals = np.concatenate(finite) if finite else np.empty(0)
        if not len(vals):
            return translate("Sentences", "No clock samples in this window yet.")
        if round(float(vals.min())) == round(float(vals.max())):
            return translate(
                "Sentences",
                "No GPU was throttled in this window: SM clocks steady at {value} MHz.",
            ).format(value=f"{vals.min():.0f}")
        return translate(
            "Sentences",
            "No GPU was throttled in this window: SM clocks {lo}–{hi} MHz. Clocks below the "
            "max with no reason shown are the GPU idling or boosting normally.",
        ).format(lo=f"{vals.min():.0f}", hi=f"{vals.max():.0f}")
    secs, g, deficit, bit = worst
    why = translate("Sentences", _LABEL.get(bit, QT_TRANSLATE_NOOP("Sentences", "a clock event")))
    t_now = temps.get(g)
    temp_txt = ""
    if t_now is not None and len(t_now) and np.isfinite(t_now).any():
        last = float(t_now[np.isfinite(t_now)][-1])
        others = [
            float(temps[o][np.isfinite(temps[o])][-1])
            for o in gpus
            if o != g and o in temps and len(temps[o]) and np.isfinite(temps[o]).any()
        ]
        temp_txt = (
            translate("Sentences", " It is at {t} °C, the others {lo}–{hi} °C.").format(
                t=f"{last:.0f}", lo=f"{min(others):.0f}", hi=f"{max(others):.0f}"
            )
            if others
            else translate("Sentences", " It is at {t} °C.").format(t=f"{last:.0f}")
        )
    hint = ""
    if bit in (0x20, 0x40):
        hint = translate(
            "Sentences",
            " A cooling problem on this machine, not your code: ask the provider to move you.",
        )
    elif bit == 0x04:
        hint = translate(
            "Sentences",
            " The power cap holds the clock: check the enforced limit on Thermal &amp; power.",
        )
    elif bit in (0x08, 0x80):
        hint = translate(
            "Sentences",
            " HW slowdown or power brake usually means a power supply or temperature fault.",
        )
    pct = (
        translate("Sentences", "{pct} % below its max clock").format(pct=f"{deficit * 100:.0f}")
        if deficit > 0.005
        else translate("Sentences", "at reduced clocks")
    )
    return (
        translate("Sentences", "GPU {gpu} has run {how} for {duration} because of {why}.").format(
            gpu=g, how=pct, duration=_minutes(secs), why=why
        )
        + temp_txt
        + hint
    )


def thermal_sentence(
    gpus: Sequence[int],
    temps: Mapping[int, F64],
    slowdown: Mapping[int, float | None],
    power: Mapping[int, F64],
    limit: Mapping[int, F64],
    default: Mapping[int, float | None],
    mem_temps: Mapping[int, F64] | None = None,
    mem_max: Mapping[int, float | None] | None = None,
) -> str:
    parts = []
    # HBM at its own limit first: it throttles there, whatever the GPU's core reads (the
    # demo's h100-a GPU 5 said only "peaked at 87 °C" while its memory sat at 95 °C).
    mem_hot = []
    for g, mt in (mem_temps or {}).items():
        mm = (mem_max or {}).get(g)
        if mm and mt is not None and np.isfinite(mt).any() and float(np.nanmax(mt)) >= mm - 2:
            mem_hot.append((float(np.nanmax(mt)) - mm, g, float(np.nanmax(mt)), mm))
    if mem_hot:
        _, g, peak, mm = max(mem_hot)
        parts.append(
            translate(
                "Sentences",
                "GPU {gpu}'s memory reached {peak} °C, at its limit of {limit} °C: the memory "
                "throttles there; ask the provider to check the cooling.",
            ).format(gpu=g, peak=f"{peak:.0f}", limit=f"{mm:.0f}")
        )
    hot = []
    for g in gpus:
        t = temps.get(g)
        sd = slowdown.get(g)
        if t is None or not np.isfinite(t).any() or not sd:
            continue
        margin = sd - float(np.nanmax(t))
        if margin < 5:
            hot.append((margin, g, float(np.nanmax(t)), sd))
    if hot:
        margin, g, peak, sd = min(hot)
        parts.append(
            translate(
                "Sentences", "GPU {gpu} peaked at {peak} °C, right at its slowdown point."
            ).format(gpu=g, peak=f"{peak:.0f}")
            if round(margin) == 0  # "0 °C below" reads as a bug
            else (
                translate(
                    "Sentences",
                    "GPU {gpu} peaked at {peak} °C, {margin} °C above its slowdown point "
                    "of {sd} °C.",
                )
                if margin < 0
                else translate(
                    "Sentences",
                    "GPU {gpu} peaked at {peak} °C, {margin} °C below its slowdown point "
                    "of {sd} °C.",
                )
            ).format(gpu=g, peak=f"{peak:.0f}", margin=f"{abs(margin):.0f}", sd=f"{sd:.0f}")
        )
    capped = []
    for g in gpus:
        lim = limit.get(g)
        dflt = default.get(g)
        if lim is None or not dflt or not np.isfinite(lim).any():
            continue
        cur = float(lim[np.isfinite(lim)][-1])
        if cur < dflt * 0.97:
            capped.append((cur, g, dflt))
    if capped:
        cur, g, dflt = min(capped)
        parts.append(
            translate(
                "Sentences",
                "GPU {gpu}'s enforced power limit is {limit} W, below the card's default "
                "{default} W: expect about {pct} % less throughput under full load.",
            ).format(
                gpu=g,
                limit=f"{cur:.0f}",
                default=f"{dflt:.0f}",
                pct=f"{100 * (1 - cur / dflt):.0f}",
            )
        )
    if not parts:
        vals = [t[np.isfinite(t)] for t in temps.values() if len(t)]
        allv = np.concatenate(vals) if vals else np.empty(0)
        if not len(allv):
            return translate("Sentences", "No temperature samples in this window yet.")
        pw = [p[np.isfinite(p)] for p in power.values() if len(p)]
        pv = np.concatenate(pw) if pw else np.empty(0)
        ptxt = (
            translate("Sentences", ", power {lo}–{hi} W").format(
                lo=f"{pv.min():.0f}", hi=f"{pv.max():.0f}"
            )
            if len(pv)
            else ""
        )
        return translate(
            "Sentences",
            "Temperatures {lo}–{hi} °C, well below the slowdown points{power}; power limits "
            "are at their defaults.",
        ).format(lo=f"{allv.min():.0f}", hi=f"{allv.max():.0f}", power=ptxt)
    return " ".join(parts)


def memory_sentence(
    gpus: Sequence[int], used: Mapping[int, F64], total: Mapping[int, float | None]
) -> str:
    rows = []
    for g in gpus:
        u = used.get(g)
        tot = total.get(g)
        if u is None or not tot or not np.isfinite(u).any():
            continue
        rows.append((float(u[np.isfinite(u)][-1]) / tot, g, float(u[np.isfinite(u)][-1]), tot))
    if not rows:
        return translate("Sentences", "No memory samples in this window yet.")
    frac, g, cur, tot = max(rows)
    if cur < 0.05 * 2**30:  # "uses the most memory: 0.0 of 80 GiB" says nothing
        return translate(
            "Sentences", "No GPU holds memory: all {total} GiB of each GPU are free."
        ).format(total=f"{tot / 2**30:.0f}")
    idle = [r for r in rows if r[0] < 0.10]
    txt = translate(
        "Sentences", "GPU {gpu} uses the most memory: {used} of {total} GiB ({pct} %)."
    ).format(gpu=g, used=f"{cur / 2**30:.1f}", total=f"{tot / 2**30:.0f}", pct=f"{frac * 100:.0f}")
    if frac > 0.95:
        txt += translate(
            "Sentences", " Close to full: an allocation spike will fail with out-of-memory."
        )
    if idle and len(idle) < len(rows):
        n = len(idle)
        txt += (
            translate("Sentences", " {n} GPUs hold less than 10 %: idle capacity you pay for.")
            if n > 1
            else translate("Sentences", " {n} GPU holds less than 10 %: idle capacity you pay for.")
        ).format(n=n)
    return txt


def pcie_sentence(
    gpus: Sequence[int],
    gen: Mapping[int, float | None],
    width: Mapping[int, float | None],
    max_gen: Mapping[int, float | None],
    max_width: Mapping[int, float | None],
) -> str:
    narrow = []
    silent = []  # a lost GPU reports no link at all: never "full generation and width"
    for g in gpus:
        w, mw = width.get(g), max_width.get(g)
        ge, mg = gen.get(g), max_gen.get(g)
        if w is None and ge is None:
            silent.append(g)
        elif w and mw and w < mw:
            narrow.append(
                translate("Sentences", "GPU {gpu} runs at x{w} of x{max}").format(
                    gpu=g, w=f"{w:.0f}", max=f"{mw:.0f}"
                )
            )
        elif ge and mg and ge < mg:
            narrow.append(
                translate("Sentences", "GPU {gpu} at Gen{gen} of Gen{max}").format(
                    gpu=g, gen=f"{ge:.0f}", max=f"{mg:.0f}"
                )
            )
    if narrow:
        return translate("Sentences", "; ").join(narrow[:3]) + translate(
            "Sentences",
            ". A narrower link halves host↔GPU bandwidth; a lower generation at idle is "
            "normal power saving, under load it is a riser or slot problem.",
        )
    if silent and len(silent) < len(gpus):
        return translate(
            "Sentences",
            "GPU {gpus} reports no PCIe link state (a lost GPU reports none: see its alert); "
            "the other links run at their full generation and width.",
        ).format(gpus=", ".join(str(g) for g in silent))
    if silent:
        return translate(
            "Sentences", "No GPU reports its PCIe link state here: it cannot be judged."
        )
    return translate(
        "Sentences",
        "PCIe links run at their full generation and width. TX is GPU→host, RX host→GPU; "
        "NVLink carries GPU↔GPU traffic, against each GPU's nominal bandwidth.",
    )
