"""The arrival benchmark in words: its progress lines, the verdict line and the side-by-side
table (measured, good card, datasheet, advertised) of ``gpufleet bench`` and the GUI; the
verdicts' reasons worded from their structured form (``bench_reasons``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet_sampler.bench_protocol import (
    KIND_REFUSED,
    KIND_RESULT,
    KIND_SKIP,
    KIND_START,
    METRICS,
)

from gpufleet.core.text.bench_reasons import reason_of
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, translated
from gpufleet.core.text.sanitize import clean

VERDICT_WORDS = {
    "as_expected": QT_TRANSLATE_NOOP("Bench", "as expected"),
    "below_par": QT_TRANSLATE_NOOP("Bench", "below par"),
    "not_measured": QT_TRANSLATE_NOOP("Bench", "not measured"),
}
METRIC_WORDS = {
    "matmul_bf16_tflops": QT_TRANSLATE_NOOP("Bench", "BF16 matmul (TFLOPS)"),
    "matmul_fp16_tflops": QT_TRANSLATE_NOOP("Bench", "FP16 matmul (TFLOPS)"),
    "matmul_tf32_tflops": QT_TRANSLATE_NOOP("Bench", "TF32 matmul (TFLOPS)"),
    "hbm_gbps": QT_TRANSLATE_NOOP("Bench", "Memory bandwidth (GB/s)"),
    "h2d_gbps": QT_TRANSLATE_NOOP("Bench", "Host to GPU copy (GB/s)"),
    "d2h_gbps": QT_TRANSLATE_NOOP("Bench", "GPU to host copy (GB/s)"),
    "p2p_gbps": QT_TRANSLATE_NOOP("Bench", "GPU to GPU copy (GB/s)"),
}
HEADERS = (
    QT_TRANSLATE_NOOP("Bench", "Measured"),
    QT_TRANSLATE_NOOP("Bench", "Good card"),
    QT_TRANSLATE_NOOP("Bench", "Datasheet"),
    QT_TRANSLATE_NOOP("Bench", "Advertised"),
)
_STARTED = QT_TRANSLATE_NOOP(
    "Bench", "Benchmark started with {engine} on GPU {gpus} ({seconds} s)."
)
_RESULT = QT_TRANSLATE_NOOP("Bench", "GPU {gpu}: {metric} {value}")
_SKIP = QT_TRANSLATE_NOOP("Bench", "GPU {gpu}: {metric} not measured: {reason}")
_REFUSED = QT_TRANSLATE_NOOP("Bench", "GPU {gpu} refused: {reason}")
_HOST = QT_TRANSLATE_NOOP("Bench", "{host}: {verdict} ({reason})")
_GPU = QT_TRANSLATE_NOOP("Bench", "GPU {index} {name}: {verdict}: {reason}")
_NONE = QT_TRANSLATE_NOOP("Bench", "none")


def metric_word(metric: str) -> str:
    return translated("Bench", METRIC_WORDS.get(metric, metric))


def verdict_word(verdict: str) -> str:
    return translated("Bench", VERDICT_WORDS.get(verdict, verdict))


def progress_line(obj: Mapping[str, Any]) -> str | None:
    """A line for the terminal as the benchmark goes, or None for lines not worth one."""
    kind = obj.get("kind")
    if kind == KIND_START:
        gpus = ", ".join(str(g) for g in obj.get("measured_gpus") or []) or translated(
            "Bench", _NONE
        )
        return translated("Bench", _STARTED).format(
            engine=clean(str(obj.get("engine"))), gpus=gpus, seconds=f"{obj.get('seconds', 0):g}"
        )
    if kind == KIND_RESULT:
        return translated("Bench", _RESULT).format(
            gpu=obj.get("gpu"),
            metric=metric_word(str(obj.get("metric"))),
            value=f"{obj.get('value')}",
        )
    if kind == KIND_SKIP:
        return translated("Bench", _SKIP).format(
            gpu=obj.get("gpu"), metric=metric_word(str(obj.get("metric"))),
            reason=clean(str(obj.get("reason"))),
        )  # fmt: skip
    if kind == KIND_REFUSED:
        return translated("Bench", _REFUSED).format(
            gpu=obj.get("gpu"), reason=clean(str(obj.get("message")))
        )
    return None


def verdict_line(result: Mapping[str, Any]) -> str:
    return translated("Bench", _HOST).format(
        host=clean(str(result["host"])), verdict=verdict_word(result["verdict"]),
        reason=reason_of(result),
    )  # fmt: skip


def _cell(v: Any) -> str:
    return f"{v:.1f}" if isinstance(v, int | float) else "-"


def bench_table(result: Mapping[str, Any]) -> str:
    """Per GPU: its verdict and reason, then one row per metric with the four references."""
    lines = []
    for g in result.get("gpus", []):
        lines.append(translated("Bench", _GPU).format(
            index=g["index"], name=clean(str(g["name"])), verdict=verdict_word(g["verdict"]),
            reason=reason_of(g),
        ))  # fmt: skip
        if not g.get("measured"):
            continue
        head = [translated("Bench", h) for h in HEADERS]
        lines.append(f"    {'':28} {head[0]:>10} {head[1]:>10} {head[2]:>10} {head[3]:>10}")
        ad = g.get("advertised") or {}
        for m in METRICS:
            if m not in g["measured"]:
                continue
            lines.append(
                f"    {metric_word(m):28} {_cell(g['measured'][m]):>10} "
                f"{_cell(g['good_card'].get(m)):>10} {_cell(g['datasheet'].get(m)):>10} "
                f"{_cell(ad.get(m)):>10}"
            )
    return "\n".join(lines)


_HOST_LINE = QT_TRANSLATE_NOOP("Bench", "Benchmark {when}: {verdict} ({reason})")
_NEVER = QT_TRANSLATE_NOOP(
    "Bench", "Not benchmarked yet: Hosts → Benchmark the selected host… measures what it delivers."
)
_MINUTES_AGO = QT_TRANSLATE_NOOP("Bench", "{n} min ago")
_HOURS_AGO = QT_TRANSLATE_NOOP("Bench", "{n} h ago")
_DAYS_AGO = QT_TRANSLATE_NOOP("Bench", "{n} days ago")


def _ago(seconds: float) -> str:
    if seconds < 3600:
        return translated("Bench", _MINUTES_AGO).format(n=max(0, int(seconds // 60)))
    if seconds < 2 * 86400:
        return translated("Bench", _HOURS_AGO).format(n=int(seconds // 3600))
    return translated("Bench", _DAYS_AGO).format(n=int(seconds // 86400))


def host_bench_line(result: Mapping[str, Any] | None, t: float | None, now: float) -> str:
    """One line for the host's tooltip and card: its latest benchmark, or how to run one."""
    if result is None:
        return translated("Bench", _NEVER)
    when = _ago(now - t) if t is not None else ""
    return translated("Bench", _HOST_LINE).format(
        when=when, verdict=verdict_word(str(result.get("verdict"))),
        reason=reason_of(result),
    )  # fmt: skip


def share_of_good(measured: Any, good: Any) -> str:
    """ "87 %" of a good card, or "-" when either is missing."""
    if isinstance(measured, int | float) and isinstance(good, int | float) and good > 0:
        return f"{measured / good * 100:.0f} %"
    return "-"


_OFFER = QT_TRANSLATE_NOOP(
    "Bench",
    "Is this the card you paid for? 'gpufleet bench {host}' measures what it delivers "
    "(about a minute; or check --bench).",
)


def bench_offer(host: str) -> str:
    """After the check of a host never benchmarked: the command that answers it."""
    return translated("Bench", _OFFER).format(host=clean(host))
