"""The evidence bundle of a comparison: one zip a provider's support can read on its own.

``a.jsonl`` and ``b.jsonl`` are both windows' data as the sampler sent it (the protocol,
docs/protocol.md: hello first), ``comparison.json`` the verdict and the causes with their
numbers (the ``gpufleet compare --format json`` interface), ``per_gpu.csv`` each compared
GPU's figures in A and B, ``summary.txt`` the same in words, and ``plots/*.png`` where the
GUI passes a renderer (Qt-free here, as ``bundle.py``).
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import orjson

from gpufleet.core.verdicts.compare import Comparison
from gpufleet.core.verdicts.compare.report import as_json, text_lines
from gpufleet.core.verdicts.window import RunWindow
from gpufleet.core.wire.encode import encode_line

README = (
    "gpufleet comparison of two runs: A (the reference) and B (the run in question).\n"
    "summary.txt       the verdict, the estimate and each cause with A's and B's values\n"
    "comparison.json   the same as data (docs/cli.md, 'gpufleet compare')\n"
    "per_gpu.csv       per GPU: throughput factors and the figures behind them, A and B\n"
    "a.jsonl, b.jsonl  every sample, process list and event of both windows, one JSON\n"
    "                  object a line as the sampler wrote them (first line: the GPU inventory)\n"
)


def _stream(w: RunWindow) -> bytes:
    return b"".join(encode_line(m) for m in w.messages())


def per_gpu_csv(c: Comparison) -> str:
    keys = sorted({k for r in [*c.runs_a.values(), *c.runs_b.values()] for k in r.fig})
    buf = io.StringIO()
    out = csv.writer(buf)
    out.writerow(["gpu", "window", "rate", *keys])
    for g in c.gpus:
        for label, runs in (("A", c.runs_a), ("B", c.runs_b)):
            r = runs[g]
            out.writerow([g, label, f"{r.mean_rate:.4f}", *(r.fig.get(k, "") for k in keys)])
    return buf.getvalue()


def write_compare_bundle(
    path: Path,
    a: RunWindow,
    b: RunWindow,
    c: Comparison,
    render_plots: Callable[[], Mapping[str, bytes]] | None = None,
) -> Path:
    """Write the zip (see the module docstring) and return its path."""
    plots = render_plots() if render_plots else {}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("README.txt", README)
        z.writestr("summary.txt", "\n".join(text_lines(c)) + "\n")
        z.writestr("comparison.json", orjson.dumps(as_json(c), option=orjson.OPT_INDENT_2))
        z.writestr("per_gpu.csv", per_gpu_csv(c))
        z.writestr("a.jsonl", _stream(a))
        z.writestr("b.jsonl", _stream(b))
        for name, data in plots.items():
            z.writestr(f"plots/{name}", data)
    return path
