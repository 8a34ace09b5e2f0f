"""``gpufleet screenshot --tab bench``: the benchmark dialog on the demo's ``h100-a`` (its hot
GPU 5 below par), rendered offscreen for the docs. The simulator's cards run the real
payload through the local link, twice, into a throwaway history, so the dialog shows a
result with the host's earlier run beside it; the user's demo history is not touched."""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication

from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.pipeline.bench import run_bench
from gpufleet.ui.dialogs.bench import BenchDialog

SHOT_HOST = "h100-a"
SHOT_SECONDS = 3.0


def render_bench(out: Path, size: tuple[int, int]) -> Path:
    """Run the demo benchmark and save the dialog showing it as ``out/bench.png``."""
    host = next(h for h in demo_hosts() if h.name == SHOT_HOST)
    fleet = Fleet([host], demo=True)
    with tempfile.TemporaryDirectory() as tmp:
        history = Path(tmp) / "history.sqlite"
        result = {}
        for _ in range(2):
            result = run_bench(fleet, host, history, lambda _m: None, lambda _n: None,
                               None, SHOT_SECONDS)  # fmt: skip
    dialog = BenchDialog(None, SHOT_HOST, lambda _m, _c: result)
    dialog.resize(min(size[0], dialog.width()), min(size[1], dialog.height()))
    dialog.show_result(result)
    dialog.status.setText(dialog.tr("Done. The result is kept in the history with the host."))
    dialog.show()
    app = QApplication.instance()
    assert app is not None
    for _ in range(3):
        app.processEvents()
    path = out / "bench.png"
    if not dialog.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    dialog.close()
    return path
