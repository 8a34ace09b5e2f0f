"""Findings: the structured verdicts of the health check and of a diagnosis.

A finding holds data only (an id, a verdict, the GPU, the values and the time window it rests
on); ``gpufleet.core.text.catalogue.finding_sentence`` turns it into a sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

# Typed as the vocabulary, not as their own literals: ``FAIL if x else WARN`` and a variable
# set from them stay a Verdict, so code that picks a verdict needs no annotation.
Verdict = Literal["pass", "warn", "fail", "info"]
PASS: Final[Verdict] = "pass"
WARN: Final[Verdict] = "warn"
FAIL: Final[Verdict] = "fail"
INFO: Final[Verdict] = "info"
VERDICT_RANK: Final = {PASS: 0, INFO: 0, WARN: 1, FAIL: 2}


@dataclass(frozen=True)
class Finding:
    """``id`` names what was checked or found (it picks the sentence); ``verdict`` is pass,
    warn or fail (``info`` for diagnosis context); ``values`` the evidence; ``t0``/``t1`` the
    window the evidence comes from (diagnosis)."""

    id: str
    verdict: Verdict
    gpu: int | None
    values: Mapping[str, Any] = field(default_factory=dict)
    t0: float | None = None
    t1: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "verdict": self.verdict,
            "gpu": self.gpu,
            "values": dict(self.values),
            "t0": self.t0,
            "t1": self.t1,
        }


def worst(findings: Sequence[Finding]) -> Verdict:
    """The worst verdict of a list (``pass`` for an empty one)."""
    best: Verdict = PASS
    for f in findings:
        if VERDICT_RANK.get(f.verdict, 0) > VERDICT_RANK[best]:
            best = f.verdict
    return best
